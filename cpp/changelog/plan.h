// What a changelog aggregation computes: the key columns, the op column and the aggregates
// (docs/changelog-kernel.md). Built from the dict that sliceflow.changelog_plan produces.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agg/agg_fn.h"

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

// The delta columns an aggregate writes (docs/changelog-kernel.md, "Delta schema").
int delta_columns(AggFn fn);
// The first delta column: __bucket, __key, __n come before the aggregates'.
constexpr int kFirstAggColumn = 3;

// Throws std::invalid_argument("changelog kernel: <what>").
[[noreturn]] void plan_mismatch(const std::string& what);

}  // namespace sliceflow::changelog
