// Top-N per key over encoded rows (see ranker.h): the Runner places rows, diffs each touched
// key's top n per bundle and counts what it emits (changes/change_counts.h).
#include "topn/ranker.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "changes/change_kind.h"

namespace sliceflow::topn {
namespace {

using changes::ChangeKind;

struct KeyState {
  std::vector<int64_t> entries;  // row indices, ordered by (sort key, arrival)
  std::vector<int64_t> before;   // the top n at the start of the open bundle
  bool touched = false;
};

class Runner {
 public:
  Runner(const Plan& plan, const Rows& rows, Result& out) : plan_(plan), rows_(rows), out_(out) {}

  void run() {
    const auto total = static_cast<int64_t>(rows_.keys.size());
    key_ids_.reserve(static_cast<size_t>(total));
    for (int64_t i = 0; i < rows_.state_rows; ++i) keys_[key_id(i)].entries.push_back(i);
    if (plan_.emit == Emit::Final) {
      for (int64_t i = rows_.state_rows; i < total; ++i) apply(i, keys_[key_id(i)]);
      for (auto& k : keys_) {
        const auto top = std::min<size_t>(k.entries.size(), static_cast<size_t>(plan_.n));
        for (size_t r = 0; r < top; ++r) emit(k.entries[r], ChangeKind::Insert, r);
      }
    } else {
      const int64_t step = plan_.mini_batch ? std::max<int64_t>(plan_.bundle_rows, 1) : 1;
      for (int64_t begin = rows_.state_rows; begin < total; begin += step) {
        const int64_t end = std::min(total, begin + step);
        for (int64_t i = begin; i < end; ++i) {
          const size_t id = key_id(i);
          auto& k = keys_[id];
          if (!k.touched) {
            k.touched = true;
            k.before.assign(k.entries.begin(),
                            k.entries.begin() + static_cast<std::ptrdiff_t>(top_size(k)));
            touched_.push_back(id);
            ++reads_;
          }
          apply(i, k);
        }
        end_bundle();
      }
    }
    for (const auto& k : keys_)
      out_.keep.insert(out_.keep.end(), k.entries.begin(), k.entries.end());
    Stats& stats = out_.stats;
    stats.rows_in = total - rows_.state_rows;
    stats.state_reads = reads_;
    stats.state_writes = reads_;
    stats.retractions_ignored = ignored_;
    stats.rows_out = static_cast<int64_t>(out_.index.size());
    stats.rows_kept = static_cast<int64_t>(out_.keep.size());
    stats.keys = static_cast<int64_t>(keys_.size());
  }

 private:
  size_t key_id(int64_t row) {
    const auto [it, added] =
        key_ids_.try_emplace(rows_.keys[static_cast<size_t>(row)], keys_.size());
    if (added) keys_.emplace_back();
    return it->second;
  }

  size_t top_size(const KeyState& k) const {
    return std::min<size_t>(k.entries.size(), static_cast<size_t>(plan_.n));
  }

  std::string_view sort_key(int64_t row) const { return rows_.sort_keys[static_cast<size_t>(row)]; }

  bool same(int64_t a, int64_t b) const {
    if (a == b) return true;
    return plan_.retract &&
           rows_.row_ids[static_cast<size_t>(a)] == rows_.row_ids[static_cast<size_t>(b)];
  }

  void apply(int64_t row, KeyState& k) {
    const auto kind = static_cast<ChangeKind>(rows_.ops[static_cast<size_t>(row)]);
    const std::string_view s = sort_key(row);
    auto less = [this](std::string_view key, int64_t e) { return key < sort_key(e); };
    auto first_not_less = [this](int64_t e, std::string_view key) { return sort_key(e) < key; };
    if (!changes::retracts(kind) || !plan_.retract) {
      // After every equal row: this one arrived last.
      const auto at = std::upper_bound(k.entries.begin(), k.entries.end(), s, less);
      if (!plan_.retract && at - k.entries.begin() >= plan_.n) return;  // never enters
      k.entries.insert(at, row);
      if (!plan_.retract && static_cast<int64_t>(k.entries.size()) > plan_.n) k.entries.pop_back();
      return;
    }
    auto it = std::lower_bound(k.entries.begin(), k.entries.end(), s, first_not_less);
    const std::string_view id = rows_.row_ids[static_cast<size_t>(row)];
    for (; it != k.entries.end() && sort_key(*it) == s; ++it) {
      if (rows_.row_ids[static_cast<size_t>(*it)] == id) {
        k.entries.erase(it);
        return;
      }
    }
    ++ignored_;
  }

