// What a window aggregation computes: the window, the key columns and the aggregates.
// Built from the dict that sliceflow.window.plan produces (docs/window-kernel.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "agg/agg_fn.h"
#include "agg/plan_fields.h"
#include "agg/state_schema.h"
#include "arrow/type.h"

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

// The plan that sliceflow.window.plan writes (docs/window-kernel.md, "Plan"), validated.
// Throws std::invalid_argument("window plan: ...") for a missing or mistyped field.
Plan parse_plan(const agg::PlanFields& fields);

// How many partial columns an aggregate writes (docs/window-kernel.md, "Partial schema").
inline int partial_columns(AggFn fn) {
  return agg::state_columns(agg::StateForm::SlicePartial, fn);
}
// __key and __slice come before the aggregates' partial columns.
constexpr int kFirstPartialColumn = 2;
// The partial schema's layout (docs/window-kernel.md, "Partial schema"): __key, __slice, then
// each aggregate's partial columns (agg::StateForm::SlicePartial). The local phase checks its
// partial schema with agg::check_state_schema, the sweep (which never sees the input) with
// agg::check_implied_schemas.
const agg::StateLayout& partial_layout();
// The partial schema of `plan` for its arguments' types (`args[a]`; nullptr: count(*)). Throws
// std::invalid_argument("window kernel: aggregate <i>: ...") for an argument type its function
// does not take.
std::unique_ptr<arrow::Type> partial_schema(const Plan& plan,
                                            const std::vector<const arrow::Type*>& args);
// The output's first aggregate column: window_start, window_end, window_time and the keys come
// before the aggregates'.
constexpr size_t kFirstOutputAggColumn = 3;
// Throws std::invalid_argument("window kernel: <what>"): schemas or batches that do not match
// the plan.
[[noreturn]] void plan_mismatch(const std::string& what);

}  // namespace sliceflow::window
