// The changelog global phase (see aggregator.h, docs/changelog-kernel.md): per-key state from
// delta rows, net changes per bundle, the state payload. O(aggregates) amortized per delta row.
#include "changelog/aggregator.h"

#include <stdexcept>

#include "agg/key_codec.h"
#include "arrow/column_view.h"
#include "changelog/state_codec.h"

namespace sliceflow::changelog {

using arrow::ColumnView;
using arrow::Kind;
using arrow::Layout;

Aggregator::Aggregator(Plan plan, std::unique_ptr<arrow::Type> delta_type,
                       std::unique_ptr<arrow::Type> output_type, Emit emit, int64_t max_output_rows)
    : plan_(std::move(plan)),
      delta_type_(std::move(delta_type)),
      output_type_(std::move(output_type)),
      emit_(emit),
      max_output_rows_(max_output_rows),
      out_((plan_.validate(), *output_type_)) {
  if (max_output_rows_ <= 0) throw std::invalid_argument("max_output_rows must be positive");
  if (delta_type_->kind != Kind::Struct || output_type_->kind != Kind::Struct) {
    plan_mismatch("the delta and output schemas must be structs");
  }
  const auto& oc = output_type_->children;
  const size_t keys = static_cast<size_t>(plan_.num_keys);
  if (oc.size() != 1 + keys + plan_.aggs.size() || oc[0]->kind != Kind::Utf8) {
    plan_mismatch("the output schema must be op, the keys, then one column per aggregate");
  }
  // The aggregator never sees the input: its schemas must be what their implied arguments give.
  agg::check_implied_schemas(delta_layout(), plan_.aggs, *delta_type_, *output_type_, 1 + keys);
  for (size_t k = 0; k < keys; ++k) key_builders_.push_back(&out_.child(1 + k));
  for (const agg::AggColumns& columns :
       agg::agg_columns(agg::StateForm::Delta, plan_.aggs, *delta_type_, kFirstAggColumn,
                        *output_type_, 1 + keys, plan_.ansi)) {
    accs_.push_back(make_accumulator({columns, plan_.retracting()}));
    classes_.push_back(agg::value_class_of(*columns.result));
  }
  scratch_.resize(plan_.aggs.size());
}

uint32_t Aggregator::key_id(std::string_view key, uint64_t hash) {
  const size_t before = keys_.size();
  const uint32_t k = keys_.find_or_insert(key, 0, hash);
  if (keys_.size() != before) {
    rows_.push_back(0);
    mark_.push_back(0);
    changed_.push_back(0);
    for (auto& acc : accs_) acc->grow(keys_.size());
  }
  return k;
}

void Aggregator::current_values(uint32_t k, Scalar* out) const {
  for (size_t a = 0; a < accs_.size(); ++a) out[a] = accs_[a]->value(k);
}

// First touch of a key in the bundle: one state read, and what the key shows before the bundle.
void Aggregator::touch(uint32_t k) {
  ++stats_.state_reads;
  touched_.push_back(k);
  mark_[k] = static_cast<uint32_t>(touched_.size());
  const bool live = rows_[k] > 0;
  before_live_.push_back(live ? 1 : 0);
  const size_t base = before_.size();
  before_.resize(base + accs_.size());
  // emit="final" emits nothing before the end: an intermediate value is never judged (a BIGINT
  // sum may overflow between bundles and come back into range).
  if (!live || emit_ != Emit::Changelog) return;
  current_values(k, &before_[base]);
  // The bundle may change the state that string values point into: keep copies.
  for (size_t a = 0; a < accs_.size(); ++a) {
    Scalar& s = before_[base + a];
    if (classes_[a] != agg::ValueClass::Str || !s.valid) continue;
    s.i = static_cast<int64_t>(before_strings_.size());
    before_strings_.append(s.s.data(), s.s.size());
  }
}

void Aggregator::emit_row(changes::ChangeKind kind, uint32_t k, const Scalar* values) {
  out_.child(0).append_string(changes::name(kind));
  stats_.changes.count(kind);
  agg::decode_key(keys_.key_of(k), key_builders_);
  const size_t keys = key_builders_.size();
  for (size_t a = 0; a < accs_.size(); ++a)
    append_scalar(classes_[a], out_.child(1 + keys + a), values[a]);
  out_.finish_struct();
}

void Aggregator::end_bundle() {
  if (touched_.empty()) return;
  ++stats_.bundles;
  // Resolve the copied strings now that before_strings_ no longer grows.
  for (size_t t = 0; t < touched_.size(); ++t) {
    for (size_t a = 0; a < accs_.size(); ++a) {
      Scalar& s = before_[t * accs_.size() + a];
      if (classes_[a] == agg::ValueClass::Str && s.valid) {
        s.s = std::string_view(before_strings_.data() + s.i, s.s.size());
      }
    }
  }
  for (size_t t = 0; t < touched_.size(); ++t) {
    const uint32_t k = touched_[t];
    mark_[k] = 0;
    const bool was = before_live_[t] != 0;
    const bool is = rows_[k] > 0;
    if (was || is) {
      ++stats_.state_writes;
      mark_changed(k);
    }
    if (emit_ != Emit::Changelog) continue;
    const Scalar* before = &before_[t * accs_.size()];
    if (!was) {
      if (!is) continue;
      current_values(k, scratch_.data());
      emit_row(changes::ChangeKind::Insert, k, scratch_.data());
    } else if (!is) {
      emit_row(changes::ChangeKind::Delete, k, before);
    } else {
      current_values(k, scratch_.data());
      bool same = true;
      for (size_t a = 0; a < accs_.size() && same; ++a)
        same = same_scalar(classes_[a], before[a], scratch_[a]);
      if (same) continue;
      emit_row(changes::ChangeKind::UpdateBefore, k, before);
      emit_row(changes::ChangeKind::UpdateAfter, k, scratch_.data());
    }
  }
  touched_.clear();
  before_live_.clear();
  before_.clear();
  before_strings_.clear();
  bundle_rows_ = 0;
}

void Aggregator::check_delta(const ColumnView& d) const {
  if (d.layout() != Layout::Struct || d.num_children() != delta_type_->children.size() ||
      d.child(1).layout() != Layout::String || d.child(2).layout() != Layout::Int64) {
    plan_mismatch("the batch does not have the delta schema");
  }
  if (d.child(1).may_have_nulls() || d.child(2).may_have_nulls())
    plan_mismatch("null __key or __n");
}

void Aggregator::add(const ArrowSchema& schema, const ArrowArray& array) {
  if (finished_) throw std::logic_error("changelog aggregator: add() after finish()");
  const ColumnView d(schema, array);
  check_delta(d);
  const ColumnView& key = d.child(1);
  const ColumnView& count = d.child(2);
  const int64_t rows = d.length();
  const int64_t limit = plan_.mini_batch ? plan_.bundle_rows : 1;
  stats_.deltas_in += rows;
  // Hash the batch's keys first, so that each probe's table entry can be prefetched a few rows
  // ahead (the key table of a large partition does not fit the caches).
  constexpr int64_t kAhead = 8;
  hashes_.resize(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) hashes_[static_cast<size_t>(r)] = agg::hash_bytes(key.str(r));
  for (int64_t r = 0; r < rows; ++r) {
    if (r + kAhead < rows) keys_.prefetch(hashes_[static_cast<size_t>(r + kAhead)]);
    const uint32_t k = key_id(key.str(r), hashes_[static_cast<size_t>(r)]);
    if (mark_[k] == 0) touch(k);
    const int64_t n = count.i64(r);
    if (rows_[k] <= 0 && n <= 0) {
      ++stats_.retractions_ignored;
    } else {
      const int sign = n > 0 ? 1 : -1;
      for (auto& acc : accs_) acc->apply(k, d, r, sign);
      if (__builtin_add_overflow(rows_[k], n, &rows_[k])) {
        throw std::invalid_argument(
            "changelog kernel: a key's row count overflows int64 (damaged input?)");
      }
      if (rows_[k] <= 0) {
        rows_[k] = 0;
        for (auto& acc : accs_) acc->clear_key(k);
      }
    }
    if (++bundle_rows_ >= limit) end_bundle();
  }
}

void Aggregator::finish() {
  end_bundle();
  finished_ = true;
  final_cursor_ = 0;
}

std::unique_ptr<ArrowArray> Aggregator::take() {
  if (finished_ && emit_ == Emit::Final) {
    while (final_cursor_ < keys_.size() && out_.length() < max_output_rows_) {
      const auto k = static_cast<uint32_t>(final_cursor_++);
      if (rows_[k] <= 0) continue;
      current_values(k, scratch_.data());
      emit_row(changes::ChangeKind::Insert, k, scratch_.data());
    }
  }
  if (out_.length() == 0) return nullptr;
  auto out = std::make_unique<ArrowArray>();
  out_.export_to(out.get());
  return out;
}

size_t Aggregator::live_keys() const {
  size_t n = 0;
  for (const int64_t r : rows_) n += r > 0 ? 1 : 0;
  return n;
}

void Aggregator::mark_changed(uint32_t k) {
  if (changed_[k]) return;
  changed_[k] = 1;
  dirty_.push_back(k);
}

// One key's record of a payload: its key bytes, its row count and each accumulator's state
// (nothing after a row count of 0, which only a changes payload holds).
void Aggregator::save_key(uint32_t k, arrow::ByteBuffer& out) const {
  StateWriter w(out);
  w.put_bytes(keys_.key_of(k));
  w.put<int64_t>(rows_[k]);
  if (rows_[k] > 0) {
    for (const auto& acc : accs_) acc->save(k, w);
  }
}

// The payload of a changelog_agg state value (docs/state.md): the live key count, then per
// live key its record (save_key). The header around it (version, plan identity, checksum) is
// state/format.h's.
void Aggregator::dump(arrow::ByteBuffer& out) {
  if (!touched_.empty()) throw std::logic_error("changelog aggregator: dump() with a bundle open");
  const size_t start = out.size();
  StateWriter w(out);
  w.put<uint64_t>(live_keys());
  for (uint32_t k = 0; k < rows_.size(); ++k) {
    if (rows_[k] > 0) save_key(k, out);
  }
  for (const uint32_t k : dirty_) changed_[k] = 0;
  dirty_.clear();
  stats_.state_bytes_dumped += static_cast<int64_t>(out.size() - start);
}

// A changes payload: the changed key count, then per changed key its record (save_key), with a
// row count of 0 for a key that left.
void Aggregator::dump_changes(arrow::ByteBuffer& out) {
  if (!touched_.empty()) {
    throw std::logic_error("changelog aggregator: dump_changes() with a bundle open");
  }
  const size_t start = out.size();
  StateWriter(out).put<uint64_t>(dirty_.size());
  for (const uint32_t k : dirty_) {
    save_key(k, out);
    changed_[k] = 0;
  }
  dirty_.clear();
  stats_.state_bytes_dumped += static_cast<int64_t>(out.size() - start);
}

void Aggregator::load(std::string_view payload) {
  if (!touched_.empty()) throw std::logic_error("changelog aggregator: load() with a bundle open");
  StateReader r(payload);
  const auto n = r.get<uint64_t>();
  for (uint64_t i = 0; i < n; ++i) {
    const std::string_view key = r.get_bytes();
    const size_t before = keys_.size();
    const uint32_t k = key_id(key, agg::hash_bytes(key));
    if (keys_.size() == before)
      throw std::invalid_argument("changelog_agg state: a key appears twice in the state");
    const auto rows = r.get<int64_t>();
    if (rows <= 0)
      throw std::invalid_argument("changelog_agg state: a key without rows in the state");
    rows_[k] = rows;
    for (auto& acc : accs_) acc->load(k, r);
  }
  if (!r.done())
    throw std::invalid_argument("changelog_agg state: trailing bytes after the last key");
  stats_.keys_loaded += static_cast<int64_t>(n);
  stats_.state_bytes_loaded += static_cast<int64_t>(payload.size());
}

void Aggregator::apply_changes(std::string_view payload) {
  if (!touched_.empty()) {
    throw std::logic_error("changelog aggregator: apply_changes() with a bundle open");
  }
  StateReader r(payload);
  const auto n = r.get<uint64_t>();
  for (uint64_t i = 0; i < n; ++i) {
    const std::string_view key = r.get_bytes();
    const uint32_t k = key_id(key, agg::hash_bytes(key));
    const auto rows = r.get<int64_t>();
    if (rows < 0)
      throw std::invalid_argument("changelog_agg state: a negative row count in the changes");
    if (rows_[k] > 0) {
      for (auto& acc : accs_) acc->clear_key(k);
    }
    rows_[k] = rows;
    if (rows > 0) {
      for (auto& acc : accs_) acc->load(k, r);
    }
  }
  if (!r.done())
    throw std::invalid_argument("changelog_agg state: trailing bytes after the last changed key");
  stats_.keys_loaded += static_cast<int64_t>(n);
  stats_.state_bytes_loaded += static_cast<int64_t>(payload.size());
}

void Aggregator::reset() {
  keys_.clear();
  rows_.clear();
  mark_.clear();
  changed_.clear();
  dirty_.clear();
  touched_.clear();
  before_live_.clear();
  before_.clear();
  before_strings_.clear();
  bundle_rows_ = 0;
  for (auto& acc : accs_) acc->reset();
  finished_ = false;
  final_cursor_ = 0;
  if (out_.length() > 0) out_.truncate(0);
  stats_ = AggregatorStats{};
}

size_t Aggregator::memory_usage() const {
  size_t n = keys_.memory_usage() + rows_.capacity() * sizeof(int64_t) +
             mark_.capacity() * sizeof(uint32_t) + before_.capacity() * sizeof(Scalar) +
             changed_.capacity() + dirty_.capacity() * sizeof(uint32_t) +
             before_strings_.capacity() + out_.memory_usage();
  for (const auto& acc : accs_) n += acc->memory_usage();
  return n;
}

}  // namespace sliceflow::changelog
