// The global phase's per-aggregate window state for the key being swept. Slices arrive in
// time order (append / merge_last), enter the window when the window's end passes them and
// leave when its start does. Invertible aggregates keep one running accumulator and move it
// by retract-merge; the others use the two-stacks sliding-window aggregation, where every
// slice is combined O(1) times amortized, never a re-merge of the whole window.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "arrow/builder.h"
#include "arrow/column_view.h"
#include "arrow/type.h"
#include "window/plan.h"

namespace sliceflow::window {

struct SweepCounters {
  int64_t slices_merged = 0;      // slice accumulators merged into a window or a stack
  int64_t slices_retracted = 0;   // slice accumulators retracted from a window
  int64_t partials_combined = 0;  // two-stacks: front and back aggregates combined to answer
};

class WindowAgg {
 public:
  virtual ~WindowAgg() = default;
  // A new slice (the newest), from row `row` of the partial batch.
  virtual void append(const arrow::ColumnView& partials, int64_t row) = 0;
  // More of the newest slice (the same key and slice from another local bundle).
  virtual void merge_last(const arrow::ColumnView& partials, int64_t row) = 0;
  // The oldest slice not yet in the window enters it.
  virtual void enter() = 0;
  // The oldest slice in the window leaves it.
  virtual void leave() = 0;
  // Appends the window's value.
  virtual void emit(arrow::ColumnBuilder& out) = 0;
  // Forgets everything (the next key).
  virtual void clear() = 0;
  // TUMBLE with nothing pending: appends the value of a window made of row `row` alone, and
  // leaves the state (and the counters) as append, enter, emit and leave would.
  virtual void emit_single(const arrow::ColumnView& partials, int64_t row,
                           arrow::ColumnBuilder& out) {
    append(partials, row);
    enter();
    emit(out);
    leave();
  }
};

// The aggregate's partial columns (state) and output column, and:
struct WindowAggSpec : agg::AggColumns {
  bool retain = true;  // false (CUMULATE): slices never leave; entered slices are dropped
};

// `spec.state` and `spec.result` are the types window::partial_schema and agg::result_type
// give (GlobalAggregator checks its schemas against them before it makes its aggregates).
std::unique_ptr<WindowAgg> make_window_agg(const WindowAggSpec& spec, SweepCounters* counters);

}  // namespace sliceflow::window
