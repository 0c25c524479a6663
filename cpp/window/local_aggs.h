// The local phase's accumulators: one array per aggregate, indexed by the bundle buffer's
// slot, folded a whole batch at a time (a pass per aggregate over the batch's slot numbers),
// and written out as partial columns (docs/window-kernel.md, "Partial schema").
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "arrow/builder.h"
#include "arrow/column_view.h"
#include "window/plan.h"

namespace sliceflow::window {

constexpr uint32_t kSkipRow = 0xFFFFFFFFu;

// An array indexed by slot: its first element and the bytes per slot.
struct SlotArray {
  const void* base;
  size_t stride;
};

class LocalAgg {
 public:
  virtual ~LocalAgg() = default;
  // Room for slots [0, slots).
  virtual void grow(size_t slots) = 0;
  // Folds row base + rows[k] of a batch into slot slots[k], for k < n; a slot's rows come in
  // row order. `arg` is the argument column (null for count(*)), `time` the event times.
  virtual void update(const arrow::ColumnView* arg, const arrow::ColumnView& time,
                      const uint32_t* rows, const uint32_t* slots, size_t n, int64_t base) = 0;
  // Called once before the slots are exported (in any order).
  virtual void prepare_export(size_t /*slots*/) {}
  // Adds the arrays export_slot reads a slot's accumulators from: a flush writes slots in
  // key order, at random places of the arrays, and loads them a few slots ahead.
  virtual void export_arrays(std::vector<SlotArray>& out) const = 0;
  // Appends slot's partial columns to out[0], out[1], ...
  virtual void export_slot(uint32_t slot, arrow::ColumnBuilder* const* out) = 0;
  virtual void clear() = 0;
  virtual size_t memory_usage() const = 0;
  // The partial columns this aggregate writes.
  virtual int num_columns() const = 0;
};

// `arg` is the argument column's layout (ignored for count(*)).
std::unique_ptr<LocalAgg> make_local_agg(const AggPlan& agg, const arrow::ColumnView* arg);

}  // namespace sliceflow::window
