// libFuzzer harness for the Top-N ranker (topn/ranker.h). The input bytes pick a plan (n, with
// rank, mini-batch, bundle size, retractions) and rows: a partition key, a sort key and a row
// identity of a few bytes each, and a change kind (null now and then); a prefix of the rows
// stands for retained state. The rows are built into the Arrow batch the bindings hand over
// and read back with topn/batch_rows.h, sometimes with a column of the wrong layout or a
// column too few (which must be refused). The same rows run once as a changelog and once with
// emit=final. Checks, besides the sanitizers:
//  * the batch's rows read back are the rows written (a null op reads as +I);
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
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agg/plan_fields.h"
#include "arrow/builder.h"
#include "arrow/column_view.h"
#include "arrow/type.h"
#include "changes/change_kind.h"
#include "owned_arrays.h"
#include "topn/batch_rows.h"
#include "topn/ranker.h"

namespace {

namespace tn = sliceflow::topn;
using sliceflow::arrow::ColumnBuilder;
using sliceflow::arrow::ColumnView;
using sliceflow::arrow::Kind;
using sliceflow::arrow::Type;

[[noreturn]] void fail() { std::abort(); }

std::string_view take(const uint8_t*& p, const uint8_t* end, size_t max) {
  if (p >= end) return {};
  size_t len = (*p++ % (max + 1));
  if (len > static_cast<size_t>(end - p)) len = static_cast<size_t>(end - p);
  std::string_view out(reinterpret_cast<const char*>(p), len);
  p += len;
  return out;
}

std::unique_ptr<Type> leaf(const char* name, Kind kind) {
  auto t = std::make_unique<Type>();
  t->kind = kind;
  t->name = name;
  return t;
}

// The ranker's input batch as the bindings receive it: __key, __sort, [__row], __op. `damage`
// 1..3 makes one column of a layout rows_of_batch must refuse, 4 leaves the op column out.
std::unique_ptr<fuzz::Owned> build_batch(const tn::Rows& rows, const std::vector<bool>& null_op,
                                         bool retract, int damage) {
  auto type = std::make_unique<Type>();
  type->kind = Kind::Struct;
  type->nullable = false;
  type->children.push_back(leaf("__key", damage == 1 ? Kind::Int64 : Kind::Binary));
  type->children.push_back(leaf("__sort", Kind::Binary));
  if (retract) type->children.push_back(leaf("__row", damage == 2 ? Kind::Int8 : Kind::Binary));
  if (damage != 4) type->children.push_back(leaf("__op", damage == 3 ? Kind::Int64 : Kind::Int8));
  ColumnBuilder b(*type);
  for (size_t i = 0; i < rows.keys.size(); ++i) {
    size_t c = 0;
    for (const std::string_view bytes : {rows.keys[i], rows.sort_keys[i]}) {
      ColumnBuilder& col = b.child(c++);
      if (col.type().kind == Kind::Binary) {
        col.append_string(bytes);
      } else {
        col.append_fixed<int64_t>(static_cast<int64_t>(bytes.size()));
      }
    }
    if (retract) {
      ColumnBuilder& col = b.child(c++);
      if (col.type().kind == Kind::Binary) {
        col.append_string(rows.row_ids[i]);
      } else {
        col.append_fixed<int8_t>(0);
      }
    }
    if (damage != 4) {
      ColumnBuilder& col = b.child(c++);
      if (null_op[i]) {
        col.append_null();
      } else if (col.type().kind == Kind::Int8) {
        col.append_fixed<int8_t>(rows.ops[i]);
      } else {
        col.append_fixed<int64_t>(rows.ops[i]);
      }
    }
    b.finish_struct();
  }
  return fuzz::build(b, *type);
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

  tn::Rows written;
  std::vector<bool> null_op;
  const uint8_t* p = data + 4;
  const uint8_t* end = data + size;
  while (p < end && written.keys.size() < 512) {
    written.keys.push_back(take(p, end, 1));
    written.sort_keys.push_back(take(p, end, 2));
    written.row_ids.push_back(take(p, end, 1));
    const uint8_t op = p < end ? *p++ : 0;
    null_op.push_back(op % 5 == 4);  // a null op: +I
    written.ops.push_back(op % 5 == 4 ? int8_t{0} : static_cast<int8_t>(op % 5));
  }
  if (!retract) written.row_ids.clear();
  const int damage = (data[3] >> 1) % 16;  // 1..4: a batch rows_of_batch refuses; else none
  const auto batch = build_batch(written, null_op, retract, damage <= 4 ? damage : 0);
  const ColumnView view(batch->schema, batch->array);
  // A retained-state prefix must be what keep() lists: rows ordered by sort key per key, which
  // arbitrary bytes are not, so the state prefix is used only when it is a single row.
  const int64_t state_rows = (data[3] & 1) != 0 && !written.keys.empty() ? 1 : 0;
  tn::Rows rows;
  try {
    rows = tn::rows_of_batch(plan, view, state_rows);
  } catch (const std::invalid_argument&) {
    if (damage >= 1 && damage <= 4 && (damage != 2 || retract)) return 0;
    fail();
  }
  if (damage >= 1 && damage <= 4 && (damage != 2 || retract)) fail();  // accepted a bad batch
  if (rows.state_rows != state_rows || rows.keys != written.keys ||
      rows.sort_keys != written.sort_keys || rows.row_ids != written.row_ids ||
      rows.ops != written.ops) {
    fail();
  }
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
