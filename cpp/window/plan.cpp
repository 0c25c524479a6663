#include "window/plan.h"

#include <stdexcept>
#include <utility>

namespace sliceflow::window {

void Plan::validate() const {
  if (size <= 0 || slide <= 0)
    throw std::invalid_argument("window size and slide must be positive");
  switch (kind) {
    case WindowKind::Tumble:
      if (slide != size) throw std::invalid_argument("a tumbling window slides by its size");
      break;
    case WindowKind::Hop:
      if (slide > size) {
        throw std::invalid_argument("a hopping window's slide must not exceed its size");
      }
      break;
    case WindowKind::Cumulate:
      if (size % slide != 0) {
        throw std::invalid_argument(
            "a cumulating window's max size must be a multiple of its step");
      }
      break;
  }
  if (num_keys < 0) throw std::invalid_argument("negative number of key columns");
  if (bundle_rows <= 0 || bundle_bytes <= 0) {
    throw std::invalid_argument("bundle_rows and bundle_bytes must be positive");
  }
  for (const AggPlan& agg : aggs) {
    if (agg.arg < -1 || (agg.arg >= 0 && agg.arg <= num_keys)) {
      throw std::invalid_argument("aggregate argument column out of range");
    }
    if (agg.arg == -1 && agg.fn != AggFn::Count) {
      throw std::invalid_argument(std::string(agg::agg_fn_name(agg.fn)) +
                                  " needs an argument column");
    }
  }
}

const agg::StateLayout& partial_layout() {
  static const agg::StateLayout layout{
      agg::StateForm::SlicePartial,
      "window kernel",
      "partial",
      {{"__key", arrow::Kind::Binary}, {"__slice", arrow::Kind::Int64}}};
  return layout;
}

std::unique_ptr<arrow::Type> partial_schema(const Plan& plan,
                                            const std::vector<const arrow::Type*>& args) {
  return agg::state_schema(partial_layout(), plan.aggs, args);
}

Plan parse_plan(const agg::PlanFields& f) {
  Plan plan;
  const std::string& kind = f.string("kind");
  if (kind == "tumble") {
    plan.kind = WindowKind::Tumble;
  } else if (kind == "hop") {
    plan.kind = WindowKind::Hop;
  } else if (kind == "cumulate") {
    plan.kind = WindowKind::Cumulate;
  } else {
    throw std::invalid_argument("window plan: unknown kind '" + kind + "'");
  }
  plan.size = f.int64("size");
  plan.slide = f.int64("slide");
  plan.offset = f.int64("offset");
  plan.num_keys = f.int32("num_keys");
  plan.aggs = f.aggs();
  plan.ansi = f.boolean("ansi", plan.ansi);
  plan.bundle_rows = f.int64("bundle_rows", plan.bundle_rows);
  plan.bundle_bytes = f.int64("bundle_bytes", plan.bundle_bytes);
  plan.sort_partials = f.boolean("sort_partials", plan.sort_partials);
  plan.validate();
  return plan;
}

void plan_mismatch(const std::string& what) {
  throw std::invalid_argument("window kernel: " + what);
}

}  // namespace sliceflow::window
