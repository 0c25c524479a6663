// The global phase (runs in mapInArrow after the shuffle, on partial rows sorted by key and
// slice): merges the partials of each (key, slice), sweeps each key's slices in time order
// and fires its windows: a window is complete once a slice at or after its end arrives, or
// the key ends. Work per fired window is O(1) amortized: HOP and TUMBLE move by retract-merge
// (or two-stacks), CUMULATE merges each slice once into its cycle. Output is pulled in
// batches of at most max_output_rows, so memory is bounded by the live slices of one key
// plus one output batch, whatever the window size.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "arrow/builder.h"
#include "arrow/c_data.h"
#include "arrow/column_view.h"
#include "arrow/type.h"
#include "window/plan.h"
#include "window/slice_assigner.h"
#include "window/window_aggs.h"

namespace sliceflow::window {

struct GlobalStats {
  int64_t partials_in = 0;
  int64_t slices = 0;
  int64_t windows_fired = 0;
  int64_t windows_out_of_range = 0;  // windows whose bounds leave the int64 time line
  int64_t partials_carried = 0;      // streaming: rows kept for windows not fired yet
  SweepCounters sweep;
  // The counters by name, as the bindings' stats() dicts show them.
  std::vector<std::pair<const char*, int64_t>> named() const {
    return {{"partials_in", partials_in},
            {"slices", slices},
            {"windows_fired", windows_fired},
            {"windows_out_of_range", windows_out_of_range},
            {"partials_carried", partials_carried},
            {"slices_merged", sweep.slices_merged},
            {"slices_retracted", sweep.slices_retracted},
            {"partials_combined", sweep.partials_combined}};
  }
};

class GlobalAggregator {
 public:
  GlobalAggregator(Plan plan, std::unique_ptr<arrow::Type> partial_type,
                   std::unique_ptr<arrow::Type> output_type, int64_t max_output_rows);
  ~GlobalAggregator();

  // Queues a batch of partial rows; takes ownership of `array` (moved-from: released).
  // Input 1 (streaming): a second run of partial rows, itself sorted by (key bytes, slice),
  // merged with input 0 as the sweep goes; all of input 0 must be added before input 1, and
  // input 1 before the first pull().
  void add(const ArrowSchema& schema, ArrowArray* array, int input = 0);
  // Finished windows, at most max_output_rows of them; null when no more are ready.
  std::unique_ptr<ArrowArray> pull();
  // The end of the input: the last key's windows become ready.
  void finish() { finishing_ = true; }

  // Streaming: windows ending at or before `floor` were emitted by earlier micro-batches and
  // are not emitted again; windows ending after `limit` (the watermark) do not fire yet. The
  // rows whose slices a window ending after `limit` still needs are carried: see take_carry().
  // Call before the first pull().
  void set_bounds(int128 floor, int128 limit);
  // The carried rows, as an int64 array of row numbers into input 0 followed by input 1, in
  // the sweep's (key bytes, slice) order. Call after pull() returned null.
  std::unique_ptr<ArrowArray> take_carry();

  const GlobalStats& stats() const { return stats_; }

 private:
  struct Batch {
    ArrowArray array{};
    std::unique_ptr<arrow::ColumnView> view;
  };

  void run();
  // The input whose head row comes next; -1 when none is ready.
  int next_input();
  bool fire_until(int128 limit);
  bool fire_hop(int128 limit);
  bool fire_cumulate(int128 limit);
  void emit(int128 start, int128 end);
  void emit_single(int128 start, int128 end, const arrow::ColumnView& partials, int64_t row);
  // Appends a window's start, end, time and key columns (within int64: the callers check);
  // returns the index of its first aggregate column.
  size_t append_window_head(int128 start, int128 end);
  void end_key();

  Plan plan_;
  SliceAssigner assigner_;
  std::unique_ptr<arrow::Type> partial_type_;
  std::unique_ptr<arrow::Type> output_type_;
  int64_t max_output_rows_;
  arrow::ColumnBuilder out_;
  std::vector<arrow::ColumnBuilder*> key_out_;
  std::vector<std::unique_ptr<WindowAgg>> aggs_;
  std::deque<Batch> batches_[2];
  int64_t cursor_[2] = {0, 0};
  int64_t consumed_[2] = {0, 0};  // rows of each input before its front batch
  int64_t rows_added_[2] = {0, 0};
  bool finishing_ = false;

  // Streaming bounds and carry.
  bool streaming_ = false;
  int128 floor_ = 0;
  int128 limit_ = 0;
  std::vector<int64_t> carry_;

  // The key being swept.
  bool has_key_ = false;
  std::string key_;
  bool has_last_ = false;
  int64_t last_slice_ = 0;
  std::deque<int64_t> slices_;  // HOP: in-window slices, then pending ones; CUMULATE: pending
  size_t entered_ = 0;
  bool have_window_ = false;  // HOP: window_ is the next window to fire
  int128 window_ = 0;
  bool in_cycle_ = false;  // CUMULATE: cycle_ is open, step_ is the next window's step count
  int128 cycle_ = 0;
  int64_t step_ = 0;

  GlobalStats stats_;
};

}  // namespace sliceflow::window
