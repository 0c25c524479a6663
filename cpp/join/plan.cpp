#include "join/plan.h"

#include <stdexcept>
#include <string>

namespace sliceflow::join {

void Plan::validate() const {
  if (num_keys <= 0) throw std::invalid_argument("join plan: a join needs at least one key column");
  if (identity[kLeft] < 0 || identity[kRight] < 0)
    throw std::invalid_argument("join plan: negative number of identity columns");
  if (bundle_rows <= 0)
    throw std::invalid_argument("bundle_rows must be a positive number of rows");
}

Plan parse_plan(const agg::PlanFields& f) {
  Plan plan;
  plan.num_keys = f.int32("num_keys");
  plan.identity[kLeft] = f.int32("left_identity");
  plan.identity[kRight] = f.int32("right_identity");
  plan.retracting[kLeft] = f.boolean("left_retracting");
  plan.retracting[kRight] = f.boolean("right_retracting");
  const std::string& how = f.string("how");
  if (how == "inner") {
    plan.how = How::Inner;
  } else if (how == "left") {
    plan.how = How::Left;
  } else if (how == "right") {
    plan.how = How::Right;
  } else if (how == "full") {
    plan.how = How::Full;
  } else {
    throw std::invalid_argument("how must be 'inner', 'left', 'right' or 'full', not '" + how +
                                "'");
  }
  plan.mini_batch = f.boolean("mini_batch");
  plan.bundle_rows = f.int64("bundle_rows");
  plan.validate();
  return plan;
}

}  // namespace sliceflow::join
