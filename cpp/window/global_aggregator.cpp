#include "window/global_aggregator.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "agg/key_codec.h"

namespace sliceflow::window {
namespace {

using arrow::ColumnView;
using arrow::Kind;
using arrow::Type;

constexpr int128 kForever = static_cast<int128>(std::numeric_limits<int64_t>::max()) * 4;

}  // namespace

GlobalAggregator::GlobalAggregator(Plan plan, std::unique_ptr<Type> partial_type,
                                   std::unique_ptr<Type> output_type, int64_t max_output_rows)
    : plan_(std::move(plan)),
      assigner_((plan_.validate(), plan_)),
      partial_type_(std::move(partial_type)),
      output_type_(std::move(output_type)),
      max_output_rows_(max_output_rows),
      out_(*output_type_) {
  if (max_output_rows_ <= 0) plan_mismatch("max_output_rows must be positive");
  if (partial_type_->kind != Kind::Struct || output_type_->kind != Kind::Struct) {
    plan_mismatch("partial and output schemas must be structs");
  }
  const auto& oc = output_type_->children;
  const size_t keys = static_cast<size_t>(plan_.num_keys);
  if (oc.size() != 3 + keys + plan_.aggs.size())
    plan_mismatch("the output schema does not match the plan");
  for (size_t i = 0; i < 3; ++i) {
    if (oc[i]->kind != Kind::TimestampUs)
      plan_mismatch("window bounds must be timestamp[us] columns");
  }
  for (size_t k = 0; k < keys; ++k) key_out_.push_back(&out_.child(3 + k));
  agg::check_implied_schemas(partial_layout(), plan_.aggs, *partial_type_, *output_type_,
                             kFirstOutputAggColumn + keys);
  for (const agg::AggColumns& columns :
       agg::agg_columns(agg::StateForm::SlicePartial, plan_.aggs, *partial_type_,
                        kFirstPartialColumn, *output_type_, 3 + keys, plan_.ansi)) {
    aggs_.push_back(make_window_agg({columns, plan_.kind != WindowKind::Cumulate}, &stats_.sweep));
  }
}

GlobalAggregator::~GlobalAggregator() {
  for (auto& queue : batches_) {
    for (Batch& b : queue) {
      if (b.array.release != nullptr) b.array.release(&b.array);
    }
  }
}

void GlobalAggregator::add(const ArrowSchema& schema, ArrowArray* array, int input) {
  if (array == nullptr || array->release == nullptr) plan_mismatch("released ArrowArray");
  Batch batch;
  batch.array = *array;  // move: the caller's struct is marked released
  array->release = nullptr;
  try {
    if (input != 0 && input != 1) plan_mismatch("the input must be 0 or 1");
    if (input == 0 && rows_added_[1] > 0) plan_mismatch("all of input 0 must come before input 1");
    // (Batch mode fires a TUMBLE window as soon as the next row of input 0 is another slice.)
    if (input == 1 && stats_.partials_in > 0)
      plan_mismatch("input 1 must be added before the first pull");
    batch.view = std::make_unique<ColumnView>(schema, batch.array);
    const ColumnView& v = *batch.view;
    if (v.layout() != arrow::Layout::Struct || v.num_children() != partial_type_->children.size() ||
        v.child(0).layout() != arrow::Layout::String ||
        v.child(1).layout() != arrow::Layout::Int64) {
      plan_mismatch("the batch does not have the partial schema's columns");
    }
    if (v.child(0).may_have_nulls() || v.child(1).may_have_nulls()) {
      plan_mismatch("__key and __slice must not be null");
    }
  } catch (...) {
    batch.array.release(&batch.array);
    throw;
  }
  rows_added_[input] += batch.view->length();
  batches_[input].push_back(std::move(batch));
}

void GlobalAggregator::set_bounds(int128 floor, int128 limit) {
  if (floor > limit) plan_mismatch("the floor must not be above the limit");
  // (Batch mode may already have fired windows that the bounds would hold back.)
  if (stats_.partials_in > 0) plan_mismatch("set_bounds must come before the first pull");
  streaming_ = true;
  floor_ = floor;
  limit_ = limit;
}

std::unique_ptr<ArrowArray> GlobalAggregator::take_carry() {
  arrow::Type int64_type;
  int64_type.kind = Kind::Int64;
  arrow::ColumnBuilder rows(int64_type);
  for (const int64_t r : carry_) rows.append_fixed<int64_t>(r);
  stats_.partials_carried += static_cast<int64_t>(carry_.size());
  carry_.clear();
  auto out = std::make_unique<ArrowArray>();
  rows.export_to(out.get());
  return out;
}

std::unique_ptr<ArrowArray> GlobalAggregator::pull() {
  run();
  if (out_.length() == 0) return nullptr;
  auto out = std::make_unique<ArrowArray>();
  out_.export_to(out.get());
  return out;
}

int GlobalAggregator::next_input() {
  for (int i = 0; i < 2; ++i) {
    auto& queue = batches_[i];
    while (!queue.empty() && cursor_[i] >= queue.front().view->length()) {
      consumed_[i] += queue.front().view->length();
      queue.front().array.release(&queue.front().array);
      queue.pop_front();
      cursor_[i] = 0;
    }
  }
  // Two runs can only be merged once both are complete.
  if ((streaming_ || rows_added_[1] > 0) && !finishing_) return -1;
  const bool a = !batches_[0].empty();
  const bool b = !batches_[1].empty();
  if (a && b) {
    const ColumnView& va = *batches_[0].front().view;
    const ColumnView& vb = *batches_[1].front().view;
    const int c = va.child(0).str(cursor_[0]).compare(vb.child(0).str(cursor_[1]));
    if (c != 0) return c < 0 ? 0 : 1;
    return va.child(1).i64(cursor_[0]) <= vb.child(1).i64(cursor_[1]) ? 0 : 1;
  }
  return a ? 0 : (b ? 1 : -1);
}

void GlobalAggregator::run() {
  const bool cumulate = plan_.kind == WindowKind::Cumulate;
  const int128 key_limit = streaming_ ? limit_ : kForever;
  // Takes the row: keeps its number when a window that has not fired yet needs its slice.
  auto consume = [&](int input, int64_t row, int64_t slice) {
    if (streaming_ && assigner_.last_window_end(slice, cumulate) > limit_) {
      carry_.push_back(input == 0 ? consumed_[0] + row : rows_added_[0] + consumed_[1] + row);
    }
    ++stats_.partials_in;
    ++cursor_[input];
  };
  const bool single = plan_.kind == WindowKind::Tumble && !streaming_ && rows_added_[1] == 0;
  while (out_.length() < max_output_rows_) {
    const int input = next_input();
    if (input >= 0) {
      const ColumnView& v = *batches_[input].front().view;
      const int64_t row = cursor_[input];
      const std::string_view key = v.child(0).str(row);
      const int64_t slice = v.child(1).i64(row);
      if (!has_key_ || key != key_) {
        if (has_key_) {
          if (!fire_until(key_limit)) return;
          end_key();
        }
        key_.assign(key.data(), key.size());
        has_key_ = true;
      } else if (has_last_ && slice == last_slice_) {
        for (auto& agg : aggs_) agg->merge_last(v, row);
        consume(input, row, slice);
        continue;
      } else if (has_last_ && slice < last_slice_) {
        plan_mismatch("partial rows must come sorted by (__key, __slice)");
      }
      // TUMBLE, one partial row for the (key, slice) and nothing pending for the key: the
      // slice is the window, fired at once without passing through the sweep. (With one
      // local bundle every (key, slice) has one partial row.) Batch mode only: a streaming
      // window may have to wait for the watermark.
      if (single && slices_.empty() && row + 1 < v.length() &&
          (v.child(1).i64(row + 1) != slice || v.child(0).str(row + 1) != key)) {
        const int128 start = assigner_.first_window_start(slice);
        if (start + plan_.size <= std::numeric_limits<int64_t>::max()) {
          emit_single(start, start + plan_.size, v, row);
          last_slice_ = slice;
          has_last_ = true;
          ++stats_.slices;
          consume(input, row, slice);
          continue;
        }
      }
      if (!fire_until(std::min<int128>(slice, key_limit))) return;
      for (auto& agg : aggs_) agg->append(v, row);
      slices_.push_back(slice);
      last_slice_ = slice;
      has_last_ = true;
      ++stats_.slices;
      consume(input, row, slice);
      continue;
    }
    if (finishing_ && has_key_) {
      if (!fire_until(key_limit)) return;
      end_key();
      continue;
    }
    return;
  }
}

bool GlobalAggregator::fire_until(int128 limit) {
  return plan_.kind == WindowKind::Cumulate ? fire_cumulate(limit) : fire_hop(limit);
}

// Fires the windows that end at or before `limit`. False: the output batch filled up first
// (call again to go on).
bool GlobalAggregator::fire_hop(int128 limit) {
  const int128 size = plan_.size;
  // Streaming: windows ending by floor_ were emitted by an earlier micro-batch.
  const int128 first_unfired = streaming_ ? assigner_.first_window_start(floor_) : -kForever;
  for (;;) {
    if (out_.length() >= max_output_rows_) return false;
    if (!have_window_) {
      if (slices_.empty()) return true;
      window_ = std::max(assigner_.first_window_start(slices_.front()), first_unfired);
      have_window_ = true;
    }
    if (window_ + size > limit) return true;
    while (!slices_.empty() && slices_.front() < window_) {
      if (entered_ == 0) throw std::logic_error("window kernel: a slice left before it entered");
      for (auto& agg : aggs_) agg->leave();
      --entered_;
      slices_.pop_front();
    }
    if (slices_.empty()) {
      have_window_ = false;
      return true;
    }
    if (slices_.front() >= window_ + size) {
      // No slice in this window: jump to the first window of the next slice.
      window_ = std::max(assigner_.first_window_start(slices_.front()), first_unfired);
      continue;
    }
    while (entered_ < slices_.size() && slices_[entered_] < window_ + size) {
      for (auto& agg : aggs_) agg->enter();
      ++entered_;
    }
    emit(window_, window_ + size);
    window_ += plan_.slide;
  }
}

bool GlobalAggregator::fire_cumulate(int128 limit) {
  const int64_t step = plan_.slide;
  const int64_t steps = plan_.size / plan_.slide;
  for (;;) {
    if (out_.length() >= max_output_rows_) return false;
    if (!in_cycle_) {
      if (slices_.empty()) return true;
      cycle_ = assigner_.cycle_start(slices_.front());
      step_ = static_cast<int64_t>((slices_.front() - cycle_) / step) + 1;
      in_cycle_ = true;
      if (streaming_ && floor_ >= cycle_) {
        // Steps ending by floor_ were emitted by an earlier micro-batch.
        // The local phase drops late rows and the carry drops expired slices with the same
        // floor, so a cycle here always has a step left to fire.
        const int128 unfired = (floor_ - cycle_) / step + 1;
        if (unfired > steps) throw std::logic_error("window kernel: a slice of a fired cycle came");
        step_ = std::max(step_, static_cast<int64_t>(unfired));
      }
    }
    const int128 end = cycle_ + static_cast<int128>(step_) * step;
    if (end > limit) return true;
    while (!slices_.empty() && slices_.front() < end) {
      for (auto& agg : aggs_) agg->enter();
      slices_.pop_front();
    }
    emit(cycle_, end);
    if (++step_ > steps) {
      in_cycle_ = false;
      for (auto& agg : aggs_) agg->clear();
    }
  }
}

void GlobalAggregator::emit(int128 start, int128 end) {
  constexpr int128 lo = std::numeric_limits<int64_t>::min();
  constexpr int128 hi = std::numeric_limits<int64_t>::max();
  if (start < lo || end > hi) {
    ++stats_.windows_out_of_range;
    return;
  }
  const size_t base = append_window_head(start, end);
  for (size_t a = 0; a < aggs_.size(); ++a) aggs_[a]->emit(out_.child(base + a));
  out_.finish_struct();
  ++stats_.windows_fired;
}

void GlobalAggregator::emit_single(int128 start, int128 end, const ColumnView& partials,
                                   int64_t row) {
  const size_t base = append_window_head(start, end);
  for (size_t a = 0; a < aggs_.size(); ++a)
    aggs_[a]->emit_single(partials, row, out_.child(base + a));
  out_.finish_struct();
  ++stats_.windows_fired;
}

size_t GlobalAggregator::append_window_head(int128 start, int128 end) {
  out_.child(0).append_fixed<int64_t>(static_cast<int64_t>(start));
  out_.child(1).append_fixed<int64_t>(static_cast<int64_t>(end));
  out_.child(2).append_fixed<int64_t>(static_cast<int64_t>(end - 1));
  agg::decode_key(key_, key_out_);
  return 3 + key_out_.size();
}

void GlobalAggregator::end_key() {
  for (auto& agg : aggs_) agg->clear();
  slices_.clear();
  entered_ = 0;
  have_window_ = false;
  in_cycle_ = false;
  has_last_ = false;
  has_key_ = false;
}

}  // namespace sliceflow::window
