// Deduplication over whole batches (see deduplicator.h); the op column is read with
// changes/change_kind.h, emitted changes counted with changes/change_counts.h.
#include "dedup/deduplicator.h"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>

#include "agg/key_codec.h"
#include "arrow/byte_buffer.h"
#include "changes/change_kind.h"
#include "order/sort_key.h"

namespace sliceflow::dedup {
namespace {

using arrow::ColumnView;
using arrow::Layout;

[[noreturn]] void mismatch(const std::string& what) {
  throw std::invalid_argument("dedup kernel: " + what);
}

template <typename T>
int three_way(T a, T b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

// Spark's ordering of doubles: NaN above everything, -0.0 equal to 0.0.
int compare_double(double a, double b) {
  const bool na = a != a;
  const bool nb = b != b;
  if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
  return three_way(a, b);
}

}  // namespace

Deduplicator::Deduplicator(Plan plan) : plan_(plan) { plan_.validate(); }

int Deduplicator::compare(int64_t a, int64_t b) const {
  const Side& sa = a < state_rows_ ? state_side_ : rows_side_;
  const Side& sb = b < state_rows_ ? state_side_ : rows_side_;
  const ColumnView& ca = *sa.order;
  const ColumnView& cb = *sb.order;
  const int64_t ra = a - sa.base;
  const int64_t rb = b - sb.base;
  const bool na = ca.is_null(ra);
  const bool nb = cb.is_null(rb);
  if (na || nb) return na == nb ? 0 : (na ? -1 : 1);
  switch (ca.layout()) {
    case Layout::Float32:
    case Layout::Float64:
      return compare_double(ca.f64(ra), cb.f64(rb));
    case Layout::Decimal128:
      return three_way(ca.i128(ra), cb.i128(rb));
    case Layout::String:
    case Layout::LargeString: {
      const int c = ca.str(ra).compare(cb.str(rb));  // bytewise: Spark's UTF8_BINARY order
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    default:
      return three_way(ca.i64(ra), cb.i64(rb));
  }
}

bool Deduplicator::better(int64_t c, int64_t best) const {
  if (!plan_.ordered) return plan_.keep == Keep::Last;
  const int cmp = compare(c, best);
  return plan_.keep == Keep::First ? cmp < 0 : cmp >= 0;
}

bool Deduplicator::same_identity(int64_t a, int64_t b) const {
  const auto ia = static_cast<size_t>(a);
  const auto ib = static_cast<size_t>(b);
  const size_t la = identity_offsets_[ia + 1] - identity_offsets_[ia];
  const size_t lb = identity_offsets_[ib + 1] - identity_offsets_[ib];
  return la == lb && arrow::equal_bytes(identity_bytes_.data() + identity_offsets_[ia],
                                        identity_bytes_.data() + identity_offsets_[ib], la);
}

uint32_t Deduplicator::slot_of(std::string_view key) {
  const size_t before = keys_.size();
  const uint32_t slot = keys_.find_or_insert(key, 0, agg::hash_bytes(key));
  if (keys_.size() != before) {
    emitted_.push_back(-1);
    best_.push_back(-1);
    head_.push_back(-1);
    tail_.push_back(-1);
    touched_.push_back(0);
  }
  return slot;
}

void Deduplicator::insert(uint32_t slot, int64_t c) {
  if (plan_.retracting) {
    next_[static_cast<size_t>(c)] = -1;
    if (tail_[slot] < 0) {
      head_[slot] = c;
    } else {
      next_[static_cast<size_t>(tail_[slot])] = c;
    }
    tail_[slot] = c;
  }
  if (best_[slot] < 0 || better(c, best_[slot])) best_[slot] = c;
}

void Deduplicator::retract(uint32_t slot, int64_t c) {
  // The latest live row with the retraction's identity leaves.
  int64_t found = -1, found_prev = -1, prev = -1;
  for (int64_t r = head_[slot]; r >= 0; prev = r, r = next_[static_cast<size_t>(r)]) {
    if (same_identity(r, c)) {
      found = r;
      found_prev = prev;
    }
  }
  if (found < 0) {
    ++stats_.retractions_ignored;
    return;
  }
  const int64_t after = next_[static_cast<size_t>(found)];
  if (found_prev < 0) {
    head_[slot] = after;
  } else {
    next_[static_cast<size_t>(found_prev)] = after;
  }
  if (tail_[slot] == found) tail_[slot] = found_prev;
  if (best_[slot] != found) return;
  // The kept row left: the next one by the same rule, over the live rows in arrival order.
  best_[slot] = -1;
  for (int64_t r = head_[slot]; r >= 0; r = next_[static_cast<size_t>(r)]) {
    if (best_[slot] < 0 || better(r, best_[slot])) best_[slot] = r;
  }
}

void Deduplicator::touch(uint32_t slot) {
  if (!plan_.mini_batch) {
    ++stats_.state_reads;  // one state access per row, as Flink counts without mini-batch
    return;
  }
  if (touched_[slot]) return;
  touched_[slot] = 1;
  touched_list_.push_back(slot);
  ++stats_.state_reads;
}

void Deduplicator::flush(uint32_t slot) {
  ++stats_.state_writes;
  const int64_t e = emitted_[slot];
  const int64_t b = best_[slot];
  emitted_[slot] = b;
  if (e == b) return;
  if (plan_.retracting && e >= 0 && b >= 0 && same_identity(e, b)) return;  // the same row
  auto emit = [&](int64_t row, changes::ChangeKind kind) {
    emit_rows_.push_back(row);
    emit_ops_.push_back(changes::code(kind));
    stats_.changes.count(kind);
  };
  if (b < 0) {
    emit(e, changes::ChangeKind::Delete);
  } else if (e < 0) {
    emit(b, changes::ChangeKind::Insert);
  } else {
    emit(e, changes::ChangeKind::UpdateBefore);
    emit(b, changes::ChangeKind::UpdateAfter);
  }
}

void Deduplicator::end_bundle() {
  if (!plan_.mini_batch) return;
  for (const uint32_t slot : touched_list_) {
    touched_[slot] = 0;
    flush(slot);
  }
  if (!touched_list_.empty()) ++stats_.bundles;
  touched_list_.clear();
}

void Deduplicator::encode_identities(const ColumnView& input, int64_t base) {
  std::vector<const ColumnView*> cols;
  for (int32_t j = 0; j < plan_.num_identity; ++j)
    cols.push_back(&input.child(static_cast<size_t>(plan_.first_identity() + j)));
  agg::KeyEncoder enc(std::move(cols));
  constexpr int64_t kChunk = 4096;
  for (int64_t begin = 0; begin < input.length(); begin += kChunk) {
    const int64_t end = std::min(input.length(), begin + kChunk);
    enc.encode(begin, end);
    for (int64_t r = begin; r < end; ++r) {
      const std::string_view id = enc.key(r);
      identity_bytes_.insert(identity_bytes_.end(), id.begin(), id.end());
      identity_offsets_[static_cast<size_t>(base + r + 1)] = identity_bytes_.size();
    }
  }
}

void Deduplicator::step(const ArrowSchema& state_schema, const ArrowArray& state,
                        const ArrowSchema& rows_schema, const ArrowArray& rows) {
  const ColumnView st(state_schema, state);
  const ColumnView in(rows_schema, rows);
  if (st.layout() != Layout::Struct ||
      st.num_children() != static_cast<size_t>(plan_.state_columns())) {
    mismatch("the state batch does not have the plan's columns");
  }
  if (in.layout() != Layout::Struct ||
      in.num_children() != static_cast<size_t>(plan_.input_columns())) {
    mismatch("the batch does not have the plan's columns");
  }
  keys_.clear();
  emitted_.clear();
  best_.clear();
  head_.clear();
  tail_.clear();
  touched_.clear();
  touched_list_.clear();
  emit_rows_.clear();
  emit_ops_.clear();
  keep_rows_.clear();
  state_rows_ = st.length();
  const int64_t total = state_rows_ + in.length();
  if (plan_.ordered) {
    const auto oc = static_cast<size_t>(plan_.order_column());
    state_side_.order = &st.child(oc);
    rows_side_.order = &in.child(oc);
    order::check_orderable(*rows_side_.order);
    if (state_side_.order->layout() != rows_side_.order->layout()) {
      mismatch("the order column of the state and of the rows differ in type");
    }
  }
  state_side_.base = 0;
  rows_side_.base = state_rows_;
  if (plan_.retracting) {
    next_.assign(static_cast<size_t>(total), -1);
    identity_bytes_.clear();
    identity_offsets_.assign(static_cast<size_t>(total) + 1, 0);
    encode_identities(st, 0);
    encode_identities(in, state_rows_);
  }
  const ColumnView* op =
      plan_.retracting ? &in.child(static_cast<size_t>(plan_.input_columns() - 1)) : nullptr;
  if (op != nullptr && !changes::is_op_column(*op)) {
    mismatch("the op column '" + op->name() + "' must be a string column");
  }

  auto key_columns = [&](const ColumnView& v) {
    std::vector<const ColumnView*> cols;
    for (int32_t k = 0; k < plan_.num_keys; ++k) cols.push_back(&v.child(static_cast<size_t>(k)));
    return cols;
  };
  constexpr int64_t kChunk = 4096;  // keys are encoded a chunk at a time to bound the scratch

  // The retained rows: each key's kept row is what it emitted last.
  {
    agg::KeyEncoder keys(key_columns(st));
    for (int64_t begin = 0; begin < state_rows_; begin += kChunk) {
      const int64_t end = std::min(state_rows_, begin + kChunk);
      keys.encode(begin, end);
      for (int64_t r = begin; r < end; ++r) insert(slot_of(keys.key(r)), r);
    }
    for (size_t s = 0; s < keys_.size(); ++s) emitted_[s] = best_[s];
    stats_.keys_loaded += static_cast<int64_t>(keys_.size());
  }

  agg::KeyEncoder keys(key_columns(in));
  const int64_t n = in.length();
  stats_.rows_in += n;
  int64_t in_bundle = 0;
  for (int64_t begin = 0; begin < n; begin += kChunk) {
    const int64_t end = std::min(n, begin + kChunk);
    keys.encode(begin, end);
    for (int64_t r = begin; r < end; ++r) {
      const int64_t c = state_rows_ + r;
      const bool retraction = op != nullptr && changes::retracts(changes::at(*op, r));
      const uint32_t slot = slot_of(keys.key(r));
      touch(slot);
      if (retraction) {
        ++stats_.retractions_in;
        retract(slot, c);
      } else {
        insert(slot, c);
      }
      if (!plan_.mini_batch) flush(slot);
      if (++in_bundle == plan_.bundle_rows) {
        end_bundle();
        in_bundle = 0;
      }
    }
  }
  end_bundle();

  live_keys_ = 0;
  for (size_t s = 0; s < keys_.size(); ++s) {
    if (best_[s] < 0) continue;
    ++live_keys_;
    if (!plan_.retracting) {
      keep_rows_.push_back(best_[s]);
      continue;
    }
    for (int64_t r = head_[s]; r >= 0; r = next_[static_cast<size_t>(r)]) keep_rows_.push_back(r);
  }
  std::sort(keep_rows_.begin(), keep_rows_.end());
}

}  // namespace sliceflow::dedup
