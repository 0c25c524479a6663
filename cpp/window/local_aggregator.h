// The local phase (runs in mapInArrow before the shuffle): folds input batches into the
// bundle buffer, one accumulator per (key, slice), and flushes them as partial rows when the
// bundle holds `bundle_rows` input rows or `bundle_bytes` bytes, and at the end of the input.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "arrow/builder.h"
#include "arrow/c_data.h"
#include "arrow/type.h"
#include "window/local_aggs.h"
#include "window/plan.h"
#include "window/slice_assigner.h"
#include "window/slice_table.h"

namespace sliceflow::window {

struct LocalStats {
  int64_t rows_in = 0;
  int64_t rows_null_time = 0;
  int64_t rows_out_of_range = 0;  // a slice start beyond the int64 time line
  int64_t rows_late = 0;          // streaming: rows whose windows had all been emitted
  int64_t late_row_windows = 0;   // streaming: (row, window) pairs left out as late
  int64_t partials_out = 0;
  int64_t bundle_flushes = 0;
  // The counters by name, as the bindings' stats() dicts show them.
  std::vector<std::pair<const char*, int64_t>> named() const {
    return {{"rows_in", rows_in},
            {"rows_null_time", rows_null_time},
            {"rows_out_of_range", rows_out_of_range},
            {"rows_late", rows_late},
            {"late_row_windows", late_row_windows},
            {"partials_out", partials_out},
            {"bundle_flushes", bundle_flushes}};
  }
};

class LocalAggregator {
 public:
  // `input`: the struct of the input batches' columns (keys, time, arguments; strings as utf8,
  // though batches may hold large strings). Throws std::invalid_argument unless `partial_type`
  // is partial_schema(plan, the arguments' types).
  LocalAggregator(Plan plan, const arrow::Type& input, std::unique_ptr<arrow::Type> partial_type);

  // Folds one batch (a struct array of the input columns). True: a flushed partial batch is
  // ready for take().
  bool add(const ArrowSchema& schema, const ArrowArray& array);
  // The flushed partial batch, or null.
  std::unique_ptr<ArrowArray> take();
  // Flushes what is left; null if nothing is.
  std::unique_ptr<ArrowArray> finish();
  // Streaming: windows ending at or before `floor` (µs) have been emitted, so rows do not
  // count in them; a row whose windows all end by then is dropped.
  void set_late_floor(int128 floor) {
    late_floor_ = floor;
    has_late_floor_ = true;
  }

  const LocalStats& stats() const { return stats_; }

 private:
  void flush();
  // Folds rows [begin, end) of `input` into their slots, fold_slots_[row - begin].
  void fold(const arrow::ColumnView& input, int64_t begin, int64_t end);
  void check_types(const arrow::ColumnView& input) const;

  Plan plan_;
  SliceAssigner assigner_;
  size_t input_columns_;
  std::unique_ptr<arrow::Type> partial_type_;
  arrow::ColumnBuilder partial_;
  SliceTable buffer_;
  std::vector<std::unique_ptr<LocalAgg>> aggs_;
  std::vector<int> first_column_;       // per aggregate, its first partial column
  std::vector<uint32_t> fold_slots_;    // per row of the rows being added: its slot
  std::vector<uint64_t> hashes_;        // per row of the chunk being added: its key's hash
  memory::HugeVector<uint32_t> order_;  // flush (sort_partials): the slots grouped by key
  memory::HugeVector<size_t> key_end_;  // and where each key's slots end in order_
  std::vector<SlotArray> arrays_;       // flush: what export reads per slot
  std::vector<int64_t> slice_starts_;   // and slice start
  // fold(): the rows (from its begin) grouped by slot range, their slots, where groups start.
  std::vector<uint32_t> fold_rows_;
  std::vector<uint32_t> fold_order_;
  std::vector<size_t> group_start_;
  int64_t rows_in_bundle_ = 0;
  bool has_late_floor_ = false;
  int128 late_floor_ = 0;
  std::vector<std::unique_ptr<ArrowArray>> ready_;
  LocalStats stats_;
};

}  // namespace sliceflow::window