  void emit(int64_t row, ChangeKind kind, size_t rank) {
    out_.index.push_back(row);
    out_.op.push_back(changes::code(kind));
    out_.stats.changes.count(kind);
    out_.rank.push_back(static_cast<int32_t>(rank + 1));
  }

  void end_bundle() {
    for (const size_t id : touched_) {
      KeyState* k = &keys_[id];
      const auto& before = k->before;
      const size_t after_size = top_size(*k);
      const auto& after = k->entries;
      if (plan_.with_rank) {
        for (size_t r = 0; r < std::max(before.size(), after_size); ++r) {
          const bool has_old = r < before.size();
          const bool has_new = r < after_size;
          if (has_old && has_new) {
            if (same(before[r], after[r])) continue;
            emit(before[r], ChangeKind::UpdateBefore, r);
            emit(after[r], ChangeKind::UpdateAfter, r);
          } else if (has_old) {
            emit(before[r], ChangeKind::Delete, r);
          } else {
            emit(after[r], ChangeKind::Insert, r);
          }
        }
      } else {
        // Multiset difference by identity; n is small, so the quadratic match is cheap.
        matched_.assign(after_size, 0);
        for (size_t r = 0; r < before.size(); ++r) {
          bool kept = false;
          for (size_t j = 0; j < after_size && !kept; ++j) {
            if (matched_[j] == 0 && same(before[r], after[j])) {
              matched_[j] = 1;
              kept = true;
            }
          }
          if (!kept) emit(before[r], ChangeKind::Delete, r);
        }
        for (size_t j = 0; j < after_size; ++j) {
          if (matched_[j] == 0) emit(after[j], ChangeKind::Insert, j);
        }
      }
      k->touched = false;
      k->before.clear();
    }
    touched_.clear();
  }

  const Plan& plan_;
  const Rows& rows_;
  Result& out_;
  std::unordered_map<std::string_view, size_t> key_ids_;
  std::vector<KeyState> keys_;
  std::vector<size_t> touched_;  // indices: keys_ grows while a bundle runs
  std::vector<char> matched_;
  int64_t reads_ = 0;
  int64_t ignored_ = 0;
};

}  // namespace

Plan parse_plan(const agg::PlanFields& fields) {
  Plan p;
  p.n = fields.int64("n");
  if (p.n < 1)
    throw std::invalid_argument("topn plan: n must be at least 1, not " + std::to_string(p.n));
  if (p.n > (int64_t{1} << 30)) throw std::invalid_argument("topn plan: n is too large");
  p.with_rank = fields.boolean("with_rank", true);
  p.mini_batch = fields.boolean("mini_batch", true);
  p.bundle_rows = fields.int64("bundle_rows", 5000);
  if (p.bundle_rows < 1) throw std::invalid_argument("topn plan: bundle_rows must be at least 1");
  p.retract = fields.boolean("retract", false);
  const std::string& emit = fields.string("emit");
  if (emit == "final") {
    p.emit = Emit::Final;
  } else if (emit == "changelog") {
    p.emit = Emit::Changelog;
  } else {
    throw std::invalid_argument("topn plan: emit must be 'final' or 'changelog', not '" + emit +
                                "'");
  }
  return p;
}

Result run(const Plan& plan, const Rows& rows) {
  const size_t total = rows.keys.size();
  if (rows.sort_keys.size() != total || rows.ops.size() != total ||
      (plan.retract && rows.row_ids.size() != total) || rows.state_rows < 0 ||
      static_cast<size_t>(rows.state_rows) > total) {
    throw std::invalid_argument("topn: the key, sort key, row and op columns disagree in length");
  }
  for (const int8_t op : rows.ops) {
    if (!changes::is_code(op)) throw std::invalid_argument("topn: a change kind out of range");
  }
  Result out;
  Runner(plan, rows, out).run();
  return out;
}

}  // namespace sliceflow::topn
