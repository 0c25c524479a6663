// libFuzzer harness for the deduplicate kernel (cpp/dedup). The input bytes pick a plan (keep
// first or last, an optional int64 or string order column, a retracting input, mini-batch and
// the bundle size) and up to four micro-batches of rows (a nullable int64 key, the order value,
// an int64 value, the op; a retraction matches on key, order and value), then run the kernel step
// by step as the streaming operator does: the retained rows of one step are the state batch of the
// next. Checks, besides the sanitizers:
//  * every emitted and retained row index is in range, the retained ones ascending and unique;
//  * without retractions at most one row per key is retained;
//  * the changelog materializes: a -U/-D retracts exactly a row emitted before and alive, and
//    after every step the materialized rows are one per key, the kernel's live key count
//    (append-only plans aside, which emit +I only);
//  * an op that is not a change kind throws std::invalid_argument, nothing else throws.
// With bit 5 of the first byte set, the append-only kernel (dedup/first_seen.h) instead:
//  * bit 6 set: the rest of the input is a stored payload: load() throws std::invalid_argument
//    or accepts it, and then payload() gives the input back byte for byte;
//  * else micro-batches of (nullable key, nullable time) rows at a rising watermark, the state
//    carried through payload() and load() between them, against a model of
//    dropDuplicatesWithinWatermark's rules (late rows, expiry after the rows); the local
//    reduction (candidates()) keeps every row the model emits.
// Built by scripts/sanitize.sh with clang -fsanitize=fuzzer,address,undefined.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "arrow/builder.h"
#include "arrow/type.h"
#include "dedup/deduplicator.h"
#include "dedup/first_seen.h"
#include "dedup/plan.h"
#include "fuzz_bytes.h"
#include "owned_arrays.h"

