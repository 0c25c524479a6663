#include "changelog/plan.h"

#include <stdexcept>
#include <utility>

namespace sliceflow::changelog {

void Plan::validate() const {
  if (num_keys < 0) throw std::invalid_argument("changelog plan: negative number of key columns");
  if (op_column != -1 && op_column < num_keys) {
    throw std::invalid_argument("changelog plan: the op column cannot be a key column");
  }
  if (bundle_rows <= 0)
    throw std::invalid_argument("bundle_rows must be a positive number of rows");
  if (fold_rows <= 0) throw std::invalid_argument("fold_rows must be a positive number of rows");
  if (buckets <= 0) throw std::invalid_argument("buckets must be a positive number");
  for (const AggPlan& agg : aggs) {
    if (agg.arg < -1 || (agg.arg >= 0 && agg.arg < num_keys)) {
      throw std::invalid_argument("changelog plan: aggregate argument column out of range");
    }
    if (agg.arg == -1 && agg.fn != AggFn::Count) {
      throw std::invalid_argument(std::string(agg::agg_fn_name(agg.fn)) +
                                  " needs an argument column");
    }
    if (fold && agg.fn == AggFn::CountDistinct) {
      throw std::invalid_argument(
          "changelog plan: count_distinct cannot be folded before the shuffle");
    }
    if (fold && retracting() && agg.fn != AggFn::Count && agg.fn != AggFn::Sum &&
        agg.fn != AggFn::Avg) {
      throw std::invalid_argument(std::string("changelog plan: ") + agg::agg_fn_name(agg.fn) +
                                  " over a changelog cannot be folded before the shuffle");
    }
  }
}

const agg::StateLayout& delta_layout() {
  static const agg::StateLayout layout{agg::StateForm::Delta,
                                       "changelog kernel",
                                       "delta",
                                       {{"__bucket", arrow::Kind::Int32},
                                        {"__key", arrow::Kind::Binary},
                                        {"__n", arrow::Kind::Int64}}};
  return layout;
}

std::unique_ptr<arrow::Type> delta_schema(const Plan& plan,
                                          const std::vector<const arrow::Type*>& args) {
  return agg::state_schema(delta_layout(), plan.aggs, args);
}

Plan parse_plan(const agg::PlanFields& f) {
  Plan plan;
  plan.num_keys = f.int32("num_keys");
  plan.op_column = f.int32("op_column");
  plan.aggs = f.aggs();
  plan.mini_batch = f.boolean("mini_batch");
  plan.fold = f.boolean("fold");
  plan.fold_rows = f.int64("fold_rows");
  plan.bundle_rows = f.int64("bundle_rows");
  plan.buckets = f.int32("buckets");
  plan.ansi = f.boolean("ansi");
  plan.validate();
  return plan;
}

Emit emit_from_name(const std::string& emit) {
  if (emit == "changelog") return Emit::Changelog;
  if (emit == "final") return Emit::Final;
  throw std::invalid_argument("emit must be 'changelog' or 'final', not '" + emit + "'");
}

void plan_mismatch(const std::string& what) {
  throw std::invalid_argument("changelog kernel: " + what);
}

}  // namespace sliceflow::changelog
