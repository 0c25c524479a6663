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
  SweepCounters sweep;
};

class GlobalAggregator {
 public:
  GlobalAggregator(Plan plan, std::unique_ptr<arrow::Type> partial_type,
                   std::unique_ptr<arrow::Type> output_type, int64_t max_output_rows);
  ~GlobalAggregator();

  // Queues a batch of partial rows; takes ownership of `array` (moved-from: released).
  void add(const ArrowSchema& schema, ArrowArray* array);
  // Finished windows, at most max_output_rows of them; null when no more are ready.
  std::unique_ptr<ArrowArray> pull();
  // The end of the input: the last key's windows become ready.
  void finish() { finishing_ = true; }

  const GlobalStats& stats() const { return stats_; }

 private:
  struct Batch {
    ArrowArray array{};
    std::unique_ptr<arrow::ColumnView> view;
  };

  void run();
  bool fire_until(int128 limit);
  bool fire_hop(int128 limit);
  bool fire_cumulate(int128 limit);
  void emit(int128 start, int128 end);
  void end_key();

  Plan plan_;
  SliceAssigner assigner_;
  std::unique_ptr<arrow::Type> partial_type_;
  std::unique_ptr<arrow::Type> output_type_;
  int64_t max_output_rows_;
  arrow::ColumnBuilder out_;
  std::vector<arrow::ColumnBuilder*> key_out_;
  std::vector<std::unique_ptr<WindowAgg>> aggs_;
  std::deque<Batch> batches_;
  int64_t cursor_ = 0;
  bool finishing_ = false;

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