namespace {

using sliceflow::arrow::ColumnBuilder;
using sliceflow::arrow::Kind;
using sliceflow::arrow::Type;
namespace dd = sliceflow::dedup;

struct Row {
  bool key_null = false;
  int64_t key = 0;
  bool order_null = false;
  int64_t order = 0;
  int64_t value = 0;
  int op = 0;  // 0 +I, 1 -U, 2 +U, 3 -D, 4 not a change kind
  bool operator==(const Row& o) const {
    return key_null == o.key_null && key == o.key && order_null == o.order_null &&
           order == o.order && value == o.value;
  }
};

std::unique_ptr<Type> leaf(const char* name, Kind kind) {
  auto t = std::make_unique<Type>();
  t->kind = kind;
  t->name = name;
  return t;
}

std::unique_ptr<Type> batch_type(const dd::Plan& plan, bool string_order, bool with_op) {
  auto t = std::make_unique<Type>();
  t->kind = Kind::Struct;
  t->nullable = false;
  t->children.push_back(leaf("k", Kind::Int64));
  if (plan.ordered) t->children.push_back(leaf("o", string_order ? Kind::Utf8 : Kind::Int64));
  if (plan.retracting) {  // the identity: the whole row, as the Python plan makes it
    t->children.push_back(leaf("ik", Kind::Int64));
    if (plan.ordered) t->children.push_back(leaf("io", string_order ? Kind::Utf8 : Kind::Int64));
    t->children.push_back(leaf("iv", Kind::Int64));
  }
  if (with_op && plan.retracting) t->children.push_back(leaf("op", Kind::Utf8));
  return t;
}

std::unique_ptr<fuzz::Owned> build_batch(const dd::Plan& plan, bool string_order, bool with_op,
                                         const std::vector<Row>& rows) {
  const auto type = batch_type(plan, string_order, with_op);
  ColumnBuilder b(*type);
  static const char* const kOps[] = {"+I", "-U", "+U", "-D", "??"};
  for (const Row& r : rows) {
    size_t c = 0;
    auto key = [&](ColumnBuilder& col) {
      if (r.key_null) return col.append_null();
      col.append_fixed<int64_t>(r.key);
    };
    key(b.child(c++));
    auto order = [&](ColumnBuilder& o) {
      if (r.order_null) return o.append_null();
      if (string_order) {
        return o.append_string(
            std::string(static_cast<size_t>(1 + r.order), static_cast<char>('a' + r.order)));
      }
      o.append_fixed<int64_t>(r.order);
    };
    if (plan.ordered) order(b.child(c++));
    if (plan.retracting) {
      key(b.child(c++));
      if (plan.ordered) order(b.child(c++));
      b.child(c++).append_fixed<int64_t>(r.value);
      if (with_op) b.child(c++).append_string(kOps[r.op]);
    }
    b.finish_struct();
  }
  return fuzz::build(b, *type);
}

// The append-only kernel against its rules, or fed a forged payload (see the header).
void fuzz_first_seen(Bytes& in, uint8_t flags) {
  const bool timed = (flags & 1) != 0;
  const int64_t delay = in.next() % 4;
  dd::FirstSeen kernel(1, timed, delay);
  if (flags & 64) {
    const std::string payload(reinterpret_cast<const char*>(in.p), in.n);
    try {
      kernel.load(payload);
    } catch (const std::invalid_argument&) {
      return;
    }
    // An empty payload is a bucket without state; any other accepted one round-trips.
    if (!payload.empty() && kernel.payload() != payload) __builtin_trap();
    return;
  }
  Type type;
  type.kind = Kind::Struct;
  type.nullable = false;
  type.children.push_back(leaf("k", Kind::Int64));
  if (timed) type.children.push_back(leaf("t", Kind::TimestampUs));
  // The model: per key its expiry; the previous watermark (none before the first step).
  std::map<std::optional<int64_t>, int64_t> entries;
  std::optional<int64_t> previous;
  int64_t watermark = 0;
  std::string payload;
  dd::FirstSeen reducer(1, timed, delay);
  const int batches = 1 + in.next() % 5;
  for (int b = 0; b < batches; ++b) {
    const size_t n = in.next() % 24;
    ColumnBuilder builder(type);
    std::vector<std::pair<std::optional<int64_t>, std::optional<int64_t>>> rows;
    for (size_t i = 0; i < n; ++i) {
      const uint8_t x = in.next();
      const uint8_t t = in.next();
      std::optional<int64_t> key;
      if (x != 255) key = x % 5;
      std::optional<int64_t> time;
      if (t % 11 != 0) time = static_cast<int64_t>(t % 16) * 1000 - 2000;
      rows.emplace_back(key, time);
      if (key) {
        builder.child(0).append_fixed<int64_t>(*key);
      } else {
        builder.child(0).append_null();
      }
      if (timed) {
        if (time) {
          builder.child(1).append_fixed<int64_t>(*time);
        } else {
          builder.child(1).append_null();
        }
      }
      builder.finish_struct();
    }
    const auto batch = fuzz::build(builder, type);
    watermark += in.next() % 4;  // milliseconds, rising
    kernel.load(payload);
    kernel.step(batch->schema, batch->array, watermark);
    std::vector<int64_t> want;
    const int64_t late = previous ? *previous * 1000 : 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto& [key, time] = rows[i];
      if (timed && time && *time <= late) continue;
      if (entries.count(key)) continue;
      entries[key] = timed ? (time ? *time : 0) + delay : std::numeric_limits<int64_t>::max();
      want.push_back(static_cast<int64_t>(i));
    }
    if (timed) {
      for (auto it = entries.begin(); it != entries.end();)
        it = it->second <= watermark * 1000 ? entries.erase(it) : std::next(it);
      previous = watermark;
    }
    if (kernel.emit_rows() != want) __builtin_trap();
    if (kernel.live_keys() != static_cast<int64_t>(entries.size())) __builtin_trap();
    // The local reduction keeps every row the step emits (whatever the state and watermark).
    reducer.clear_candidates();
    const auto& kept = reducer.candidates(batch->schema, batch->array);
    if (!std::is_sorted(kept.begin(), kept.end())) __builtin_trap();
    for (const int64_t r : want) {
      if (!std::binary_search(kept.begin(), kept.end(), r)) __builtin_trap();
    }
    payload = kernel.payload();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in{data, size};
  const uint8_t flags = in.next();
  if (flags & 32) {
    fuzz_first_seen(in, flags);
    return 0;
  }
  dd::Plan plan;
  plan.num_keys = 1;
  plan.keep = (flags & 1) ? dd::Keep::Last : dd::Keep::First;
  plan.ordered = (flags & 2) != 0;
  plan.retracting = (flags & 4) != 0;
  plan.num_identity = plan.retracting ? (plan.ordered ? 3 : 2) : 0;
  plan.mini_batch = (flags & 8) != 0;
  const bool string_order = (flags & 16) != 0;
  plan.bundle_rows = 1 + in.next() % 8;
  dd::Deduplicator kernel(plan);

  std::vector<Row> state;
  std::vector<Row> materialized;
  const int batches = 1 + in.next() % 4;
  for (int b = 0; b < batches; ++b) {
    std::vector<Row> rows(in.next() % 24);
    for (Row& r : rows) {
      const uint8_t x = in.next();
      r.key_null = x == 255;
      r.key = x % 4;
      const uint8_t o = in.next();
      r.order_null = plan.ordered && o % 7 == 0;  // without an order column rows have none
      r.order = plan.ordered && !r.order_null ? o % 5 : 0;
      r.value = in.next() % 3;
      const uint8_t op = in.next();
      r.op = op == 255 ? 4 : op % 4;
    }
    const auto st = build_batch(plan, string_order, false, state);
    const auto nb = build_batch(plan, string_order, true, rows);
    const bool bad_op = plan.retracting && std::any_of(rows.begin(), rows.end(),
                                                       [](const Row& r) { return r.op == 4; });
    try {
      kernel.step(st->schema, st->array, nb->schema, nb->array);
    } catch (const std::invalid_argument&) {
      if (!bad_op) __builtin_trap();
      return 0;
    }
    if (bad_op) __builtin_trap();
    std::vector<Row> all = state;
    all.insert(all.end(), rows.begin(), rows.end());
    const auto total = static_cast<int64_t>(all.size());
    const auto& emit = kernel.emit_rows();
    const auto& ops = kernel.emit_ops();
    if (emit.size() != ops.size()) __builtin_trap();
    for (size_t i = 0; i < emit.size(); ++i) {
      if (emit[i] < 0 || emit[i] >= total) __builtin_trap();
      const Row& r = all[static_cast<size_t>(emit[i])];
      if (ops[i] == 0 || ops[i] == 2) {
        materialized.push_back(r);
        continue;
      }
      const auto it = std::find(materialized.begin(), materialized.end(), r);
      if (it == materialized.end()) __builtin_trap();  // retracts a row never emitted
      materialized.erase(it);
    }
    const auto& keep = kernel.keep_rows();
    std::vector<Row> next;
    for (size_t i = 0; i < keep.size(); ++i) {
      if (keep[i] < 0 || keep[i] >= total || (i > 0 && keep[i] <= keep[i - 1])) __builtin_trap();
      next.push_back(all[static_cast<size_t>(keep[i])]);
    }
    if (!plan.retracting && static_cast<int64_t>(next.size()) != kernel.live_keys())
      __builtin_trap();
    if (!plan.append_only() && static_cast<int64_t>(materialized.size()) != kernel.live_keys()) {
      __builtin_trap();
    }
    state = std::move(next);
  }
  return 0;
}
