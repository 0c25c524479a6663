// Deduplication (Flink SQL's ROW_NUMBER() OVER (PARTITION BY key ORDER BY ...) = 1) over whole
// Arrow batches. The kernel never copies a row's payload: it reads the encoded key columns
// (agg/key_codec.h), the one order column and, for a retracting input, the identity columns a
// retraction is matched on, and answers with row indices. The caller keeps the payload in
// Arrow and builds the output and the next state with take().
//
// One step sees two batches, the retained rows of the state (`state`, in arrival order) and
// the new rows (`rows`, in arrival order); row c of the step is state row c for c < S and new
// row c - S otherwise. The result is the changes to emit (row index and op, in order) and the
// rows to retain (ascending): per key the kept row, or with a retracting input every live row
// (what Flink's retractable rank keeps, so that a retraction of the kept row brings the next
// one back; that state grows with the live rows of a key).
//
// Which row is kept: keep=first: the smallest order value (nulls first, NaN last, as Spark's
// ascending sort), ties to the earlier arrival; keep=last: the largest (Spark's descending
// sort puts nulls last), ties to the later arrival; without an order column, arrival order
// alone. Mini-batch: the new rows are cut into bundles of bundle_rows, and each key touched in
// a bundle emits one net change at its end (-U old, +U new; +I for a new key, -D for a key
// whose last live row was retracted; nothing when the kept row did not change); without it
// every row emits its change at once. Cost: O(rows) hashing of keys (and identities), no
// per-row allocation; a retraction scans its key's live rows.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "arrow/c_data.h"
#include "arrow/column_view.h"
#include "bundle/bundle_buffer.h"
#include "changes/change_counts.h"
#include "dedup/plan.h"

namespace sliceflow::dedup {

struct Stats {
  int64_t rows_in = 0;
  int64_t retractions_in = 0;
  int64_t retractions_ignored = 0;
  int64_t keys_loaded = 0;
  int64_t state_reads = 0;
  int64_t state_writes = 0;
  changes::ChangeCounts changes;  // emitted +I, -U, +U, -D
  int64_t bundles = 0;

  std::vector<std::pair<const char*, int64_t>> named() const {
    std::vector<std::pair<const char*, int64_t>> out = {
        {"rows_in", rows_in},
        {"retractions_in", retractions_in},
        {"retractions_ignored", retractions_ignored},
        {"keys_loaded", keys_loaded},
        {"state_reads", state_reads},
        {"state_writes", state_writes}};
    changes.append_named(out);
    out.emplace_back("bundles", bundles);
    return out;
  }
};

class Deduplicator {
 public:
  explicit Deduplicator(Plan plan);

  // One step over the retained rows and the new rows (struct arrays of the plan's state and
  // input columns). Throws std::invalid_argument for a batch that does not match the plan,
  // and changes::NotAChangeKind (naming the op column, the value and its row of `rows`) for an
  // op value that is not a change kind.
  void step(const ArrowSchema& state_schema, const ArrowArray& state,
            const ArrowSchema& rows_schema, const ArrowArray& rows);

  // The last step's changes (row index, op) in emission order, and the rows to retain.
  const std::vector<int64_t>& emit_rows() const { return emit_rows_; }
  const std::vector<int8_t>& emit_ops() const { return emit_ops_; }
  const std::vector<int64_t>& keep_rows() const { return keep_rows_; }
  // Keys with a retained row after the last step.
  int64_t live_keys() const { return live_keys_; }
  const Stats& stats() const { return stats_; }

 private:
  struct Side {
    const arrow::ColumnView* order = nullptr;
    int64_t base = 0;  // the step row of its row 0
  };
  // -1, 0, 1 as Spark's ascending order (nulls first) compares rows a and b.
  int compare(int64_t a, int64_t b) const;
  // Whether row c is kept over row best (both of one key; c arrived later).
  bool better(int64_t c, int64_t best) const;
  bool same_identity(int64_t a, int64_t b) const;
  uint32_t slot_of(std::string_view key);
  void insert(uint32_t slot, int64_t c);
  void retract(uint32_t slot, int64_t c);
  void touch(uint32_t slot);
  void flush(uint32_t slot);
  void end_bundle();
  void encode_identities(const arrow::ColumnView& input, int64_t base);

  Plan plan_;
  Stats stats_;
  Side state_side_, rows_side_;
  int64_t state_rows_ = 0;
  bundle::BundleBuffer keys_;
  // Per key slot: the row emitted last (-1: none), the kept row (-1: none), the live rows'
  // list (retracting: head and tail through next_), whether the open bundle touched it.
  std::vector<int64_t> emitted_, best_, head_, tail_;
  std::vector<uint8_t> touched_;
  std::vector<uint32_t> touched_list_;
  // Per step row (retracting): the next live row of its key (-1: last), and its identity bytes.
  std::vector<int64_t> next_;
  std::vector<char> identity_bytes_;
  std::vector<size_t> identity_offsets_;
  std::vector<int64_t> emit_rows_, keep_rows_;
  std::vector<int8_t> emit_ops_;
  int64_t live_keys_ = 0;
};

}  // namespace sliceflow::dedup
