#include "window/local_aggregator.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "agg/key_codec.h"
#include "agg/values.h"
#include "arrow/column_view.h"

namespace sliceflow::window {

using arrow::ColumnView;
using arrow::Kind;
using arrow::Layout;
using arrow::Type;

LocalAggregator::LocalAggregator(Plan plan, const Type& input, std::unique_ptr<Type> partial_type)
    : plan_(std::move(plan)),
      assigner_((plan_.validate(), plan_)),
      input_columns_(input.children.size()),
      partial_type_(std::move(partial_type)),
      partial_(*partial_type_) {
  if (input.kind != Kind::Struct) plan_mismatch("the input schema must be a struct of columns");
  if (input_columns_ <= static_cast<size_t>(plan_.num_keys))
    plan_mismatch("the input has no time column");
  for (const AggPlan& agg : plan_.aggs) {
    if (agg.arg >= static_cast<int>(input_columns_)) {
      plan_mismatch("an aggregate's argument column is out of range");
    }
  }
  agg::check_state_schema(partial_layout(), plan_.aggs, agg::argument_types(plan_.aggs, input),
                          *partial_type_);
  int column = kFirstPartialColumn;
  for (const AggPlan& agg : plan_.aggs) {
    first_column_.push_back(column);
    column += partial_columns(agg.fn);
  }
}

void LocalAggregator::check_types(const ColumnView& input) const {
  if (input.layout() != Layout::Struct || input.num_children() != input_columns_) {
    plan_mismatch("the batch does not have the input schema's columns");
  }
  const ColumnView& time = input.child(static_cast<size_t>(plan_.num_keys));
  if (time.format().rfind("tsu:", 0) != 0) plan_mismatch("the time column must be timestamp[us]");
  for (size_t a = 0; a < plan_.aggs.size(); ++a) {
    const AggPlan& agg = plan_.aggs[a];
    if (agg.arg < 0) continue;
    const ColumnView& arg = input.child(static_cast<size_t>(agg.arg));
    const auto& pc = partial_type_->children;
    const Type& first = *pc[static_cast<size_t>(first_column_[a])];
    bool ok = true;
    switch (agg.fn) {
      case AggFn::Count:
        ok = first.kind == Kind::Int64;
        break;
      case AggFn::Sum:
      case AggFn::Avg: {
        const agg::ValueClass vc = agg::value_class(arg.layout(), arg.name());
        if (vc == agg::ValueClass::F64) {
          ok = first.kind == Kind::Float64;
        } else {
          ok = first.kind == Kind::Decimal128;
        }
        break;
      }
      case AggFn::Min:
      case AggFn::Max:
      case AggFn::FirstValue:
      case AggFn::LastValue:
        agg::check_key_type(arg.layout(), first);
        break;
      case AggFn::CountDistinct:
        ok = first.kind == Kind::List;
        if (ok) agg::check_key_type(arg.layout(), *first.children[0]);
        break;
    }
    if (!ok)
      plan_mismatch("partial column '" + first.name + "' does not fit its argument '" + arg.name() +
                    "'");
  }
}

bool LocalAggregator::add(const ArrowSchema& schema, const ArrowArray& array) {
  const ColumnView input(schema, array);
  check_types(input);
  if (aggs_.empty() && !plan_.aggs.empty()) {
    for (const AggPlan& agg : plan_.aggs) {
      aggs_.push_back(
          make_local_agg(agg, agg.arg < 0 ? nullptr : &input.child(static_cast<size_t>(agg.arg))));
    }
  }
  const int64_t rows = input.length();
  stats_.rows_in += rows;

  const ColumnView& time = input.child(static_cast<size_t>(plan_.num_keys));
  std::vector<const ColumnView*> key_columns;
  for (int k = 0; k < plan_.num_keys; ++k)
    key_columns.push_back(&input.child(static_cast<size_t>(k)));
  agg::KeyEncoder keys(std::move(key_columns));
  // A chunk of rows at a time, each step a pass over the chunk: slices, keys, one hash-map
  // probe per row. The per-row arrays are one chunk long, so that they stay in the cache
  // between the passes (and a large batch does not allocate fresh pages for them). The
  // aggregates fold kFold rows at a time (fold()).
  constexpr int64_t kChunk = 4096;
  constexpr int64_t kFold = 16 * kChunk;
  constexpr size_t kAhead = 16;
  slice_starts_.resize(kChunk);
  hashes_.resize(kChunk);
  fold_slots_.resize(kFold);
  int64_t* slice = slice_starts_.data();
  uint64_t* hashes = hashes_.data();
  const bool cumulate = plan_.kind == WindowKind::Cumulate;
  // Rows come (mostly) in time order: a row in the previous row's slice [lo, hi) needs no
  // division. (hi <= lo: none yet.)
  int64_t lo = 0;
  int64_t hi = 0;
  const bool time_nulls = time.may_have_nulls();
  const int64_t* times = time.int64_values();  // check_types: timestamp[us]
  for (int64_t fold_begin = 0; fold_begin < rows; fold_begin += kFold) {
    const int64_t fold_end = std::min(rows, fold_begin + kFold);
    for (int64_t begin = fold_begin; begin < fold_end; begin += kChunk) {
      const int64_t end = std::min(fold_end, begin + kChunk);
      const auto n = static_cast<size_t>(end - begin);
      uint32_t* slots = fold_slots_.data() + (begin - fold_begin);
      // Slice of every row; rows without a time (or outside the time line) are left out.
      for (size_t j = 0; j < n; ++j) {
        const auto row = begin + static_cast<int64_t>(j);
        if (time_nulls && time.is_null(row)) {
          slots[j] = kSkipRow;
          ++stats_.rows_null_time;
          continue;
        }
        const int64_t t = times[row];
        if (t >= lo && t < hi) {
          slice[j] = lo;
        } else if (assigner_.slice_start64(t, &slice[j])) {
          lo = slice[j];
          hi = __builtin_add_overflow(lo, assigner_.slice_length(), &hi) ? lo : hi;
        } else {
          slots[j] = kSkipRow;
          ++stats_.rows_out_of_range;
          continue;
        }
        if (has_late_floor_) {
          const int128 late = assigner_.windows_ending_by(slice[j], late_floor_, cumulate);
          if (late > 0) {
            stats_.late_row_windows += static_cast<int64_t>(late);
            if (assigner_.last_window_end(slice[j], cumulate) <= late_floor_) {
              slots[j] = kSkipRow;
              ++stats_.rows_late;
              continue;
            }
          }
        }
        slots[j] = 0;
      }
      keys.encode(begin, end);
      for (size_t j = 0; j < n; ++j) {
        if (slots[j] == kSkipRow) continue;
        hashes[j] = agg::hash_bytes(keys.key(begin + static_cast<int64_t>(j)));
      }
      for (size_t j = 0; j < n; ++j) {
        if (j + kAhead < n) buffer_.prefetch(hashes[j + kAhead]);
        if (slots[j] == kSkipRow) continue;
        slots[j] =
            buffer_.find_or_insert(keys.key(begin + static_cast<int64_t>(j)), hashes[j], slice[j]);
      }
    }
    fold(input, fold_begin, fold_end);
  }

  rows_in_bundle_ += rows;
  size_t bytes = buffer_.memory_usage() + (order_.capacity() * 4 + key_end_.capacity() * 8);
  for (const auto& agg : aggs_) bytes += agg->memory_usage();
  if (rows_in_bundle_ >= plan_.bundle_rows || bytes >= static_cast<size_t>(plan_.bundle_bytes)) {
    flush();
  }
  return !ready_.empty();
}

// Rows in time order fall on the slots of one slice, ~one per key, at random places: folded
// in row order, every accumulator access of a slice with many keys misses the cache. The rows
// are first grouped (stably: a slot's rows keep their order) by ranges of kGroupSlots slots,
// so that a group's accumulators stay in the cache while its rows fold.
void LocalAggregator::fold(const arrow::ColumnView& input, int64_t begin, int64_t end) {
  constexpr int kGroupBits = 13;
  constexpr uint32_t kMaxGroups = 256;
  const auto n = static_cast<size_t>(end - begin);
  const uint32_t* slots = fold_slots_.data();
  uint32_t lo = kSkipRow;
  uint32_t hi = 0;
  for (size_t k = 0; k < n; ++k) {
    if (slots[k] == kSkipRow) continue;
    lo = std::min(lo, slots[k]);
    hi = std::max(hi, slots[k]);
  }
  if (lo > hi) return;
  int shift = kGroupBits;
  while (((hi - lo) >> shift) >= kMaxGroups) ++shift;
  const size_t groups = ((hi - lo) >> shift) + 1;
  group_start_.assign(groups + 1, 0);
  for (size_t k = 0; k < n; ++k) {
    if (slots[k] != kSkipRow) ++group_start_[((slots[k] - lo) >> shift) + 1];
  }
  for (size_t g = 0; g < groups; ++g) group_start_[g + 1] += group_start_[g];
  const size_t m = group_start_[groups];
  fold_rows_.resize(m);
  fold_order_.resize(m);
  for (size_t k = 0; k < n; ++k) {
    if (slots[k] == kSkipRow) continue;
    const size_t at = group_start_[(slots[k] - lo) >> shift]++;
    fold_rows_[at] = static_cast<uint32_t>(k);
    fold_order_[at] = slots[k];
  }
  const ColumnView& time = input.child(static_cast<size_t>(plan_.num_keys));
  for (size_t a = 0; a < aggs_.size(); ++a) {
    const int arg = plan_.aggs[a].arg;
    aggs_[a]->grow(buffer_.size());
    aggs_[a]->update(arg < 0 ? nullptr : &input.child(static_cast<size_t>(arg)), time,
                     fold_rows_.data(), fold_order_.data(), m, begin);
  }
}

void LocalAggregator::flush() {
  rows_in_bundle_ = 0;
  const size_t slots = buffer_.size();
  if (slots == 0) return;
  ++stats_.bundle_flushes;
  std::vector<arrow::ColumnBuilder*> columns;
  for (size_t c = 0; c < partial_.num_children(); ++c) columns.push_back(&partial_.child(c));
  for (auto& agg : aggs_) agg->prepare_export(slots);
  const auto write = [&](uint32_t slot, std::string_view key) {
    columns[0]->append_string(key);
    columns[1]->append_fixed<int64_t>(buffer_.slice(slot));
    for (size_t a = 0; a < aggs_.size(); ++a) {
      aggs_[a]->export_slot(slot, columns.data() + first_column_[a]);
    }
    partial_.finish_struct();
  };
  if (plan_.sort_partials) {
    buffer_.grouped(order_, key_end_);
    // A column at a time: slots of one key were made far apart when a key has one row per
    // slice, so each slot is a cache miss per array; a pass per aggregate has few arrays to
    // load ahead (this many slots), and the misses of one pass overlap.
    constexpr size_t kAhead = 8;
    const auto gather = [&](const auto& write_slot) {
      for (size_t at = 0; at < slots; ++at) {
        if (at + kAhead < slots) {
          const size_t ahead = order_[at + kAhead];
          for (const SlotArray& a : arrays_) {
            __builtin_prefetch(static_cast<const char*>(a.base) + ahead * a.stride);
          }
        }
        write_slot(order_[at]);
      }
    };
    size_t at = 0;
    for (size_t k = 0; k < key_end_.size(); ++k) {
      const std::string_view key = buffer_.key(static_cast<uint32_t>(k));
      for (; at < key_end_[k]; ++at) columns[0]->append_string(key);
    }
    arrays_.assign(1, SlotArray{buffer_.slices(), sizeof(int64_t)});
    gather([&](uint32_t slot) { columns[1]->append_fixed<int64_t>(buffer_.slice(slot)); });
    for (size_t a = 0; a < aggs_.size(); ++a) {
      arrays_.clear();
      aggs_[a]->export_arrays(arrays_);
      gather(
          [&](uint32_t slot) { aggs_[a]->export_slot(slot, columns.data() + first_column_[a]); });
    }
    for (size_t s = 0; s < slots; ++s) partial_.finish_struct();
  } else {
    for (uint32_t slot = 0; slot < slots; ++slot) write(slot, buffer_.key(buffer_.key_id(slot)));
  }
  stats_.partials_out += static_cast<int64_t>(slots);
  auto out = std::make_unique<ArrowArray>();
  partial_.export_to(out.get());
  ready_.push_back(std::move(out));
  buffer_.clear();
  for (auto& agg : aggs_) agg->clear();
}

std::unique_ptr<ArrowArray> LocalAggregator::take() {
  if (ready_.empty()) return nullptr;
  auto out = std::move(ready_.front());
  ready_.erase(ready_.begin());
  return out;
}

std::unique_ptr<ArrowArray> LocalAggregator::finish() {
  flush();
  return take();
}

}  // namespace sliceflow::window
