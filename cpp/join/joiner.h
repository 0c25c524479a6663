// A regular equi-join of two changelogs (Flink SQL's streaming join, with mini-batch) over whole
// Arrow batches. The kernel never copies a row's payload: it reads each side's encoded key
// columns (agg/key_codec.h), its other columns as the identity a retraction is matched on, and
// the op codes of a retracting side, and answers with row indices. The caller keeps the rows in
// Arrow and builds the output (take() on each side, null where the index is -1) and the next
// state (take() of the live rows).
//
// One step sees, per side, the live rows of the state (its keys' rows, in arrival order) and the
// new rows, and the order in which the new rows of both sides arrived (one side code per row).
// Row c of a side is its state row c for c < S, else its new row c - S. Each side is a multiset
// of rows per key: +I/+U add a row, -U/-D take back the latest live row equal to it (one that
// matches none is ignored and counted). The output is a changelog whose materialization is the
// join of the two multisets after every bundle:
//  * matched rows: every pair of a left and a right row of one key (a key with a null column
//    matches nothing);
//  * the left rows of a left or full join while their key has no right row, null-padded (and
//    the right rows of a right or full join); a padded row is taken back when the first match
//    arrives and comes back when the last one leaves (Flink's association counts, which for an
//    equi-join are the other side's live rows of the key).
// Rows with a null key column on a side that is not outer never match nor emit: they are not
// kept (rows_null_key counts them).
//
// Mini-batch: the new rows are cut into bundles of bundle_rows rows, and each key touched in a
// bundle emits, at its end, the net change of each of its output rows once (a row added and
// taken back within the bundle emits nothing); changes are +I and -D, a key's -D first.
// Without mini-batch every row is a bundle of its own, which is Flink's StreamingJoinOperator:
// an inner join forwards the row's kind (+I/+U/-U/-D), an outer join emits +I and -D.
//
// Cost per bundle and touched key: the key's live rows of both sides once (the other side's
// rows to pair with, the padded rows when the first match arrives or the last leaves) plus the
// output; O(rows) hashing of keys and identities; a retraction scans its key's live rows of its
// side. No per-row allocation.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "arrow/c_data.h"
#include "arrow/column_view.h"
#include "bundle/bundle_buffer.h"
#include "changes/change_counts.h"
#include "join/plan.h"

namespace sliceflow::join {

struct Stats {
  int64_t left_rows_in = 0;
  int64_t right_rows_in = 0;
  int64_t retractions_in = 0;
  int64_t retractions_ignored = 0;
  int64_t rows_null_key = 0;  // rows of a side that is not outer with a null key: dropped
  int64_t keys_loaded = 0;
  int64_t state_reads = 0;        // per key and bundle (per row without mini-batch)
  int64_t state_writes = 0;       // per key and bundle whose rows changed (per row without)
  changes::ChangeCounts changes;  // emitted +I, -U, +U, -D
  int64_t bundles = 0;

  std::vector<std::pair<const char*, int64_t>> named() const {
    std::vector<std::pair<const char*, int64_t>> out = {
        {"left_rows_in", left_rows_in},     {"right_rows_in", right_rows_in},
        {"retractions_in", retractions_in}, {"retractions_ignored", retractions_ignored},
        {"rows_null_key", rows_null_key},   {"keys_loaded", keys_loaded},
        {"state_reads", state_reads},       {"state_writes", state_writes}};
    changes.append_named(out);
    out.emplace_back("bundles", bundles);
    return out;
  }
};

class Joiner {
 public:
  explicit Joiner(Plan plan);

  // One step. `state[s]`, `rows[s]`: struct arrays of side s's state and new rows (the plan's
  // columns); `order`: `order_length` side codes (0 left, 1 right), one per new row in arrival
  // order. Throws std::invalid_argument for batches that do not match the plan, an order that
  // does not count each side's new rows, or an op code that is not a change kind.
  void step(const ArrowSchema* state_schema[2], const ArrowArray* state[2],
            const ArrowSchema* rows_schema[2], const ArrowArray* rows[2], const int8_t* order,
            int64_t order_length);

  // The last step's changes in emission order: the left and the right row of each (-1: null,
  // a padded row) and its op code; and each side's live rows (ascending).
  const std::vector<int64_t>& emit_left() const { return emit_[kLeft]; }
  const std::vector<int64_t>& emit_right() const { return emit_[kRight]; }
  const std::vector<int8_t>& emit_ops() const { return emit_ops_; }
  const std::vector<int64_t>& keep_rows(int side) const { return keep_[side]; }
  // Keys with a live row on either side after the last step.
  int64_t live_keys() const { return live_keys_; }
  const Stats& stats() const { return stats_; }

 private:
  static constexpr uint32_t kDropped = 0xFFFFFFFFu;
  struct Change {
    uint32_t slot;
    int32_t side;
    int64_t row;
    int64_t sign;  // +1 a row added, -1 a live row taken back
  };
  // One identity value of a key's side whose live count changed in the bundle.
  struct Delta {
    uint64_t hash;
    int64_t row;      // a row holding the value (for its payload)
    int64_t net;      // live copies added (negative: taken back)
    int64_t now = 0;  // live copies after the bundle
  };

  void reset(int64_t state_rows[2], int64_t new_rows[2]);
  void load_side(int side, const arrow::ColumnView& v, int64_t base, std::vector<uint32_t>* slots);
  void encode_identities(int side, const arrow::ColumnView& v, int64_t base);
  uint32_t slot_of(std::string_view key, bool null_key);
  bool same_identity(int side, int64_t a, int64_t b) const;
  void link(int side, uint32_t slot, int64_t row);
  int64_t unlink_equal(int side, uint32_t slot, int64_t row);
  void touch(uint32_t slot);
  void end_bundle(int8_t kind_hint);
  void flush(uint32_t slot, const Change* begin, const Change* end, int8_t kind_hint);
  void build_deltas(int side, const Change* begin, const Change* end);
  int64_t find_delta(int side, int64_t row) const;
  void emit(int64_t left, int64_t right, int64_t copies, bool insert, int8_t kind_hint);

  Plan plan_;
  Stats stats_;
  int64_t state_rows_[2] = {0, 0};
  bundle::BundleBuffer keys_;
  // Per key slot: each side's live rows (a list through next_), their count, whether its key
  // has a null column, whether the open bundle touched it (its position in touched_list_ + 1).
  std::vector<int64_t> head_[2], tail_[2], count_[2];
  std::vector<uint8_t> null_key_;
  std::vector<uint32_t> touched_pos_;
  std::vector<uint32_t> touched_list_;
  // Per side and row: the next live row of its key (-1: last), its identity hash and bytes.
  std::vector<int64_t> next_[2];
  std::vector<uint64_t> id_hash_[2];
  std::vector<char> id_bytes_[2];
  std::vector<size_t> id_offsets_[2];
  // The open bundle's changes, and scratch for one key's deltas.
  std::vector<Change> changes_;
  std::vector<Delta> deltas_[2];
  std::vector<std::pair<uint64_t, size_t>> scratch_;
  // The step's output.
  std::vector<int64_t> emit_[2];
  std::vector<int8_t> emit_ops_;
  std::vector<int64_t> pending_[2];  // a key's insertions, emitted after its retractions
  std::vector<int8_t> pending_ops_;
  std::vector<int64_t> keep_[2];
  int64_t live_keys_ = 0;
};

}  // namespace sliceflow::join
