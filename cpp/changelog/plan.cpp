#include "changelog/plan.h"

#include <stdexcept>
#include <utility>

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

std::unique_ptr<arrow::Type> delta_schema(const Plan& plan, const std::vector<const arrow::Type*>& args) {
  std::vector<std::unique_ptr<arrow::Type>> prefix;
  prefix.push_back(agg::column_type("__bucket", arrow::Kind::Int32, false));
  prefix.push_back(agg::column_type("__key", arrow::Kind::Binary, false));
  prefix.push_back(agg::column_type("__n", arrow::Kind::Int64, false));
  try {
    return agg::state_schema(agg::StateForm::Delta, std::move(prefix), plan.aggs, args);
  } catch (const agg::UnsupportedArgument& e) {
    plan_mismatch(e.what());
  }
}

void check_delta_schema(const Plan& plan, const std::vector<const arrow::Type*>& args, const arrow::Type& given) {
  const std::string diff = agg::schema_difference(*delta_schema(plan, args), given);
  if (!diff.empty()) plan_mismatch("the delta schema does not match the plan: " + diff);
}

void check_aggregator_schemas(const Plan& plan, const arrow::Type& delta, const arrow::Type& output) {
  const auto schema_of = [&plan](const std::vector<const arrow::Type*>& args) { return delta_schema(plan, args); };
  const std::string diff =
      agg::implied_schemas_difference(agg::StateForm::Delta, plan.aggs, schema_of, "delta", delta, kFirstAggColumn,
                                      output, 1 + static_cast<size_t>(plan.num_keys));
  if (!diff.empty()) plan_mismatch(diff);
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
  plan.fingerprint = f.string("fingerprint");
  plan.validate();
  return plan;
}

Emit emit_from_name(const std::string& emit) {
  if (emit == "changelog") return Emit::Changelog;
  if (emit == "final") return Emit::Final;
  throw std::invalid_argument("emit must be 'changelog' or 'final', not '" + emit + "'");
}

void plan_mismatch(const std::string& what) { throw std::invalid_argument("changelog kernel: " + what); }

}  // namespace sliceflow::changelog
