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
      throw std::invalid_argument(std::string(agg::agg_fn_name(agg.fn)) + " needs an argument column");
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

}  // namespace sliceflow::window
