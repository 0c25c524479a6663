// The append-only deduplication of a stream (keep="first" in arrival order over insert-only
// input, what Spark's dropDuplicatesWithinWatermark does): each key's first row is emitted once,
// and the state is one entry per key, its key bytes (agg/key_codec.h) and, on a stream with a
// watermark, the event time its entry expires at. No row is retained: the rows stay Arrow and
// the caller takes the emitted ones by index.
//
// With a watermark (`timed`: a time column after the key columns, TIMESTAMP microseconds) the
// rules are Spark 4.3's dropDuplicatesWithinWatermark, probed on it:
//  * a row whose time is at or before the watermark of the previous micro-batch is late and
//    dropped (a null time is never late);
//  * a key's entry expires at the time of the row that made it plus the watermark delay (a null
//    time counts as 0, so its entry expires at the delay);
//  * a micro-batch's rows are matched against the entries first, and then every entry whose
//    expiry is at or before the micro-batch's watermark leaves; a later row of that key is emitted
//    again.
// The payload keeps the watermark of the micro-batch that last ran the bucket, which is the
// previous micro-batch's watermark when the bucket next runs (the caller runs every bucket in
// every micro-batch whose watermark moved: spark/deduplicate_first.py).
//
// Payload (format 2 of the append-only deduplicate's payload; format 1 was the key columns and
// the time column as one Arrow IPC batch, read with load_rows()), little-endian:
//   "SFDF", u16 version (2), u8 flags (bit 0: timed), u8 reserved (0),
//   i64 last watermark in ms (kNoWatermark: none yet), u64 entries,
//   per entry: u32 key length, the key bytes, i64 expiry in microseconds (INT64_MAX: never).
// Cost: O(rows + entries) hashing per step, no per-row allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "arrow/c_data.h"
#include "arrow/column_view.h"
#include "bundle/bundle_buffer.h"

namespace sliceflow::dedup {

struct FirstSeenStats {
  int64_t rows_stepped = 0;  // rows step() saw (after the local reduction, when there is one)
  int64_t rows_late = 0;
  int64_t keys_loaded = 0;
  int64_t state_reads = 0;
  int64_t state_writes = 0;
  int64_t inserts = 0;
  int64_t keys_expired = 0;

  std::vector<std::pair<const char*, int64_t>> named() const {
    return {{"rows_stepped", rows_stepped}, {"rows_late", rows_late},
            {"keys_loaded", keys_loaded},   {"state_reads", state_reads},
            {"state_writes", state_writes}, {"inserts", inserts},
            {"keys_expired", keys_expired}};
  }
};

class FirstSeen {
 public:
  static constexpr int64_t kNoWatermark = std::numeric_limits<int64_t>::min();
  static constexpr uint16_t kPayloadVersion = 2;

  // num_keys key columns; timed: a time column follows them and entries expire delay_us after
  // their row's time. Throws std::invalid_argument for a negative count or delay.
  FirstSeen(int32_t num_keys, bool timed, int64_t delay_us);

  // The payload format of a stored section: 2 for this class's, 1 for an Arrow IPC message (the
  // earlier layout); std::invalid_argument otherwise.
  static int payload_version(std::string_view section);

  // Starts a bucket from its stored payload (empty: a bucket without state). Throws
  // std::invalid_argument, naming what is wrong, for a payload that is not one payload() wrote
  // under the same `timed`.
  void load(std::string_view payload);
  // Starts a bucket from format 1: the key columns and, when timed, the time of each key's
  // first row (a struct array). The last watermark is then unknown: the first step takes its
  // own watermark as the late-row bound.
  void load_rows(const ArrowSchema& schema, const ArrowArray& rows);

  // One micro-batch of the bucket's rows (a struct of the key columns, then the time column
  // when timed) at watermark `watermark_ms` (ignored unless timed); afterwards the state has
  // run at that watermark, so a next step continues from it as from its payload. Throws
  // std::invalid_argument for a batch that does not match.
  void step(const ArrowSchema& schema, const ArrowArray& rows, int64_t watermark_ms);

  // The local reduction before the shuffle (a batch of the same columns as step()'s): the
  // rows that can be emitted whatever the state and watermark, ascending. Without a watermark
  // a key's first row; with one, a key's rows whose time is above every earlier row's of the
  // key, up to and including its first row with a null time (a null time is never late): the
  // first row that is not late always is one of them, and so are the rows before it that the
  // step counts as late. The batches of one call after another are one sequence (a task's
  // batches in arrival order: a key's rows are compared with its rows of earlier batches too)
  // until clear_candidates(). Uses its own table; the loaded state is left alone.
  const std::vector<int64_t>& candidates(const ArrowSchema& schema, const ArrowArray& rows);
  void clear_candidates();

  // The rows the last step emitted (ascending).
  const std::vector<int64_t>& emit_rows() const { return emit_rows_; }
  // The payload of the bucket after the last step.
  std::string payload() const;
  // Entries after the last step.
  int64_t live_keys() const { return live_; }
  // Bytes the loaded state holds (its key table and per-slot arrays), not the candidates' table.
  size_t memory_usage() const {
    return keys_.memory_usage() + expires_.capacity() * sizeof(int64_t) + alive_.capacity() +
           touched_.capacity() + emit_rows_.capacity() * sizeof(int64_t);
  }
  // The last watermark the loaded state ran at (kNoWatermark: none).
  int64_t previous_watermark() const { return previous_ms_; }
  const FirstSeenStats& stats() const { return stats_; }

 private:
  void reset();
  uint32_t slot_of(std::string_view key, bool* inserted);
  void check_batch(const arrow::ColumnView& v, const char* what) const;

  int32_t num_keys_;
  bool timed_;
  int64_t delay_us_;
  FirstSeenStats stats_;
  bundle::BundleBuffer keys_;
  std::vector<int64_t> expires_;  // per slot, microseconds; INT64_MAX: never
  std::vector<uint8_t> alive_;    // per slot
  std::vector<uint8_t> touched_;  // per slot, in the current step
  std::vector<int64_t> emit_rows_;
  // candidates(): per key of the batch the highest time so far (INT64_MAX: nothing more can
  // be emitted), and the result.
  bundle::BundleBuffer local_keys_;
  std::vector<int64_t> local_max_;
  std::vector<int64_t> candidates_;
  int64_t previous_ms_ = kNoWatermark;
  int64_t watermark_ms_ = kNoWatermark;
  bool legacy_ = false;  // loaded from format 1
  int64_t live_ = 0;
};

}  // namespace sliceflow::dedup
