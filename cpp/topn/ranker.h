// Top-N per partition key over encoded rows: the kernel of sliceflow.spark.topn.
//
// A call sees whole batches of rows, each as three byte strings: its partition key
// (agg/key_codec), its sort key (order/sort_key: memcmp order is Spark's ORDER BY) and, when
// the input retracts, its row identity (agg/key_codec over the row's columns); plus a change
// kind per row. Rows [0, state_rows) are the retained rows of earlier calls (in the order keep()
// listed them); the rest are new rows, in arrival order. The kernel never sees the payload: it
// returns take-indices into the call's rows (what to emit, with op and rank, and what to keep),
// so the caller's Arrow columns are gathered once (pyarrow take), never per row in Python.
//
// Semantics (Flink SQL's ROW_NUMBER() <= n Top-N):
//  * order: by sort key, ties by arrival (an earlier row ranks first; retained rows are earlier
//    than new ones);
//  * emit=final: the top n of each key, ranks 1..n (Spark's row_number() <= n);
//  * emit=changelog: per bundle (bundle_rows rows with mini_batch, else every row), each touched
//    key's top n before and after the bundle are compared: with_rank, per rank: -U old/+U new
//    where the row at that rank changed, +I / -D where the top grew / shrank; without rank, -D
//    for each row that left the top n, then +I for each row that entered. Nothing when the top n
//    ends where it began (rows compared by identity: their index without retractions, their
//    row bytes with);
//  * retractions (-U/-D): remove the earliest equal row (sort key and row bytes); one that
//    matches no row is ignored and counted;
//  * what is kept: without retractions the top n of each key (a row below it can never come
//    back); with retractions every live row (a retraction in the top n brings the next one up,
//    as Flink's retractable Top-N keeps its whole sorted state): bounded by the live rows.
// Counters: state_reads and state_writes are per key per bundle (a key's list is read at its
// first row in a bundle and written at the bundle's end); the emitted rows are counted per
// change kind (changes/change_counts.h).
// Cost: O(rows log rows_per_key) to place rows (binary search + vector insert), O(n) per touched
// key per bundle to diff; memory O(call rows) indices, no per-row heap allocation beyond the
// per-key vectors.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "agg/plan_fields.h"
#include "changes/change_counts.h"

namespace sliceflow::topn {

enum class Emit : uint8_t { Final, Changelog };

struct Plan {
  int64_t n = 1;
  bool with_rank = true;
  bool mini_batch = true;
  int64_t bundle_rows = 5000;
  bool retract = false;  // the input has an op column; row identities are given
  Emit emit = Emit::Changelog;
};

// Reads "n", "with_rank", "mini_batch", "bundle_rows", "retract", "emit" ("final" or
// "changelog"); std::invalid_argument naming a bad field.
Plan parse_plan(const agg::PlanFields& fields);

// The rows of one call (views into the caller's buffers, valid during run()).
struct Rows {
  int64_t state_rows = 0;
  std::vector<std::string_view> keys;
  std::vector<std::string_view> sort_keys;
  std::vector<std::string_view> row_ids;  // empty unless plan.retract
  std::vector<int8_t> ops;                // change kind codes, one per row (state rows: ignored)
};

struct Stats {
  int64_t rows_in = 0;  // new rows
  int64_t state_reads = 0;
  int64_t state_writes = 0;
  int64_t retractions_ignored = 0;
  int64_t rows_out = 0;   // emitted rows
  int64_t rows_kept = 0;  // retained rows
  int64_t keys = 0;
  changes::ChangeCounts changes;  // emitted +I, -U, +U, -D

  // The counters by name, as the bindings' stats() dicts show them.
  std::vector<std::pair<const char*, int64_t>> named() const {
    std::vector<std::pair<const char*, int64_t>> out = {
        {"rows_in", rows_in},
        {"state_reads", state_reads},
        {"state_writes", state_writes},
        {"retractions_ignored", retractions_ignored},
        {"rows_out", rows_out},
        {"rows_kept", rows_kept},
        {"keys", keys}};
    changes.append_named(out);
    return out;
  }
};

struct Result {
  std::vector<int64_t> index;  // emitted rows, in emission order
  std::vector<int8_t> op;      // change kind codes
  std::vector<int32_t> rank;
  std::vector<int64_t> keep;  // the rows to retain, per key in rank order
  Stats stats;
};

// Runs a call; throws std::invalid_argument if the rows are inconsistent.
Result run(const Plan& plan, const Rows& rows);

}  // namespace sliceflow::topn
