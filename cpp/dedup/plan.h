// The plan of a deduplication (Flink SQL's ROW_NUMBER() = 1): which row of each key is kept,
// what orders the rows, whether the input retracts, and the bundle settings. Written by
// sliceflow.dedup.plan as a dict, parsed here (agg::PlanFields), so that the bindings, the C++
// tests and the fuzzer run the same checks. Cost: plan time only.
#pragma once

#include <cstdint>

#include "agg/plan_fields.h"

namespace sliceflow::dedup {

enum class Keep : uint8_t { First, Last };

struct Plan {
  // Kernel input columns, in this order: the key columns [0, num_keys), then the order column
  // (when `ordered`), then the identity columns (when `retracting`: the columns a retraction
  // is matched on), then the op column (the new rows' batch only, when `retracting`).
  int32_t num_keys = 0;
  bool ordered = false;
  bool retracting = false;
  int32_t num_identity = 0;
  Keep keep = Keep::First;
  bool mini_batch = true;
  int64_t bundle_rows = 5000;

  int32_t order_column() const { return ordered ? num_keys : -1; }
  int32_t first_identity() const { return num_keys + (ordered ? 1 : 0); }
  // Columns of the state batch; the new rows' batch has one more (the op) when retracting.
  int32_t state_columns() const { return first_identity() + (retracting ? num_identity : 0); }
  int32_t input_columns() const { return state_columns() + (retracting ? 1 : 0); }
  // keep="first" in arrival order over an insert-only input: append-only (+I once per key).
  bool append_only() const { return keep == Keep::First && !ordered && !retracting; }

  // Throws std::invalid_argument naming the field at fault.
  void validate() const;
};

// Reads and validates the plan fields (num_keys, ordered, retracting, num_identity, keep,
// mini_batch, bundle_rows).
Plan parse_plan(const agg::PlanFields& fields);

}  // namespace sliceflow::dedup
