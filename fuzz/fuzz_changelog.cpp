// libFuzzer harness for the changelog kernel. The input bytes pick a plan (one or two int64 or
// string keys, an optional op column, count(*) and up to four more aggregates over int64,
// double, string and decimal values; mini-batch, fold where Plan::validate allows it, bundle
// and fold sizes, buckets, ANSI), a few bytes of state blob and rows (keys, op, values, each
// possibly null). The rows go through the encoder in micro-batches (a fresh encoder each, small
// Arrow batches), their delta rows are split by __bucket as the shuffle and the state store
// split them, and the aggregator applies them bucket by bucket, closing a bundle at the end of
// each, as the streaming path runs it. Each aggregation runs three times: once with one
// aggregator holding every key; once with dump()/reset()/load() of each bucket's state blob
// around every bucket of every micro-batch (layout 1); and once as the logged state of layout 2
// keeps it (spark/_runtime/bucket_state.py): per bucket a kept aggregator that lives across
// micro-batches, called only for the buckets a micro-batch has rows for, whose state is a base
// (dump(), at the bucket's first write) and a log of changes (dump_changes() after each call;
// a new base instead when the log passes half the base, the kept aggregator then rebuilt from
// it once its key slots outnumber twice its live keys; base and log dropped when no key is
// left). Before each call a replica is rebuilt from scratch from the base and every change so
// far (load(), then apply_changes() in order), and takes the same delta rows. Checks, besides
// the sanitizers:
//  * the round-tripped and the logged runs give the same changelog (row for row) and the same
//    final rows as the run with one aggregator;
//  * a dumped blob loads back and dumps to the same bytes;
//  * the changelog materializes (-U/-D retract exactly the row shown before) to the final rows;
//  * count(*) of each final row is the key's row count under the row rules (insert-only input:
//    its number of input rows), unless a fold over an invalid changelog makes that inexact;
//  * every bucket blob, base and changes payload goes through a sealed state value
//    (state/format.h) and back unchanged;
//  * logged run, per call: the replica emits the kept aggregator's rows in the same order,
//    counts the same (deltas, retractions ignored, state reads and writes, changes, bundles:
//    reset_stats() zeroes the kept one's), has the same live and changed keys, and its
//    dump_changes() writes the kept one's bytes (its count: changed_keys()), and then an empty
//    payload; a fresh or rebuilt replica, and a state right after dump(), has no changed keys;
//    a base applied as changes to an empty aggregator dumps back to the base; the base and log
//    are the same whether the run emits the changelog or the final rows, and a replica rebuilt
//    from each bucket's whole log gives the final rows;
//  * Aggregator::load() of the raw bytes, of the raw bytes sealed in a valid state value, and of a
//    real blob damaged by the bytes, and Aggregator::apply_changes() on a state loaded from a
//    bucket's log of the raw bytes and of a real changes payload damaged by the bytes, either
//    succeed (the state is then used: dumped, reloaded, aggregated into) or throw
//    std::invalid_argument.
// Only the exceptions the API documents are caught: std::invalid_argument (bad op, damaged
// blob) and std::overflow_error (ANSI overflow of an emitted value).
// Built by scripts/sanitize.sh with clang -fsanitize=fuzzer,address,undefined.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agg/plan_fields.h"
#include "agg/state_schema.h"
#include "arrow/builder.h"
#include "arrow/byte_buffer.h"
#include "arrow/column_view.h"
#include "arrow/type.h"
#include "changelog/aggregator.h"
#include "changelog/encoder.h"
#include "changelog/plan.h"
#include "owned_arrays.h"
#include "state/format.h"

