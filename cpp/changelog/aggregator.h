// The global phase (Flink's GroupAggFunction / MiniBatchGroupAggFunction): applies delta rows
// to per-key state one at a time, in arrival order, and emits each key's net change at the end
// of a bundle (a bundle of one row without mini-batch). State comes from and goes back to a
// state blob (streaming: one bucket of Spark's state store) or lives for the whole input
// (batch, emit="final"). docs/changelog-kernel.md is the contract.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "arrow/builder.h"
#include "arrow/byte_buffer.h"
#include "arrow/c_data.h"
#include "arrow/type.h"
#include "bundle/bundle_buffer.h"
#include "changelog/accumulators.h"
#include "changelog/plan.h"
#include "changes/change_counts.h"
#include "changes/change_kind.h"

namespace sliceflow::changelog {

struct AggregatorStats {
  int64_t deltas_in = 0;            // delta rows
  int64_t retractions_ignored = 0;  // retractions for keys without state
  int64_t state_reads = 0;          // per key: once per bundle (once per row without mini-batch)
  int64_t state_writes = 0;         // updates and clears, counted the same way
  changes::ChangeCounts changes;    // emitted +I, -U, +U, -D
  int64_t bundles = 0;
  int64_t keys_loaded = 0;
  int64_t state_bytes_loaded = 0;
  int64_t state_bytes_dumped = 0;
  // The counters by name, as the bindings' stats() dicts show them.
  std::vector<std::pair<const char*, int64_t>> named() const {
    std::vector<std::pair<const char*, int64_t>> out = {
        {"deltas_in", deltas_in},
        {"retractions_ignored", retractions_ignored},
        {"state_reads", state_reads},
        {"state_writes", state_writes}};
    changes.append_named(out);
    out.insert(out.end(), {{"bundles", bundles},
                           {"keys_loaded", keys_loaded},
                           {"state_bytes_loaded", state_bytes_loaded},
                           {"state_bytes_dumped", state_bytes_dumped}});
    return out;
  }
};

class Aggregator {
 public:
  Aggregator(Plan plan, std::unique_ptr<arrow::Type> delta_type,
             std::unique_ptr<arrow::Type> output_type, Emit emit, int64_t max_output_rows);

  // Adds the keys of a state payload (written by dump() under the same plan identity, which
  // the state header checked). No bundle may be open.
  void load(std::string_view payload);
  // Applies delta rows (a struct array of the delta schema).
  void add(const ArrowSchema& schema, const ArrowArray& array);
  // Ends the open bundle (the end of a micro-batch's rows): its net changes become output.
  void end_bundle();
  // End of input: ends the bundle; with emit="final", queues one +I row per live key.
  void finish();
  // Output rows built so far (at most max_output_rows of the final rows at a time), or null.
  std::unique_ptr<ArrowArray> take();
  // Appends the live keys' state (the payload of a state value) to out and marks every key
  // clean (the base of a bucket's state log). No bundle may be open.
  void dump(arrow::ByteBuffer& out);
  // Appends the changes since the last dump() or dump_changes() to out: the keys whose state a
  // bundle changed (docs/state.md, "changes"), each with its new state, or with 0 rows when it
  // has none left. Marks those keys clean. Cost: proportional to the changed keys.
  void dump_changes(arrow::ByteBuffer& out);
  // The number of keys dump_changes() would write.
  size_t changed_keys() const { return dirty_.size(); }
  // Applies a changes payload (dump_changes() of the state this one was loaded from): each key
  // takes its new state, or leaves. The keys stay clean. No bundle may be open.
  void apply_changes(std::string_view payload);
  // Forgets every key and the counters (the next bucket), keeping capacity.
  void reset();
  // Zeroes the counters, keeping the keys (a bucket's state kept from one call to the next).
  void reset_stats() { stats_ = AggregatorStats{}; }
  // Key slots, live or not: a kept state whose slots outnumber its live keys is worth rebuilding.
  size_t key_slots() const { return keys_.size(); }

  const AggregatorStats& stats() const { return stats_; }
  size_t live_keys() const;
  size_t memory_usage() const;

 private:
  uint32_t key_id(std::string_view key, uint64_t hash);
  void touch(uint32_t k);
  void emit_row(changes::ChangeKind kind, uint32_t k, const Scalar* values);
  void current_values(uint32_t k, Scalar* out) const;
  void check_delta(const arrow::ColumnView& d) const;
  void mark_changed(uint32_t k);
  void save_key(uint32_t k, arrow::ByteBuffer& out) const;

  Plan plan_;
  std::unique_ptr<arrow::Type> delta_type_;
  std::unique_ptr<arrow::Type> output_type_;
  Emit emit_;
  int64_t max_output_rows_;
  std::vector<std::unique_ptr<Accumulator>> accs_;
  std::vector<agg::ValueClass> classes_;  // per aggregate, its output value class
  bundle::BundleBuffer keys_;
  std::vector<int64_t> rows_;  // per key: its row count (0: absent)

  // The open bundle: the keys touched, in first-touch order, with what they emitted before.
  std::vector<uint32_t> mark_;  // per key: 1 + its index in touched_, 0: untouched
  std::vector<uint32_t> touched_;
  std::vector<uint8_t> before_live_;
  std::vector<Scalar> before_;  // touched_.size() x aggregates
  std::string before_strings_;  // string values of before_, which hold offsets into it
  int64_t bundle_rows_ = 0;

  arrow::ColumnBuilder out_;
  std::vector<arrow::ColumnBuilder*> key_builders_;
  std::vector<Scalar> scratch_;
  std::vector<uint64_t> hashes_;  // per row of the batch being added
  // The keys changed since the last dump() or dump_changes(), each once.
  std::vector<uint8_t> changed_;  // per key: 1 when in dirty_
  std::vector<uint32_t> dirty_;
  bool finished_ = false;
  size_t final_cursor_ = 0;
  AggregatorStats stats_;
};

}  // namespace sliceflow::changelog
