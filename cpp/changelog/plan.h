// What a changelog aggregation computes: the key columns, the op column and the aggregates
// (docs/changelog-kernel.md). Built from the dict that sliceflow.changelog.plan produces.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "agg/agg_fn.h"
#include "agg/plan_fields.h"
#include "agg/state_schema.h"
#include "arrow/type.h"

namespace sliceflow::changelog {

using agg::AggFn;
using agg::AggPlan;

struct Plan {
  int num_keys = 0;    // encoder input columns [0, num_keys) are the keys
  int op_column = -1;  // encoder input column of the op; -1: every row is an insert
  // arg: the encoder input column of the argument; -1: count(*)
  std::vector<AggPlan> aggs;
  bool mini_batch = true;
  // The encoder folds rows per key before the shuffle (local-global aggregation).
  bool fold = false;
  // Fold bound: the encoder flushes when this many input rows are folded.
  int64_t fold_rows = 200000;
  // A bundle is cut every bundle_rows delta rows.
  int64_t bundle_rows = 5000;
  int32_t buckets = 1;
  bool ansi = true;

  bool retracting() const { return op_column >= 0; }
  // Throws std::invalid_argument when the plan is inconsistent.
  void validate() const;
};

// The plan that sliceflow.changelog.plan writes (every field required), validated. Throws
// std::invalid_argument("changelog plan: ...") for a missing or mistyped field.
Plan parse_plan(const agg::PlanFields& fields);

// What the aggregator emits: every change of a key's row (+I, -U/+U, -D), or its final row.
enum class Emit : uint8_t { Changelog, Final };
// "changelog" or "final"; throws std::invalid_argument naming the value otherwise.
Emit emit_from_name(const std::string& emit);

// The delta columns an aggregate writes (docs/changelog-kernel.md, "Delta schema").
inline int delta_columns(AggFn fn) { return agg::state_columns(agg::StateForm::Delta, fn); }
// The first delta column: __bucket, __key, __n come before the aggregates'.
constexpr int kFirstAggColumn = 3;
// The delta schema's layout (docs/changelog-kernel.md, "Delta schema"): __bucket, __key, __n,
// then each aggregate's delta columns (agg::StateForm::Delta). The encoder checks its delta
// schema with agg::check_state_schema, the aggregator (which never sees the input) with
// agg::check_implied_schemas.
const agg::StateLayout& delta_layout();
// The delta schema of `plan` for its arguments' types (`args[a]`; nullptr: count(*)). Throws
// std::invalid_argument("changelog kernel: aggregate <i>: ...") for an argument type its
// function does not take.
std::unique_ptr<arrow::Type> delta_schema(const Plan& plan,
                                          const std::vector<const arrow::Type*>& args);

// Throws std::invalid_argument("changelog kernel: <what>").
[[noreturn]] void plan_mismatch(const std::string& what);

}  // namespace sliceflow::changelog