namespace {

using sliceflow::arrow::ColumnBuilder;
using sliceflow::arrow::ColumnView;
using sliceflow::arrow::Kind;
using sliceflow::arrow::Layout;
using sliceflow::arrow::Type;
namespace cl = sliceflow::changelog;
using cl::AggFn;
namespace st = sliceflow::state;

// The fuzzer's plans are not compared with each other: one identity serves every state value.
const st::Identity kIdentity = {{"plan", "fuzz_changelog"}};

// The payload through a sealed state value and back.
std::string sealed_round_trip(const std::string& payload) {
  const std::string value = st::seal(st::Operator::ChangelogAgg, kIdentity, {payload});
  const auto sections = st::open(value, st::Operator::ChangelogAgg, kIdentity, 1);
  if (sections.size() != 1 || sections[0] != payload) __builtin_trap();
  return std::string(sections[0]);
}

using fuzz::build;
using fuzz::copy_value;
using fuzz::own;
using fuzz::Owned;
using sliceflow::agg::clone_type;

std::unique_ptr<Type> leaf(const std::string& name, Kind kind) {
  return sliceflow::agg::column_type(name, kind);
}

// One value as comparable bytes: a tag, then the value (every NaN one NaN, -0.0 kept).
template <typename T>
void put_raw(std::string& out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.append(b, sizeof(T));
}
void cell_null(std::string& out) { out.push_back('N'); }
void cell_i64(std::string& out, int64_t v) {
  out.push_back('i');
  put_raw(out, v);
}
void cell_str(std::string& out, std::string_view s) {
  out.push_back('s');
  put_raw(out, static_cast<uint32_t>(s.size()));
  out.append(s);
}
void cell(std::string& out, const ColumnView& c, int64_t r) {
  if (c.is_null(r)) return cell_null(out);
  switch (c.layout()) {
    case Layout::Int64:
      return cell_i64(out, c.i64(r));
    case Layout::Float64: {
      double d = c.f64(r);
      if (std::isnan(d)) d = std::numeric_limits<double>::quiet_NaN();
      out.push_back('d');
      return put_raw(out, d);
    }
    case Layout::Decimal128:
      out.push_back('x');
      return put_raw(out, c.i128(r));
    case Layout::String:
      return cell_str(out, c.str(r));
    default:
      __builtin_trap();
  }
}

struct Row {
  std::string op, key, values;
  int64_t count = 0;  // count(*), the first aggregate
  bool operator<(const Row& o) const {
    return std::tie(op, key, values) < std::tie(o.op, o.key, o.values);
  }
  bool operator==(const Row& o) const { return op == o.op && key == o.key && values == o.values; }
};

// The output of one run of the aggregator: its rows, or that it stopped at an ANSI overflow.
struct Result {
  bool overflow = false;
  std::vector<Row> rows;
  cl::AggregatorStats stats;  // without round trips (reset() clears the counters)
  size_t live_keys = 0;       // before finish()
};

// An input value column: v int64, d double, s string, x decimal(10, 2).
enum Col { V = 0, D = 1, S = 2, X = 3 };

struct Setup {
  cl::Plan plan;
  size_t first_value_col = 0;  // encoder input column of v; d, s, x follow
  std::unique_ptr<Type> input, delta, output;
  size_t num_keys = 0;
  int64_t max_output = 1;
  int64_t delta_chunk = 1;
  // [micro-batch][bucket] -> delta batches, in arrival order
  std::vector<std::vector<std::vector<std::unique_ptr<Owned>>>> deltas;
};

// `draft` as sliceflow.changelog.plan writes it, read back by the parser the bindings use.
cl::Plan parsed(const cl::Plan& draft) {
  sliceflow::agg::PlanFields f("changelog plan");
  f.set_int("num_keys", draft.num_keys);
  f.set_int("op_column", draft.op_column);
  sliceflow::agg::PlanFields::AggNames aggs;
  for (const auto& a : draft.aggs) aggs.emplace_back(sliceflow::agg::agg_fn_name(a.fn), a.arg);
  f.set_aggs(std::move(aggs));
  f.set_bool("mini_batch", draft.mini_batch);
  f.set_bool("fold", draft.fold);
  f.set_int("fold_rows", draft.fold_rows);
  f.set_int("bundle_rows", draft.bundle_rows);
  f.set_int("buckets", draft.buckets);
  f.set_bool("ansi", draft.ansi);
  return cl::parse_plan(f);
}

std::unique_ptr<cl::Aggregator> make_aggregator(const Setup& s, cl::Emit emit) {
  return std::make_unique<cl::Aggregator>(s.plan, clone_type(*s.delta), clone_type(*s.output), emit,
                                          s.max_output);
}

void drain(const Setup& s, cl::Aggregator& agg, std::vector<Row>& rows) {
  while (auto out = agg.take()) {
    auto owned = own(*s.output, std::move(out));
    const ColumnView view(owned->schema, owned->array);
    if (view.num_children() != 1 + s.num_keys + s.plan.aggs.size()) __builtin_trap();
    for (int64_t r = 0; r < view.length(); ++r) {
      Row row;
      row.op = std::string(view.child(0).str(r));
      for (size_t k = 0; k < s.num_keys; ++k) cell(row.key, view.child(1 + k), r);
      for (size_t a = 0; a < s.plan.aggs.size(); ++a)
        cell(row.values, view.child(1 + s.num_keys + a), r);
      row.count = view.child(1 + s.num_keys).i64(r);
      rows.push_back(std::move(row));
    }
  }
}

std::string dump(cl::Aggregator& agg) {
  sliceflow::arrow::ByteBuffer buf;
  agg.dump(buf);
  return std::string(reinterpret_cast<const char*>(buf.data()), buf.size());
}

// A blob that dump() wrote loads back and dumps to the same bytes.
void check_blob(const Setup& s, const std::string& blob) {
  auto agg = make_aggregator(s, cl::Emit::Final);
  agg->load(blob);
  if (dump(*agg) != blob) __builtin_trap();
}

// Applies every delta batch to `agg`, bucket by bucket, a bundle closing at the end of each. With
// `blobs`, each bucket's state goes through dump() / reset() / load() around its rows.
Result run(const Setup& s, cl::Aggregator& agg, std::vector<std::string>* blobs) {
  Result res;
  try {
    for (const auto& micro_batch : s.deltas) {
      for (size_t b = 0; b < micro_batch.size(); ++b) {
        if (blobs != nullptr) {
          agg.reset();
          if (!(*blobs)[b].empty()) agg.load((*blobs)[b]);
        }
        for (const auto& d : micro_batch[b]) {
          agg.add(d->schema, d->array);
          drain(s, agg, res.rows);
        }
        agg.end_bundle();
        drain(s, agg, res.rows);
        if (blobs != nullptr) {
          (*blobs)[b] = sealed_round_trip(dump(agg));
          check_blob(s, (*blobs)[b]);
        }
      }
    }
    if (blobs == nullptr) {
      res.live_keys = agg.live_keys();
      if (agg.memory_usage() == 0 && res.live_keys > 0) __builtin_trap();
      agg.finish();
      drain(s, agg, res.rows);
    } else {
      for (const std::string& blob : *blobs) {
        agg.reset();
        if (!blob.empty()) agg.load(blob);
        agg.finish();
        drain(s, agg, res.rows);
      }
    }
    res.stats = agg.stats();
  } catch (const std::overflow_error&) {
    res.overflow = true;
  }
  return res;
}

// A state that a load() or apply_changes() of possibly damaged bytes accepted can be used: it
// dumps, loads back into a fresh aggregator and takes every delta row.
void use_state(const Setup& s, cl::Aggregator& agg) {
  const std::string again = dump(agg);
  if (agg.changed_keys() != 0) __builtin_trap();
  check_blob(s, again);
  try {
    run(s, agg, nullptr);
  } catch (const std::invalid_argument&) {
    // Key bytes that do not decode as the key types: a clear error when emitted.
  }
}

// Loads a blob that may be damaged: a clear error, or a state that can be used.
void probe_load(const Setup& s, std::string_view blob) {
  auto agg = make_aggregator(s, cl::Emit::Final);
  try {
    agg->load(blob);
  } catch (const std::invalid_argument&) {
    return;
  }
  use_state(s, *agg);
}

// ---- the logged state (layout 2) ------------------------------------------------------------

// A bucket's stored state: a base (dump()) and the changes payloads (dump_changes()) since.
struct BucketLog {
  bool has_base = false;
  std::string base;
  std::vector<std::string> changes;
  size_t change_bytes = 0;
  bool operator==(const BucketLog& o) const {
    return has_base == o.has_base && base == o.base && changes == o.changes;
  }
};

std::string dump_changes(cl::Aggregator& agg) {
  sliceflow::arrow::ByteBuffer buf;
  agg.dump_changes(buf);
  return std::string(reinterpret_cast<const char*>(buf.data()), buf.size());
}

// The u64 count a dump() or dump_changes() payload starts with.
uint64_t payload_count(const std::string& payload) {
  if (payload.size() < sizeof(uint64_t)) __builtin_trap();
  uint64_t n = 0;
  for (size_t i = 0; i < sizeof(uint64_t); ++i)
    n |= static_cast<uint64_t>(static_cast<uint8_t>(payload[i])) << (8 * i);
  return n;
}

// The first `entries` changes of `log` over its base, into an empty aggregator.
void rebuild(cl::Aggregator& agg, const BucketLog& log, size_t entries) {
  if (log.has_base) agg.load(log.base);
  for (size_t i = 0; i < entries; ++i) agg.apply_changes(log.changes[i]);
  if (agg.changed_keys() != 0 || agg.key_slots() < agg.live_keys()) __builtin_trap();
}

// One call's delta rows through `agg`, a bundle closing at the end; false at an ANSI overflow.
bool feed(const Setup& s, cl::Aggregator& agg, const std::vector<std::unique_ptr<Owned>>& deltas,
          std::vector<Row>& rows) {
  try {
    for (const auto& d : deltas) {
      agg.add(d->schema, d->array);
      drain(s, agg, rows);
    }
    agg.end_bundle();
    drain(s, agg, rows);
  } catch (const std::overflow_error&) {
    return false;
  }
  return true;
}

// The counters of one call that do not depend on how the state got there.
bool same_work(const cl::AggregatorStats& a, const cl::AggregatorStats& b) {
  return a.deltas_in == b.deltas_in && a.retractions_ignored == b.retractions_ignored &&
         a.state_reads == b.state_reads && a.state_writes == b.state_writes &&
         a.changes.inserts == b.changes.inserts &&
         a.changes.update_befores == b.changes.update_befores &&
         a.changes.update_afters == b.changes.update_afters &&
         a.changes.deletes == b.changes.deletes && a.bundles == b.bundles;
}

// A base as written: sealed and back, loads back to the same bytes, and applied as changes to
// an empty aggregator (every key an upsert) gives the same state.
std::string check_base(const Setup& s, const std::string& payload) {
  const std::string base = sealed_round_trip(payload);
  check_blob(s, base);
  auto agg = make_aggregator(s, cl::Emit::Final);
  agg->apply_changes(base);
  if (agg->changed_keys() != 0 || dump(*agg) != base) __builtin_trap();
  return base;
}

// The end of a call, as LoggedState.commit() writes it: the kept aggregator's changes (which the
// replica's must equal) become a log entry, or a new base, or the bucket's state is dropped.
void commit(const Setup& s, cl::Aggregator& kept, cl::Aggregator& replica, BucketLog& log) {
  if (kept.live_keys() != replica.live_keys() || kept.changed_keys() != replica.changed_keys())
    __builtin_trap();
  if (kept.key_slots() < kept.live_keys()) __builtin_trap();
  std::string changes;
  const bool empty = kept.live_keys() == 0;
  if (kept.changed_keys() > 0 || empty) {
    const size_t n = kept.changed_keys();
    changes = dump_changes(kept);
    if (payload_count(changes) != n || kept.changed_keys() != 0) __builtin_trap();
    if (dump_changes(replica) != changes) __builtin_trap();
    if (replica.changed_keys() != 0 || dump_changes(replica) != std::string(8, '\0'))
      __builtin_trap();
  }
  if (empty) {  // no key left: the bucket's state is cleared
    log = BucketLog{};
    return;
  }
  if (changes.empty() && log.has_base) return;  // nothing changed: the stored version stands
  if (!log.has_base || log.change_bytes + changes.size() > log.base.size() / 2) {
    log = BucketLog{};
    log.has_base = true;
    log.base = check_base(s, dump(kept));
    if (kept.changed_keys() != 0) __builtin_trap();
    // Keys that left keep their slots: rebuild once they outnumber the live keys.
    if (kept.key_slots() > 2 * kept.live_keys()) {
      kept.reset();
      kept.load(log.base);
      if (kept.changed_keys() != 0 || kept.key_slots() != kept.live_keys()) __builtin_trap();
    }
  } else {
    log.changes.push_back(sealed_round_trip(changes));
    log.change_bytes += changes.size();
  }
}

struct LoggedRun {
  Result res;
  std::vector<BucketLog> logs;  // per bucket
};

// Layout 2: per bucket a kept aggregator, called for the buckets a micro-batch has rows for,
// and a replica rebuilt from the bucket's log before each call that must do what it does.
LoggedRun run_logged(const Setup& s, cl::Emit emit) {
  LoggedRun out;
  const auto buckets = static_cast<size_t>(s.plan.buckets);
  out.logs.resize(buckets);
  std::vector<std::unique_ptr<cl::Aggregator>> kept;
  for (size_t b = 0; b < buckets; ++b) kept.push_back(make_aggregator(s, emit));
  for (const auto& micro_batch : s.deltas) {
    for (size_t b = 0; b < micro_batch.size(); ++b) {
      if (micro_batch[b].empty()) continue;  // Spark calls only the buckets with rows
      BucketLog& log = out.logs[b];
      auto replica = make_aggregator(s, emit);
      rebuild(*replica, log, log.changes.size());
      kept[b]->reset_stats();
      std::vector<Row> kept_rows;
      std::vector<Row> replica_rows;
      const bool kept_ok = feed(s, *kept[b], micro_batch[b], kept_rows);
      const bool replica_ok = feed(s, *replica, micro_batch[b], replica_rows);
      if (kept_ok != replica_ok) __builtin_trap();
      if (!kept_ok) {
        out.res.overflow = true;
        return out;
      }
      if (!(kept_rows == replica_rows)) __builtin_trap();
      if (!same_work(kept[b]->stats(), replica->stats())) __builtin_trap();
      out.res.rows.insert(out.res.rows.end(), kept_rows.begin(), kept_rows.end());
      commit(s, *kept[b], *replica, log);
    }
  }
  try {
    for (auto& agg : kept) {
      agg->finish();
      drain(s, *agg, out.res.rows);
    }
  } catch (const std::overflow_error&) {
    out.res.overflow = true;
  }
  return out;
}

// The final rows of a replica rebuilt from each bucket's whole log; false at an ANSI overflow.
bool final_from_logs(const Setup& s, const std::vector<BucketLog>& logs, std::vector<Row>& rows) {
  try {
    for (const BucketLog& log : logs) {
      auto agg = make_aggregator(s, cl::Emit::Final);
      rebuild(*agg, log, log.changes.size());
      agg->finish();
      drain(s, *agg, rows);
    }
  } catch (const std::overflow_error&) {
    return false;
  }
  return true;
}

// Applies changes that may be damaged to a bucket's state (its base and first `entries`
// changes): a clear error, or a state that can be used.
void probe_changes(const Setup& s, const BucketLog& log, size_t entries, std::string_view bytes) {
  auto agg = make_aggregator(s, cl::Emit::Final);
  rebuild(*agg, log, entries);
  try {
    agg->apply_changes(bytes);
  } catch (const std::invalid_argument&) {
    return;
  }
  if (agg->changed_keys() != 0) __builtin_trap();
  use_state(s, *agg);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr size_t kHeader = 12;
  constexpr size_t kRow = 6;
  if (size < kHeader) return 0;
  const uint8_t* h = data;
  Setup s;
  cl::Plan& plan = s.plan;
  const bool two_keys = (h[0] & 1) != 0;
  const bool key_str[2] = {(h[0] & 2) != 0, (h[0] & 4) != 0};
  const bool has_op = (h[0] & 8) != 0;
  plan.mini_batch = (h[0] & 16) != 0;
  const bool want_fold = (h[0] & 32) != 0;
  plan.ansi = (h[0] & 64) != 0;
  const bool valid_changelog = (h[0] & 128) != 0;
  plan.bundle_rows = 1 + h[1] % 16;
  const size_t batch_rows = 1 + h[2] % 8;
  plan.fold_rows = 1 + (h[2] >> 3) % 16;
  const size_t micro_rows = 1 + h[3] % 32;
  plan.buckets = 1 + h[4] % 3;
  s.max_output = 1 + (h[4] >> 2) % 8;
  const bool bad_ops = (h[4] & 0x80) != 0;
  s.delta_chunk = 1 + (h[4] >> 5) % 4;
  const size_t extra_aggs = h[5] % 5;
  const size_t blob_len = std::min<size_t>(h[10] % 64, size - kHeader);
  const uint8_t blob_mode = h[11];

  // Encoder input: the keys, the op, then v, d, s, x.
  s.num_keys = two_keys ? 2 : 1;
  plan.num_keys = static_cast<int>(s.num_keys);
  s.input = leaf("", Kind::Struct);
  for (size_t k = 0; k < s.num_keys; ++k) {
    s.input->children.push_back(
        leaf("__k" + std::to_string(k), key_str[k] ? Kind::Utf8 : Kind::Int64));
  }
  if (has_op) {
    plan.op_column = static_cast<int>(s.input->children.size());
    s.input->children.push_back(leaf("__op", Kind::Utf8));
  }
  s.first_value_col = s.input->children.size();
  s.input->children.push_back(leaf("v", Kind::Int64));
  s.input->children.push_back(leaf("d", Kind::Float64));
  s.input->children.push_back(leaf("s", Kind::Utf8));
  s.input->children.push_back(sliceflow::agg::decimal_type("x", 10, 2));

  // Aggregates: count(*) first, then the picks.
  struct Pick {
    AggFn fn;
    int col;  // Col, or -1 for count(*)
  };
  std::vector<Pick> picks = {{AggFn::Count, -1}};
  static constexpr AggFn kFns[] = {AggFn::Count,      AggFn::Sum,      AggFn::Avg,
                                   AggFn::Min,        AggFn::Max,      AggFn::CountDistinct,
                                   AggFn::FirstValue, AggFn::LastValue};
  for (size_t i = 0; i < extra_aggs; ++i) {
    const AggFn fn = kFns[h[6 + i] % 8];
    int col = (h[6 + i] >> 3) % 4;
    if ((fn == AggFn::Sum || fn == AggFn::Avg) && col == S) col = V;
    picks.push_back({fn, col});
  }
  bool foldable = plan.mini_batch;
  for (const Pick& p : picks) {
    if (p.fn == AggFn::CountDistinct) foldable = false;
    if (has_op && p.fn != AggFn::Count && p.fn != AggFn::Sum && p.fn != AggFn::Avg)
      foldable = false;
  }
  plan.fold = want_fold && foldable;

  s.output = leaf("", Kind::Struct);
  s.output->children.push_back(sliceflow::agg::column_type("op", Kind::Utf8, false));
  for (size_t k = 0; k < s.num_keys; ++k)
    s.output->children.push_back(clone_type(*s.input->children[k]));
  for (size_t j = 0; j < picks.size(); ++j) {
    const Pick& p = picks[j];
    plan.aggs.push_back({p.fn, p.col < 0 ? -1 : static_cast<int>(s.first_value_col) + p.col});
  }
  s.plan = parsed(s.plan);
  // The schemas as the plans derive them (cpp/agg/state_schema.h).
  const auto args = sliceflow::agg::argument_types(plan.aggs, *s.input);
  s.delta = cl::delta_schema(plan, args);
  for (size_t j = 0; j < plan.aggs.size(); ++j) {
    s.output->children.push_back(
        sliceflow::agg::result_type(plan.aggs[j].fn, args[j], "agg" + std::to_string(j)));
  }

  // Rows: key 0, key 1 and op, v, d, s, x; the reference row count of each key (row rules).
  std::map<std::string, int64_t> ref;
  std::map<std::string, std::pair<sliceflow::int128, int64_t>>
      ref_sum;  // insert-only: sum(v), count(v)
  bool ref_exact = true;
  int64_t input_rows = 0;
  try {
    size_t at = kHeader + blob_len;
    while (at + kRow <= size) {
      std::vector<std::vector<std::unique_ptr<Owned>>> buckets(static_cast<size_t>(plan.buckets));
      std::vector<std::unique_ptr<Owned>> out;
      const int64_t rows_before = input_rows;
      cl::Encoder enc(plan, *s.input, clone_type(*s.delta));
      ColumnBuilder batch(*s.input);
      auto flush_batch = [&]() {
        if (batch.length() == 0) return;
        auto owned = build(batch, *s.input);
        enc.add(owned->schema, owned->array);
        if (auto d = enc.take()) out.push_back(own(*s.delta, std::move(d)));
      };
      for (size_t n = 0; n < micro_rows && at + kRow <= size; ++n, at += kRow) {
        const uint8_t* r = data + at;
        std::string key;
        for (size_t k = 0; k < s.num_keys; ++k) {
          const uint8_t b = k == 0 ? r[0] : static_cast<uint8_t>((r[1] >> 3) % 8);
          ColumnBuilder& c = batch.child(k);
          if (b == (k == 0 ? 0xFF : 7)) {
            c.append_null();
            cell_null(key);
          } else if (key_str[k]) {
            const std::string v(b % 3, static_cast<char>('a' + (b >> 2) % 2));
            c.append_string(v);
            cell_str(key, v);
          } else {
            const int64_t v = b == 0xFE ? std::numeric_limits<int64_t>::min() : b % 5;
            c.append_fixed<int64_t>(v);
            cell_i64(key, v);
          }
        }
        int sign = 1;
        if (has_op) {
          static const char* const kOps[] = {nullptr, "+I", "-U", "+U", "-D", "-D", "+I", "+U"};
          const char* op = kOps[r[1] % 8];
          if (op != nullptr && op[0] == '-') sign = -1;
          if (valid_changelog && sign < 0 && ref[key] == 0) {
            op = "+I";
            sign = 1;
          }
          ColumnBuilder& c = batch.child(static_cast<size_t>(plan.op_column));
          if (bad_ops && r[1] % 8 == 7) {
            c.append_string(r[2] % 2 ? std::string_view("+I\0", 3) : std::string_view("+u"));
          } else if (op == nullptr) {
            c.append_null();
          } else {
            c.append_string(op);
          }
        }
        int64_t& count = ref[key];
        if (sign < 0 && count == 0) {
          ref_exact = ref_exact && !plan.fold;  // a fold may net this retraction out
        } else {
          count += sign;
        }
        ++input_rows;
        auto v = [&](int c) -> ColumnBuilder& {
          return batch.child(s.first_value_col + static_cast<size_t>(c));
        };
        if (r[2] == 0xFF) {
          v(V).append_null();
        } else if (r[2] >= 0xFD) {
          v(V).append_fixed<int64_t>(r[2] == 0xFE ? std::numeric_limits<int64_t>::max()
                                                  : std::numeric_limits<int64_t>::min());
        } else {
          v(V).append_fixed<int64_t>(static_cast<int8_t>(r[2]) % 8);
        }
        if (r[2] != 0xFF) {
          auto& [sum, nn] = ref_sum[key];
          sum += r[2] == 0xFE   ? std::numeric_limits<int64_t>::max()
                 : r[2] == 0xFD ? std::numeric_limits<int64_t>::min()
                                : static_cast<int8_t>(r[2]) % 8;
          ++nn;
        }
        if (r[3] == 0xFF) {
          v(D).append_null();
        } else if (r[3] >= 0xF9) {
          uint64_t neg_nan = 0xFFF8000000000001ULL;
          double other_nan;
          std::memcpy(&other_nan, &neg_nan, sizeof(double));
          const double kSpecial[] = {0.0,
                                     -std::numeric_limits<double>::infinity(),
                                     std::numeric_limits<double>::infinity(),
                                     -0.0,
                                     other_nan,
                                     std::numeric_limits<double>::quiet_NaN()};
          v(D).append_fixed<double>(kSpecial[r[3] - 0xF9]);
        } else {
          v(D).append_fixed<double>((r[3] % 16) * 0.25 - 2.0);
        }
        if (r[4] == 0xFF) {
          v(S).append_null();
        } else if (r[4] == 0xFE) {
          v(S).append_string("\xC3\xA9");
        } else if (r[4] == 0xFD) {
          v(S).append_string("\xFF");
        } else {
          v(S).append_string(std::string(r[4] % 4, static_cast<char>('a' + (r[4] >> 2) % 3)));
        }
        if (r[5] == 0xFF) {
          v(X).append_null();
        } else if (r[5] >= 0xFD) {
          v(X).append_fixed<sliceflow::int128>(r[5] == 0xFE ? 9999999999 : -9999999999);
        } else {
          v(X).append_fixed<sliceflow::int128>(static_cast<int8_t>(r[5]) * 25);
        }
        batch.finish_struct();
        if (static_cast<size_t>(batch.length()) >= batch_rows) flush_batch();
      }
      flush_batch();
      enc.finish();
      if (auto d = enc.take()) out.push_back(own(*s.delta, std::move(d)));
      if (enc.stats().rows_in != input_rows - rows_before) __builtin_trap();

      // The shuffle: delta rows by __bucket, in arrival order, in batches of delta_chunk rows.
      for (size_t b = 0; b < buckets.size(); ++b) {
        ColumnBuilder part(*s.delta);
        for (const auto& d : out) {
          const ColumnView view(d->schema, d->array);
          for (int64_t row = 0; row < view.length(); ++row) {
            const int64_t bucket = view.child(0).i64(row);
            if (bucket < 0 || bucket >= plan.buckets) __builtin_trap();
            if (static_cast<size_t>(bucket) != b) continue;
            for (size_t c = 0; c < view.num_children(); ++c)
              copy_value(view.child(c), row, part.child(c));
            part.finish_struct();
            if (part.length() >= s.delta_chunk) buckets[b].push_back(build(part, *s.delta));
          }
        }
        if (part.length() > 0) buckets[b].push_back(build(part, *s.delta));
      }
      s.deltas.push_back(std::move(buckets));
    }
  } catch (const std::invalid_argument&) {
    // A bad op: an error that names it.
    if (!bad_ops || !has_op) __builtin_trap();
    return 0;
  }

  // Changelog and final output, each without and with state round trips.
  std::vector<std::string> blobs(static_cast<size_t>(plan.buckets));
  auto agg = make_aggregator(s, cl::Emit::Changelog);
  const Result changes = run(s, *agg, nullptr);
  agg = make_aggregator(s, cl::Emit::Changelog);
  const Result changes_rt = run(s, *agg, &blobs);
  if (changes.overflow != changes_rt.overflow) __builtin_trap();
  if (!changes.overflow && !(changes.rows == changes_rt.rows)) __builtin_trap();

  std::vector<std::string> final_blobs(static_cast<size_t>(plan.buckets));
  agg = make_aggregator(s, cl::Emit::Final);
  Result final_rows = run(s, *agg, nullptr);
  agg = make_aggregator(s, cl::Emit::Final);
  Result final_rt = run(s, *agg, &final_blobs);
  if (final_rows.overflow != final_rt.overflow) __builtin_trap();
  if (!plan.ansi && (changes.overflow || final_rows.overflow)) __builtin_trap();
  // Insert-only input: emit="final" fails under ANSI exactly when a final BIGINT sum(v) does not
  // fit (an overflow is judged on the value emitted, docs/changelog-kernel.md).
  bool sums_v = false;
  for (const Pick& p : picks) sums_v = sums_v || (p.fn == AggFn::Sum && p.col == V);
  if (!has_op && plan.ansi) {
    bool overflows = false;
    for (const auto& [key, sn] : ref_sum) {
      overflows = overflows || (sums_v && (sn.first > std::numeric_limits<int64_t>::max() ||
                                           sn.first < std::numeric_limits<int64_t>::min()));
    }
    if (final_rows.overflow != overflows) __builtin_trap();
  }
  // The state does not depend on what is emitted.
  if (!changes_rt.overflow && !final_rt.overflow && blobs != final_blobs) __builtin_trap();
  if (!final_rows.overflow) {
    std::sort(final_rows.rows.begin(), final_rows.rows.end());
    std::sort(final_rt.rows.begin(), final_rt.rows.end());
    if (!(final_rows.rows == final_rt.rows)) __builtin_trap();
    // count(*) against the row rules.
    int64_t live = 0;
    for (const auto& [key, n] : ref) live += n > 0 ? 1 : 0;
    std::map<std::string, std::string> final_by_key;
    int64_t counted = 0;
    for (const Row& row : final_rows.rows) {
      if (row.op != "+I" || row.count <= 0) __builtin_trap();
      if (!final_by_key.emplace(row.key, row.values).second) __builtin_trap();
      counted += row.count;
      if (ref_exact && ref[row.key] != row.count) __builtin_trap();
    }
    if (ref_exact && static_cast<int64_t>(final_rows.rows.size()) != live) __builtin_trap();
    if (final_rows.live_keys != final_rows.rows.size()) __builtin_trap();
    if (final_rows.stats.changes.inserts != static_cast<int64_t>(final_rows.rows.size()))
      __builtin_trap();
    if (!has_op && counted != input_rows) __builtin_trap();
    // The changelog materializes to the final rows.
    if (!changes.overflow) {
      std::map<std::string, std::string> table;
      for (const Row& row : changes.rows) {
        const auto it = table.find(row.key);
        if (row.op == "+I" || row.op == "+U") {
          if (it != table.end()) __builtin_trap();
          table.emplace(row.key, row.values);
        } else if (row.op == "-U" || row.op == "-D") {
          if (it == table.end() || it->second != row.values) __builtin_trap();
          table.erase(it);
        } else {
          __builtin_trap();
        }
      }
      if (table != final_by_key) __builtin_trap();
      // The counters count the rows emitted.
      int64_t by_op[4] = {0, 0, 0, 0};
      for (const Row& row : changes.rows) {
        ++by_op[row.op == "+I" ? 0 : row.op == "-U" ? 1 : row.op == "+U" ? 2 : 3];
      }
      const sliceflow::changes::ChangeCounts& st = changes.stats.changes;
      if (st.inserts != by_op[0] || st.update_befores != by_op[1] || st.update_afters != by_op[2] ||
          st.deletes != by_op[3]) {
        __builtin_trap();
      }
    }
  }

  // The logged state (layout 2): the same changelog and final rows, the same state whatever is
  // emitted, and each bucket's log rebuilds its final state.
  const LoggedRun logged = run_logged(s, cl::Emit::Changelog);
  if (logged.res.overflow != changes.overflow) __builtin_trap();
  if (!changes.overflow && !(logged.res.rows == changes.rows)) __builtin_trap();
  LoggedRun logged_final = run_logged(s, cl::Emit::Final);
  if (logged_final.res.overflow != final_rows.overflow) __builtin_trap();
  if (!logged.res.overflow && !logged_final.res.overflow && !(logged.logs == logged_final.logs))
    __builtin_trap();
  if (!final_rows.overflow) {
    std::sort(logged_final.res.rows.begin(), logged_final.res.rows.end());
    if (!(logged_final.res.rows == final_rows.rows)) __builtin_trap();
  }
  if (!logged.res.overflow) {
    std::vector<Row> rebuilt;
    if (final_from_logs(s, logged.logs, rebuilt) == final_rows.overflow) __builtin_trap();
    std::sort(rebuilt.begin(), rebuilt.end());
    if (!final_rows.overflow && !(rebuilt == final_rows.rows)) __builtin_trap();
  }

  // Damaged and foreign state blobs and changes: a clear error or a usable state.
  const std::string_view raw(reinterpret_cast<const char*>(data) + kHeader, blob_len);
  // `payload` damaged by the raw bytes: pairs of (position / 256 of the size, xor or 0: cut).
  auto damaged = [&raw](std::string payload) {
    for (size_t i = 0; i + 1 < raw.size() && !payload.empty(); i += 2) {
      const size_t pos = static_cast<size_t>(static_cast<uint8_t>(raw[i])) * payload.size() / 256;
      if (raw[i + 1] == 0) {
        payload.resize(pos);
      } else {
        payload[pos] = static_cast<char>(payload[pos] ^ raw[i + 1]);
      }
    }
    return payload;
  };
  if (blob_mode & 1) probe_load(s, raw);
  if (blob_mode & 2) {
    const std::string value = st::seal(st::Operator::ChangelogAgg, kIdentity, {raw});
    probe_load(s, st::open(value, st::Operator::ChangelogAgg, kIdentity, 1).at(0));
  }
  if (blob_mode & 4) probe_load(s, damaged(blobs[(blob_mode >> 3) % blobs.size()]));
  const BucketLog& log = logged.logs[(blob_mode >> 3) % logged.logs.size()];
  // The raw bytes as changes to the bucket's whole state.
  if (blob_mode & 32) probe_changes(s, log, log.changes.size(), raw);
  // The bucket's last changes (its base when it has none: a base is valid changes too, every
  // key an upsert), damaged, applied to the state they were written after.
  if ((blob_mode & 64) && log.has_base) {
    if (log.changes.empty()) {
      probe_changes(s, log, 0, damaged(log.base));
    } else {
      probe_changes(s, log, log.changes.size() - 1, damaged(log.changes.back()));
    }
  }
  return 0;
}
