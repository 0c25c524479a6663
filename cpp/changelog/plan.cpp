#include "changelog/plan.h"

#include <stdexcept>

namespace sliceflow::changelog {

void Plan::validate() const {
  if (num_keys < 0) throw std::invalid_argument("changelog plan: negative number of key columns");
  if (op_column != -1 && op_column < num_keys) {
    throw std::invalid_argument("changelog plan: the op column cannot be a key column");
  }
  if (bundle_rows <= 0) throw std::invalid_argument("bundle_rows must be a positive number of rows");
  if (fold_rows <= 0) throw std::invalid_argument("fold_rows must be a positive number of rows");
  if (buckets <= 0) throw std::invalid_argument("buckets must be a positive number");
  for (const AggPlan& agg : aggs) {
    if (agg.arg < -1 || (agg.arg >= 0 && agg.arg < num_keys)) {
      throw std::invalid_argument("changelog plan: aggregate argument column out of range");
    }
    if (agg.arg == -1 && agg.fn != AggFn::Count) {
      throw std::invalid_argument(std::string(agg::agg_fn_name(agg.fn)) + " needs an argument column");
    }
    if (fold && agg.fn == AggFn::CountDistinct) {
      throw std::invalid_argument("changelog plan: count_distinct cannot be folded before the shuffle");
    }
    if (fold && retracting() && agg.fn != AggFn::Count && agg.fn != AggFn::Sum && agg.fn != AggFn::Avg) {
      throw std::invalid_argument(
          std::string("changelog plan: ") + agg::agg_fn_name(agg.fn) +
          " over a changelog cannot be folded before the shuffle");
    }
  }
}

int delta_columns(AggFn fn) { return fn == AggFn::Sum || fn == AggFn::Avg ? 2 : 1; }

void plan_mismatch(const std::string& what) { throw std::invalid_argument("changelog kernel: " + what); }

}  // namespace sliceflow::changelog
