// libFuzzer harness for the Top-N ranker (topn/ranker.h). The input bytes pick a plan (n, with
// rank, mini-batch, bundle size, retractions) and rows: a partition key, a sort key and a row
// identity of a few bytes each, and a change kind; a prefix of the rows stands for retained
// state. The same rows run once as a changelog and once with emit=final. Checks, besides the
// sanitizers:
//  * every emitted and kept index is a row of the call, every rank is in 1..n;
//  * without retractions nothing beyond n rows per key is kept;
//  * with ranks, the changelog materializes ((key, rank) -> row: +I/+U set, -U/-D remove exactly
//    the row shown before) to the final top n of each key (rows compared by identity: the index
//    without retractions, the row bytes with).
// Only std::invalid_argument (inconsistent rows) is caught.
// Built by scripts/sanitize.sh with clang -fsanitize=fuzzer,address,undefined.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agg/plan_fields.h"
#include "changes/change_kind.h"
#include "topn/ranker.h"

namespace {

namespace tn = sliceflow::topn;

[[noreturn]] void fail() { std::abort(); }

std::string_view take(const uint8_t*& p, const uint8_t* end, size_t max) {
  if (p >= end) return {};
  size_t len = (*p++ % (max + 1));
  if (len > static_cast<size_t>(end - p)) len = static_cast<size_t>(end - p);
  std::string_view out(reinterpret_cast<const char*>(p), len);
  p += len;
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  sliceflow::agg::PlanFields fields("topn plan");
  fields.set_int("n", 1 + data[0] % 5);
  fields.set_bool("with_rank", (data[1] & 1) != 0);
  fields.set_bool("mini_batch", (data[1] & 2) != 0);
  const bool retract = (data[1] & 4) != 0;
  fields.set_bool("retract", retract);
  fields.set_int("bundle_rows", 1 + data[2] % 16);
  fields.set_string("emit", "changelog");
  const tn::Plan plan = tn::parse_plan(fields);
  tn::Plan final_plan = plan;
  final_plan.emit = tn::Emit::Final;

  tn::Rows rows;
  const uint8_t* p = data + 4;
  const uint8_t* end = data + size;
  while (p < end && rows.keys.size() < 512) {
    rows.keys.push_back(take(p, end, 1));
    rows.sort_keys.push_back(take(p, end, 2));
    rows.row_ids.push_back(take(p, end, 1));
    rows.ops.push_back(p < end ? static_cast<int8_t>(*p++ % 4) : int8_t{0});
  }
  // A retained-state prefix must be what keep() lists: rows ordered by sort key per key, which
  // arbitrary bytes are not, so the state prefix is used only when it is a single row.
  rows.state_rows = (data[3] & 1) != 0 && !rows.keys.empty() ? 1 : 0;
  if (!retract) rows.row_ids.clear();
  const auto total = static_cast<int64_t>(rows.keys.size());

  tn::Result changes, top;
  try {
    changes = tn::run(plan, rows);
    top = tn::run(final_plan, rows);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  for (const auto* r : {&changes, &top}) {
    for (const int64_t i : r->index) {
      if (i < 0 || i >= total) fail();
    }
    for (const int64_t i : r->keep) {
      if (i < 0 || i >= total) fail();
    }
    for (const int32_t rank : r->rank) {
      if (rank < 1 || rank > plan.n) fail();
    }
  }
  if (!retract) {
    std::map<std::string_view, int64_t> kept;
    for (const int64_t i : changes.keep) {
      if (++kept[rows.keys[static_cast<size_t>(i)]] > plan.n) fail();
    }
  }
  if (!plan.with_rank) return 0;
  auto identity = [&](int64_t i) {
    const auto u = static_cast<size_t>(i);
    return retract ? std::string(rows.row_ids[u]) : std::to_string(i);
  };
  std::map<std::pair<std::string_view, int32_t>, std::string> table;
  // The state prefix is already in the top before the changelog starts.
  for (int64_t i = 0; i < rows.state_rows; ++i)
    table[{rows.keys[static_cast<size_t>(i)], 1}] = identity(i);
  for (size_t j = 0; j < changes.index.size(); ++j) {
    const int64_t i = changes.index[j];
    const std::pair<std::string_view, int32_t> slot{rows.keys[static_cast<size_t>(i)],
                                                    changes.rank[j]};
    if (!sliceflow::changes::retracts(static_cast<sliceflow::changes::ChangeKind>(changes.op[j]))) {
      table[slot] = identity(i);
    } else {
      const auto it = table.find(slot);
      if (it == table.end() || it->second != identity(i)) fail();
      table.erase(it);
    }
  }
  std::map<std::pair<std::string_view, int32_t>, std::string> want;
  for (size_t j = 0; j < top.index.size(); ++j) {
    want[{rows.keys[static_cast<size_t>(top.index[j])], top.rank[j]}] = identity(top.index[j]);
  }
  if (table != want) fail();
  return 0;
}
