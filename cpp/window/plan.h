// What a window aggregation computes: the window, the key columns and the aggregates.
// Built from the dict that sliceflow.window_plan produces (docs/window-kernel.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agg/agg_fn.h"

namespace sliceflow::window {

using agg::AggFn;
using agg::AggPlan;

enum class WindowKind : uint8_t { Tumble, Hop, Cumulate };

struct Plan {
  WindowKind kind = WindowKind::Tumble;
  int64_t size = 0;    // µs; cumulate: max_size
  int64_t slide = 0;   // µs; tumble: size; cumulate: step
  int64_t offset = 0;  // µs
  int num_keys = 0;    // local input columns [0, num_keys) are the keys; num_keys is the time
  std::vector<AggPlan> aggs;
  bool ansi = true;
  int64_t bundle_rows = 200000;
  int64_t bundle_bytes = int64_t{64} << 20;
  // Flush partial rows grouped by key, slices ascending within a key (the global phase's input
  // order), so that one flush can feed the global phase without a sort.
  bool sort_partials = false;

  // Throws std::invalid_argument when the window is not one sliceflow can run.
  void validate() const;
};

// How many partial columns an aggregate writes (docs/window-kernel.md, "Partial schema").
int partial_columns(AggFn fn);
// Throws std::invalid_argument("window kernel: <what>"): schemas or batches that do not match
// the plan.
[[noreturn]] void plan_mismatch(const std::string& what);

}  // namespace sliceflow::window
