#include "dedup/plan.h"

#include <stdexcept>
#include <string>

namespace sliceflow::dedup {

void Plan::validate() const {
  if (num_keys < 0) throw std::invalid_argument("dedup plan: negative number of key columns");
  if (num_identity < 0)
    throw std::invalid_argument("dedup plan: negative number of identity columns");
  if (retracting && num_identity == 0) {
    throw std::invalid_argument("dedup plan: a retracting input needs identity columns");
  }
  if (bundle_rows <= 0)
    throw std::invalid_argument("bundle_rows must be a positive number of rows");
}

Plan parse_plan(const agg::PlanFields& f) {
  Plan plan;
  plan.num_keys = f.int32("num_keys");
  plan.ordered = f.boolean("ordered");
  plan.retracting = f.boolean("retracting");
  plan.num_identity = f.int32("num_identity");
  const std::string& keep = f.string("keep");
  if (keep == "first") {
    plan.keep = Keep::First;
  } else if (keep == "last") {
    plan.keep = Keep::Last;
  } else {
    throw std::invalid_argument("keep must be 'first' or 'last', not '" + keep + "'");
  }
  plan.mini_batch = f.boolean("mini_batch");
  plan.bundle_rows = f.int64("bundle_rows");
  plan.validate();
  return plan;
}

}  // namespace sliceflow::dedup
