#include "window/plan.h"

#include <stdexcept>

namespace sliceflow::window {

void Plan::validate() const {
  if (size <= 0 || slide <= 0) throw std::invalid_argument("window size and slide must be positive");
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
        throw std::invalid_argument("a cumulating window's max size must be a multiple of its step");
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
      throw std::invalid_argument(std::string(agg_fn_name(agg.fn)) + " needs an argument column");
    }
  }
}

int partial_columns(AggFn fn) {
  switch (fn) {
    case AggFn::Count:
    case AggFn::Min:
    case AggFn::Max:
      return 1;
    default:
      return 2;
  }
}

void plan_mismatch(const std::string& what) { throw std::invalid_argument("window kernel: " + what); }

AggFn agg_fn_from_name(const std::string& name) {
  if (name == "count") return AggFn::Count;
  if (name == "sum") return AggFn::Sum;
  if (name == "avg") return AggFn::Avg;
  if (name == "min") return AggFn::Min;
  if (name == "max") return AggFn::Max;
  if (name == "count_distinct") return AggFn::CountDistinct;
  if (name == "first_value") return AggFn::FirstValue;
  if (name == "last_value") return AggFn::LastValue;
  throw std::invalid_argument("unknown aggregate function '" + name + "'");
}

const char* agg_fn_name(AggFn fn) {
  switch (fn) {
    case AggFn::Count:
      return "count";
    case AggFn::Sum:
      return "sum";
    case AggFn::Avg:
      return "avg";
    case AggFn::Min:
      return "min";
    case AggFn::Max:
      return "max";
    case AggFn::CountDistinct:
      return "count_distinct";
    case AggFn::FirstValue:
      return "first_value";
    case AggFn::LastValue:
      return "last_value";
  }
  return "?";
}

}  // namespace sliceflow::window
