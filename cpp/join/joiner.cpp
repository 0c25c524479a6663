// The regular join over whole batches (see joiner.h); emitted changes counted with
// changes/change_counts.h.
#include "join/joiner.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "agg/key_codec.h"
#include "arrow/byte_buffer.h"
#include "changes/change_kind.h"

namespace sliceflow::join {
namespace {

using arrow::ColumnView;
using arrow::Layout;
using changes::ChangeKind;

[[noreturn]] void mismatch(const std::string& what) {
  throw std::invalid_argument("join kernel: " + what);
}

const char* side_name(int side) { return side == kLeft ? "left" : "right"; }

constexpr int64_t kChunk = 4096;  // rows encoded at a time, which bounds the encoders' scratch

}  // namespace

Joiner::Joiner(Plan plan) : plan_(plan) { plan_.validate(); }

uint32_t Joiner::slot_of(std::string_view key, bool null_key) {
  const size_t before = keys_.size();
  const uint32_t slot = keys_.find_or_insert(key, 0, agg::hash_bytes(key));
  if (keys_.size() != before) {
    for (int s = 0; s < 2; ++s) {
      head_[s].push_back(-1);
      tail_[s].push_back(-1);
      count_[s].push_back(0);
    }
    null_key_.push_back(null_key ? 1 : 0);
    touched_pos_.push_back(0);
  }
  return slot;
}

bool Joiner::same_identity(int side, int64_t a, int64_t b) const {
  const std::vector<size_t>& off = id_offsets_[side];
  const auto ia = static_cast<size_t>(a);
  const auto ib = static_cast<size_t>(b);
  const size_t la = off[ia + 1] - off[ia];
  const size_t lb = off[ib + 1] - off[ib];
  return la == lb &&
         arrow::equal_bytes(id_bytes_[side].data() + off[ia], id_bytes_[side].data() + off[ib], la);
}

void Joiner::link(int side, uint32_t slot, int64_t row) {
  next_[side][static_cast<size_t>(row)] = -1;
  if (tail_[side][slot] < 0) {
    head_[side][slot] = row;
  } else {
    next_[side][static_cast<size_t>(tail_[side][slot])] = row;
  }
  tail_[side][slot] = row;
  ++count_[side][slot];
}

int64_t Joiner::unlink_equal(int side, uint32_t slot, int64_t row) {
  // The latest live row equal to `row` leaves.
  std::vector<int64_t>& next = next_[side];
  const uint64_t h = id_hash_[side][static_cast<size_t>(row)];
  int64_t found = -1, found_prev = -1, prev = -1;
  for (int64_t r = head_[side][slot]; r >= 0; prev = r, r = next[static_cast<size_t>(r)]) {
    if (id_hash_[side][static_cast<size_t>(r)] == h && same_identity(side, r, row)) {
      found = r;
      found_prev = prev;
    }
  }
  if (found < 0) return -1;
  const int64_t after = next[static_cast<size_t>(found)];
  if (found_prev < 0) {
    head_[side][slot] = after;
  } else {
    next[static_cast<size_t>(found_prev)] = after;
  }
  if (tail_[side][slot] == found) tail_[side][slot] = found_prev;
  --count_[side][slot];
  return found;
}

void Joiner::touch(uint32_t slot) {
  if (touched_pos_[slot] != 0) return;
  touched_list_.push_back(slot);
  touched_pos_[slot] = static_cast<uint32_t>(touched_list_.size());
  ++stats_.state_reads;
}

void Joiner::encode_identities(int side, const ColumnView& v, int64_t base) {
  const int32_t n_id = plan_.identity[side];
  const int64_t n = v.length();
  std::vector<size_t>& off = id_offsets_[side];
  std::vector<char>& bytes = id_bytes_[side];
  if (n_id == 0) {
    for (int64_t r = 0; r < n; ++r) off[static_cast<size_t>(base + r + 1)] = bytes.size();
    return;  // every row of a key is the same row; hashes stay 0
  }
  std::vector<const ColumnView*> cols;
  for (int32_t j = 0; j < n_id; ++j)
    cols.push_back(&v.child(static_cast<size_t>(plan_.num_keys + j)));
  agg::KeyEncoder enc(std::move(cols));
  for (int64_t begin = 0; begin < n; begin += kChunk) {
    const int64_t end = std::min(n, begin + kChunk);
    enc.encode(begin, end);
    for (int64_t r = begin; r < end; ++r) {
      const std::string_view id = enc.key(r);
      bytes.insert(bytes.end(), id.begin(), id.end());
      const auto c = static_cast<size_t>(base + r);
      off[c + 1] = bytes.size();
      id_hash_[side][c] = agg::hash_bytes(id);
    }
  }
}

void Joiner::load_side(int side, const ColumnView& v, int64_t base, std::vector<uint32_t>* slots) {
  // The slot of every row (kDropped: a null key on a side that is not outer); state rows
  // (slots == nullptr) are linked at once.
  std::vector<const ColumnView*> cols;
  for (int32_t k = 0; k < plan_.num_keys; ++k) cols.push_back(&v.child(static_cast<size_t>(k)));
  agg::KeyEncoder enc(cols);
  const bool outer = plan_.outer(side);
  const int64_t n = v.length();
  for (int64_t begin = 0; begin < n; begin += kChunk) {
    const int64_t end = std::min(n, begin + kChunk);
    enc.encode(begin, end);
    for (int64_t r = begin; r < end; ++r) {
      bool null_key = false;
      for (const ColumnView* c : cols) null_key = null_key || c->is_null(r);
      uint32_t slot = kDropped;
      if (null_key && !outer) {
        ++stats_.rows_null_key;
      } else {
        slot = slot_of(enc.key(r), null_key);
        if (slots == nullptr) link(side, slot, base + r);
      }
      if (slots != nullptr) slots->push_back(slot);
    }
  }
}

void Joiner::reset(int64_t state_rows[2], int64_t new_rows[2]) {
  keys_.clear();
  null_key_.clear();
  touched_pos_.clear();
  touched_list_.clear();
  changes_.clear();
  emit_ops_.clear();
  pending_ops_.clear();
  for (int s = 0; s < 2; ++s) {
    head_[s].clear();
    tail_[s].clear();
    count_[s].clear();
    emit_[s].clear();
    pending_[s].clear();
    keep_[s].clear();
    const auto total = static_cast<size_t>(state_rows[s] + new_rows[s]);
    next_[s].assign(total, -1);
    id_hash_[s].assign(total, 0);
    id_bytes_[s].clear();
    id_offsets_[s].assign(total + 1, 0);
    state_rows_[s] = state_rows[s];
  }
}

void Joiner::step(const ArrowSchema* state_schema[2], const ArrowArray* state[2],
                  const ArrowSchema* rows_schema[2], const ArrowArray* rows[2], const int8_t* order,
                  int64_t order_length) {
  const ColumnView st[2] = {ColumnView(*state_schema[0], *state[0]),
                            ColumnView(*state_schema[1], *state[1])};
  const ColumnView in[2] = {ColumnView(*rows_schema[0], *rows[0]),
                            ColumnView(*rows_schema[1], *rows[1])};
  for (int s = 0; s < 2; ++s) {
    if (st[s].layout() != Layout::Struct ||
        st[s].num_children() != static_cast<size_t>(plan_.state_columns(s))) {
      mismatch(std::string("the ") + side_name(s) +
               " state batch does not have the plan's columns");
    }
    if (in[s].layout() != Layout::Struct ||
        in[s].num_children() != static_cast<size_t>(plan_.input_columns(s))) {
      mismatch(std::string("the ") + side_name(s) + " batch does not have the plan's columns");
    }
    if (plan_.retracting[s]) {
      const ColumnView& op = in[s].child(static_cast<size_t>(plan_.input_columns(s) - 1));
      if (op.layout() != Layout::Int8) {
        mismatch(std::string("the ") + side_name(s) + " op codes must be an int8 column");
      }
    }
  }
  // Key types only once every batch is known to have its columns.
  for (int32_t k = 0; k < plan_.num_keys; ++k) {
    const auto kc = static_cast<size_t>(k);
    const Layout layout = in[kLeft].child(kc).layout();
    if (st[kLeft].child(kc).layout() != layout || st[kRight].child(kc).layout() != layout ||
        in[kRight].child(kc).layout() != layout) {
      mismatch("key column " + std::to_string(k) + " differs in type between the batches");
    }
  }
  int64_t counted[2] = {0, 0};
  for (int64_t i = 0; i < order_length; ++i) {
    const int8_t s = order[i];
    if (s != kLeft && s != kRight) mismatch("an arrival order entry is not 0 (left) or 1 (right)");
    ++counted[s];
  }
  if (counted[kLeft] != in[kLeft].length() || counted[kRight] != in[kRight].length()) {
    mismatch("the arrival order does not count each side's new rows");
  }
  int64_t state_rows[2] = {st[0].length(), st[1].length()};
  int64_t new_rows[2] = {in[0].length(), in[1].length()};
  reset(state_rows, new_rows);

  std::vector<uint32_t> slots[2];
  for (int s = 0; s < 2; ++s) {
    encode_identities(s, st[s], 0);
    encode_identities(s, in[s], state_rows[s]);
    load_side(s, st[s], 0, nullptr);
  }
  stats_.keys_loaded += static_cast<int64_t>(keys_.size());
  for (int s = 0; s < 2; ++s) {
    slots[s].reserve(static_cast<size_t>(new_rows[s]));
    load_side(s, in[s], state_rows[s], &slots[s]);
  }
  stats_.left_rows_in += new_rows[kLeft];
  stats_.right_rows_in += new_rows[kRight];

  int64_t next_row[2] = {0, 0};
  int64_t in_bundle = 0;
  for (int64_t i = 0; i < order_length; ++i) {
    const int s = order[i];
    const int64_t r = next_row[s]++;
    ChangeKind kind = ChangeKind::Insert;
    if (plan_.retracting[s]) {
      const ColumnView& op = in[s].child(static_cast<size_t>(plan_.input_columns(s) - 1));
      const int64_t code = op.is_null(r) ? 0 : op.i64(r);
      if (!changes::is_code(code)) {
        mismatch(std::string("op code ") + std::to_string(code) + " at row " + std::to_string(r) +
                 " of the " + side_name(s) + " rows is not a change kind");
      }
      kind = static_cast<ChangeKind>(code);
    }
    const uint32_t slot = slots[s][static_cast<size_t>(r)];
    if (slot != kDropped) {
      const int64_t c = state_rows[s] + r;
      touch(slot);
      if (changes::retracts(kind)) {
        ++stats_.retractions_in;
        const int64_t found = unlink_equal(s, slot, c);
        if (found < 0) {
          ++stats_.retractions_ignored;
        } else {
          changes_.push_back(Change{slot, s, found, -1});
        }
      } else {
        link(s, slot, c);
        changes_.push_back(Change{slot, s, c, +1});
      }
    }
    if (!plan_.mini_batch) {
      end_bundle(changes::code(kind));
    } else if (++in_bundle == plan_.bundle_rows) {
      end_bundle(-1);
      in_bundle = 0;
    }
  }
  end_bundle(-1);

  live_keys_ = 0;
  for (size_t k = 0; k < keys_.size(); ++k) {
    if (count_[kLeft][k] + count_[kRight][k] > 0) ++live_keys_;
    for (int s = 0; s < 2; ++s) {
      for (int64_t r = head_[s][k]; r >= 0; r = next_[s][static_cast<size_t>(r)]) {
        keep_[s].push_back(r);
      }
    }
  }
  std::sort(keep_[kLeft].begin(), keep_[kLeft].end());
  std::sort(keep_[kRight].begin(), keep_[kRight].end());
}

void Joiner::end_bundle(int8_t kind_hint) {
  if (touched_list_.empty()) return;
  ++stats_.bundles;
  // The bundle's changes grouped by key, keys in the order the bundle first touched them.
  std::stable_sort(changes_.begin(), changes_.end(), [&](const Change& a, const Change& b) {
    return touched_pos_[a.slot] < touched_pos_[b.slot];
  });
  size_t i = 0;
  for (const uint32_t slot : touched_list_) {
    const size_t begin = i;
    while (i < changes_.size() && changes_[i].slot == slot) ++i;
    flush(slot, changes_.data() + begin, changes_.data() + i, kind_hint);
    touched_pos_[slot] = 0;
  }
  touched_list_.clear();
  changes_.clear();
}

void Joiner::build_deltas(int side, const Change* begin, const Change* end) {
  // The side's changes of one key as net counts per identity value, by hash.
  std::vector<Delta>& out = deltas_[side];
  out.clear();
  scratch_.clear();
  for (const Change* c = begin; c != end; ++c) {
    if (c->side == side)
      scratch_.emplace_back(id_hash_[side][static_cast<size_t>(c->row)], c - begin);
  }
  std::sort(scratch_.begin(), scratch_.end());
  size_t run = 0;
  for (size_t j = 0; j < scratch_.size(); ++j) {
    const uint64_t h = scratch_[j].first;
    const Change& c = begin[scratch_[j].second];
    if (j == 0 || scratch_[j - 1].first != h) run = out.size();
    bool merged = false;
    for (size_t d = run; d < out.size(); ++d) {
      if (same_identity(side, out[d].row, c.row)) {
        out[d].net += c.sign;
        if (c.sign > 0) out[d].row = c.row;
        merged = true;
        break;
      }
    }
    if (!merged) out.push_back(Delta{h, c.row, c.sign, 0});
  }
  out.erase(std::remove_if(out.begin(), out.end(), [](const Delta& d) { return d.net == 0; }),
            out.end());
}

int64_t Joiner::find_delta(int side, int64_t row) const {
  const std::vector<Delta>& ds = deltas_[side];
  if (ds.empty()) return -1;
  const uint64_t h = id_hash_[side][static_cast<size_t>(row)];
  auto it = std::lower_bound(ds.begin(), ds.end(), h,
                             [](const Delta& d, uint64_t v) { return d.hash < v; });
  for (; it != ds.end() && it->hash == h; ++it) {
    if (same_identity(side, it->row, row)) return it - ds.begin();
  }
  return -1;
}

void Joiner::emit(int64_t left, int64_t right, int64_t copies, bool insert, int8_t kind_hint) {
  // An inner join without mini-batch forwards the row's own kind (Flink's operator); every
  // other change is +I or -D.
  ChangeKind kind = insert ? ChangeKind::Insert : ChangeKind::Delete;
  if (kind_hint >= 0 && plan_.how == How::Inner && left >= 0 && right >= 0) {
    kind = static_cast<ChangeKind>(kind_hint);
  }
  for (int64_t n = 0; n < copies; ++n) {
    std::vector<int64_t>* out = insert ? pending_ : emit_;
    out[kLeft].push_back(left);
    out[kRight].push_back(right);
    (insert ? pending_ops_ : emit_ops_).push_back(changes::code(kind));
    stats_.changes.count(kind);
  }
}

void Joiner::flush(uint32_t slot, const Change* begin, const Change* end, int8_t kind_hint) {
  build_deltas(kLeft, begin, end);
  build_deltas(kRight, begin, end);
  const std::vector<Delta>& dl = deltas_[kLeft];
  const std::vector<Delta>& dr = deltas_[kRight];
  if (dl.empty() && dr.empty()) return;
  ++stats_.state_writes;
  // Live copies of each changed value after the bundle.
  for (int s = 0; s < 2; ++s) {
    for (int64_t r = head_[s][slot]; r >= 0; r = next_[s][static_cast<size_t>(r)]) {
      const int64_t d = find_delta(s, r);
      if (d >= 0) ++deltas_[s][static_cast<size_t>(d)].now;
    }
  }
  int64_t now[2] = {count_[kLeft][slot], count_[kRight][slot]};
  int64_t before[2] = {now[0], now[1]};
  for (const Delta& d : dl) before[kLeft] -= d.net;
  for (const Delta& d : dr) before[kRight] -= d.net;
  const bool never = null_key_[slot] != 0;
  auto sign_emit = [&](int64_t l, int64_t r, int64_t net) {
    if (net != 0) emit(l, r, net < 0 ? -net : net, net > 0, kind_hint);
  };

  if (!never) {
    // Changed left values with every unchanged right row, unchanged left rows with every
    // changed right value, and the changed pairs' net count.
    for (const Delta& d : dl) {
      for (int64_t r = head_[kRight][slot]; r >= 0; r = next_[kRight][static_cast<size_t>(r)]) {
        if (find_delta(kRight, r) < 0) sign_emit(d.row, r, d.net);
      }
    }
    for (int64_t l = head_[kLeft][slot]; l >= 0; l = next_[kLeft][static_cast<size_t>(l)]) {
      if (find_delta(kLeft, l) >= 0) continue;
      for (const Delta& d : dr) sign_emit(l, d.row, d.net);
    }
    for (const Delta& a : dl) {
      for (const Delta& b : dr) {
        sign_emit(a.row, b.row, a.now * b.now - (a.now - a.net) * (b.now - b.net));
      }
    }
  }
  // Padded rows: a side's rows while the other side of the key has none.
  for (int s = 0; s < 2; ++s) {
    if (!plan_.outer(s)) continue;
    const int o = 1 - s;
    const bool was = never || before[o] == 0;
    const bool is = never || now[o] == 0;
    auto padded = [&](int64_t row, int64_t net) {
      if (s == kLeft) {
        sign_emit(row, -1, net);
      } else {
        sign_emit(-1, row, net);
      }
    };
    if (was && is) {
      for (const Delta& d : deltas_[s]) padded(d.row, d.net);
    } else if (was) {  // the first match arrived: the padded rows before the bundle leave
      for (int64_t r = head_[s][slot]; r >= 0; r = next_[s][static_cast<size_t>(r)]) {
        if (find_delta(s, r) < 0) padded(r, -1);
      }
      for (const Delta& d : deltas_[s]) padded(d.row, -(d.now - d.net));
    } else if (is) {  // the last match left: every live row comes back padded
      for (int64_t r = head_[s][slot]; r >= 0; r = next_[s][static_cast<size_t>(r)]) padded(r, 1);
    }
  }
  // A key's retractions, then its insertions.
  for (int s = 0; s < 2; ++s) {
    emit_[s].insert(emit_[s].end(), pending_[s].begin(), pending_[s].end());
    pending_[s].clear();
  }
  emit_ops_.insert(emit_ops_.end(), pending_ops_.begin(), pending_ops_.end());
  pending_ops_.clear();
}

}  // namespace sliceflow::join
