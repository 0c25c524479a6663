// libFuzzer harness for the regular join kernel (cpp/join). The input bytes pick a plan (one or
// two key columns, each int64 or string; zero to two identity columns per side, each int64 or
// string; which sides retract; inner, left, right or full; mini-batch and a bundle of 1..8 rows),
// read with join::parse_plan as the bindings read theirs, and up to four steps. A step has each
// side's state rows (fresh ones, or the live rows the previous step kept) and new rows: nullable
// keys and identity values from small domains, so that keys match and retractions find their
// rows, and on a retracting side an int8 op code (now and then null, an insert, or not a change
// kind); and the arrival order of the new rows, one side code each. Now and then the order does
// not count each side's new rows (an entry dropped, added or flipped, or not a side code), or a
// batch is of the wrong shape (a column too few or too many, a key column of another type, an op
// column that is not int8). Checks, besides the sanitizers:
//  * a step throws std::invalid_argument exactly when its input is at fault; nothing else throws
//    (a step that threw leaves its state as it was for the next one);
//  * every emitted row index is -1 or a row of its side's state and new rows, the emit arrays
//    have one length, a change pads at most one side and only an outer side's rows (an inner join
//    never emits -1); every op is a change kind, +I or -D unless an inner join forwards the
//    row's kind without mini-batch;
//  * each side's kept rows are ascending, unique and in range, and are the live rows of a model
//    of the two multisets (+I/+U/null add a row, -U/-D take back an equal live row, the key and
//    identity compared; a null key on a side that is not outer is dropped); live_keys() counts
//    their distinct keys;
//  * the changelog materializes: from the join of the state rows, no change takes back an output
//    row that is not there, and after the step the output is the join of the live rows (a
//    key with a null column matching nothing, an outer side's unmatched rows null-padded).
// Built by scripts/sanitize.sh with clang -fsanitize=fuzzer,address,undefined.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "agg/plan_fields.h"
#include "arrow/builder.h"
#include "arrow/type.h"
#include "fuzz_bytes.h"
#include "join/joiner.h"
#include "join/plan.h"
#include "owned_arrays.h"

namespace {

using sliceflow::arrow::ColumnBuilder;
using sliceflow::arrow::Kind;
using sliceflow::arrow::Type;
namespace jn = sliceflow::join;

constexpr int64_t kNull = std::numeric_limits<int64_t>::min();
// Op codes that are not change kinds.
constexpr int8_t kBadCodes[] = {4, -1, 127, -128};

struct Row {
  std::vector<int64_t> v;  // the key columns, then the identity columns (kNull: null)
  bool op_null = false;    // a null op: an insert
  int8_t op = 0;           // a retracting side's new rows only
};

// A batch's shape: per column whether it is a string (else int64), whether it ends with the op
// codes, and the faults that make the kernel refuse it.
struct Shape {
  std::vector<bool> strings;
  bool with_op = false;
  bool op_int64 = false;  // the op codes as int64
  int columns = 0;        // -1: the last column left out; +1: an int64 column too many
  bool other_key_type = false;
};

// An output row of the join: the left row's values and the right row's (empty: null-padded).
using Out = std::pair<std::vector<int64_t>, std::vector<int64_t>>;

std::unique_ptr<Type> leaf(const std::string& name, Kind kind) {
  auto t = std::make_unique<Type>();
  t->kind = kind;
  t->name = name;
  return t;
}

std::unique_ptr<fuzz::Owned> build_batch(const Shape& shape, const std::vector<Row>& rows) {
  auto type = std::make_unique<Type>();
  type->kind = Kind::Struct;
  type->nullable = false;
  std::vector<bool> strings = shape.strings;
  if (shape.other_key_type) strings[0] = !strings[0];
  for (size_t c = 0; c < strings.size(); ++c)
    type->children.push_back(leaf("c" + std::to_string(c), strings[c] ? Kind::Utf8 : Kind::Int64));
  if (shape.with_op)
    type->children.push_back(leaf("op", shape.op_int64 ? Kind::Int64 : Kind::Int8));
  if (shape.columns > 0) type->children.push_back(leaf("extra", Kind::Int64));
  if (shape.columns < 0) type->children.pop_back();
  const size_t columns = type->children.size();
  ColumnBuilder b(*type);
  for (const Row& r : rows) {
    for (size_t c = 0; c < columns; ++c) {
      ColumnBuilder& col = b.child(c);
      if (c >= strings.size()) {  // the op codes, or the column too many
        if (shape.with_op && c == strings.size()) {
          if (r.op_null) {
            col.append_null();
          } else if (shape.op_int64) {
            col.append_fixed<int64_t>(r.op);
          } else {
            col.append_fixed<int8_t>(r.op);
          }
        } else {
          col.append_fixed<int64_t>(0);
        }
        continue;
      }
      const int64_t x = r.v[c];
      if (x == kNull) {
        col.append_null();
      } else if (strings[c]) {
        col.append_string(std::string(static_cast<size_t>(1 + x), static_cast<char>('a' + x)));
      } else {
        col.append_fixed<int64_t>(x);
      }
    }
    b.finish_struct();
  }
  return fuzz::build(b, *type);
}

Row read_row(Bytes& in, const jn::Plan& plan, int side, bool with_op, size_t index) {
  Row r;
  for (int32_t k = 0; k < plan.num_keys; ++k) {
    const uint8_t x = in.next();
    r.v.push_back(x % 8 == 7 ? kNull : (x >> 3) % 3);
  }
  for (int32_t j = 0; j < plan.identity[side]; ++j) {
    const uint8_t x = in.next();
    r.v.push_back(x % 8 == 7 ? kNull : (x >> 3) % 2);
  }
  if (with_op) {
    const uint8_t op = in.next();
    r.op_null = op == 254;
    r.op = op == 255 ? kBadCodes[index % 4] : static_cast<int8_t>(op == 254 ? 0 : op % 4);
  }
  return r;
}

bool null_key(const jn::Plan& plan, const Row& r) {
  return std::any_of(r.v.begin(), r.v.begin() + plan.num_keys,
                     [](int64_t x) { return x == kNull; });
}

bool same_key(const jn::Plan& plan, const Row& a, const Row& b) {
  return std::equal(a.v.begin(), a.v.begin() + plan.num_keys, b.v.begin());
}

// The join of both sides' live rows, by nested loops.
std::map<Out, int64_t> brute_join(const jn::Plan& plan, const std::vector<Row> live[2]) {
  std::map<Out, int64_t> out;
  std::vector<bool> matched(live[jn::kRight].size(), false);
  for (const Row& l : live[jn::kLeft]) {
    bool hit = false;
    for (size_t j = 0; j < live[jn::kRight].size(); ++j) {
      const Row& r = live[jn::kRight][j];
      if (null_key(plan, l) || null_key(plan, r) || !same_key(plan, l, r)) continue;
      ++out[Out{l.v, r.v}];
      hit = true;
      matched[j] = true;
    }
    if (!hit && plan.outer(jn::kLeft)) ++out[Out{l.v, {}}];
  }
  if (plan.outer(jn::kRight)) {
    for (size_t j = 0; j < live[jn::kRight].size(); ++j) {
      if (!matched[j]) ++out[Out{{}, live[jn::kRight][j].v}];
    }
  }
  return out;
}

std::vector<std::vector<int64_t>> values(const std::vector<Row>& rows) {
  std::vector<std::vector<int64_t>> out;
  for (const Row& r : rows) out.push_back(r.v);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in{data, size};
  const uint8_t flags = in.next();
  const uint8_t widths = in.next();
  const uint8_t types = in.next();
  static const char* const kHow[] = {"inner", "left", "right", "full"};
  sliceflow::agg::PlanFields fields("join plan");
  fields.set_int("num_keys", 1 + (flags & 1));
  fields.set_int("left_identity", widths % 3);
  fields.set_int("right_identity", (widths / 3) % 3);
  fields.set_bool("left_retracting", (flags & 2) != 0);
  fields.set_bool("right_retracting", (flags & 4) != 0);
  fields.set_string("how", kHow[(flags >> 3) & 3]);
  fields.set_bool("mini_batch", (flags & 32) != 0);
  fields.set_int("bundle_rows", 1 + in.next() % 8);
  const jn::Plan plan = jn::parse_plan(fields);
  jn::Joiner kernel(plan);
  // Column types: key k a string if bit k is set, identity column j of side s if bit 2 + 2s + j.
  std::vector<bool> strings[2];
  for (int s = 0; s < 2; ++s) {
    for (int32_t k = 0; k < plan.num_keys; ++k) strings[s].push_back(((types >> k) & 1) != 0);
    for (int32_t j = 0; j < plan.identity[s]; ++j)
      strings[s].push_back(((types >> (2 + 2 * s + j)) & 1) != 0);
  }

  std::vector<Row> kept[2];  // the live rows of the last step that did not throw
  bool have_kept = false;
  const int steps = 1 + in.next() % 4;
  for (int step = 0; step < steps; ++step) {
    const uint8_t how_state = in.next();
    const uint8_t counts = in.next();
    const uint8_t order_fault = in.next();
    const uint8_t batch_fault = in.next();
    // The state rows: the previous step's live rows, or fresh ones.
    std::vector<Row> state[2];
    std::vector<Row> rows[2];
    for (int s = 0; s < 2; ++s) {
      if (have_kept && (how_state & (1 << s)) == 0) {
        state[s] = kept[s];
      } else {
        const size_t n = (how_state >> (2 + 3 * s)) & 7;
        for (size_t i = 0; i < n; ++i) state[s].push_back(read_row(in, plan, s, false, i));
      }
    }
    for (int s = 0; s < 2; ++s) {
      const size_t n = (counts >> (4 * s)) & 15;
      for (size_t i = 0; i < n; ++i)
        rows[s].push_back(read_row(in, plan, s, plan.retracting[s], i));
    }
    // The arrival order: the new rows of both sides interleaved, a bit of input per choice.
    std::vector<int8_t> order;
    size_t left = rows[jn::kLeft].size(), right = rows[jn::kRight].size();
    uint8_t bits = 0;
    for (int used = 8; left + right > 0; ++used) {
      if (used == 8) {
        bits = in.next();
        used = 0;
      }
      const bool pick_left = right == 0 || (left > 0 && ((bits >> used) & 1) == 0);
      order.push_back(static_cast<int8_t>(pick_left ? jn::kLeft : jn::kRight));
      --(pick_left ? left : right);
    }
    // One step in eight: an order that does not count each side's new rows (not at the end of
    // the input, which reads as zeros).
    const bool order_bad = order_fault % 8 == 7;
    if (order_bad) {
      const size_t at = order.empty() ? 0 : (order_fault >> 5) % order.size();
      switch ((order_fault >> 3) & 3) {
        case 0:  // an entry too few
          if (order.empty()) {
            order.push_back(static_cast<int8_t>(jn::kRight));
          } else {
            order.erase(order.begin() + static_cast<std::ptrdiff_t>(at));
          }
          break;
        case 1:  // an entry too many
          order.insert(order.begin() + static_cast<std::ptrdiff_t>(at),
                       static_cast<int8_t>((order_fault >> 7) & 1));
          break;
        case 2:  // not a side code
          if (order.empty()) order.push_back(0);
          order[at] = static_cast<int8_t>((order_fault & 128) ? 2 : -1);
          break;
        default:  // a row of one side counted for the other
          if (order.empty()) {
            order.push_back(static_cast<int8_t>(jn::kLeft));
          } else {
            order[at] = static_cast<int8_t>(1 - order[at]);
          }
          break;
      }
    }
    // One step in sixteen: a batch of the wrong shape (bit 1: the new rows, else the state rows;
    // bit 0: the side).
    Shape shapes[2][2];  // [state or new rows][side]
    for (int s = 0; s < 2; ++s) {
      shapes[0][s].strings = strings[s];
      shapes[1][s].strings = strings[s];
      shapes[1][s].with_op = plan.retracting[s];
    }
    bool shape_bad = false;
    if (batch_fault >= 0xF0) {
      Shape& shape = shapes[(batch_fault >> 1) & 1][batch_fault & 1];
      switch ((batch_fault >> 2) & 3) {
        case 0:
          shape.other_key_type = true;
          shape_bad = true;
          break;
        case 1:
          shape.op_int64 = true;
          shape_bad = shape.with_op;
          break;
        case 2:
          shape.columns = -1;
          shape_bad = true;
          break;
        default:
          shape.columns = 1;
          shape_bad = true;
          break;
      }
    }
    bool op_bad = false;
    for (int s = 0; s < 2; ++s) {
      if (!plan.retracting[s]) continue;
      for (const Row& r : rows[s]) op_bad = op_bad || (!r.op_null && (r.op < 0 || r.op > 3));
    }
    const bool bad = order_bad || shape_bad || op_bad;

    std::unique_ptr<fuzz::Owned> st[2], nb[2];
    for (int s = 0; s < 2; ++s) {
      st[s] = build_batch(shapes[0][s], state[s]);
      nb[s] = build_batch(shapes[1][s], rows[s]);
    }
    const ArrowSchema* state_schema[2] = {&st[0]->schema, &st[1]->schema};
    const ArrowArray* state_array[2] = {&st[0]->array, &st[1]->array};
    const ArrowSchema* rows_schema[2] = {&nb[0]->schema, &nb[1]->schema};
    const ArrowArray* rows_array[2] = {&nb[0]->array, &nb[1]->array};
    try {
      kernel.step(state_schema, state_array, rows_schema, rows_array, order.data(),
                  static_cast<int64_t>(order.size()));
    } catch (const std::invalid_argument&) {
      if (!bad) __builtin_trap();
      // The kernel holds nothing between steps: the next step may start from this one's state.
      for (int s = 0; s < 2; ++s) kept[s] = state[s];
      have_kept = true;
      continue;
    }
    if (bad) __builtin_trap();

    // The model: each side's live rows, from the state rows and then the new rows in order.
    std::vector<Row> live[2];
    for (int s = 0; s < 2; ++s) {
      for (const Row& r : state[s]) {
        if (!null_key(plan, r) || plan.outer(s)) live[s].push_back(r);
      }
    }
    std::map<Out, int64_t> materialized = brute_join(plan, live);
    size_t next_row[2] = {0, 0};
    for (const int8_t side : order) {
      const Row& r = rows[side][next_row[side]++];
      if (null_key(plan, r) && !plan.outer(side)) continue;
      const bool retracts = plan.retracting[side] && !r.op_null && (r.op == 1 || r.op == 3);
      if (!retracts) {
        live[side].push_back(r);
        continue;
      }
      for (size_t i = live[side].size(); i-- > 0;) {
        if (live[side][i].v == r.v) {
          live[side].erase(live[side].begin() + static_cast<std::ptrdiff_t>(i));
          break;
        }
      }
    }

    // The emitted changes: in range, of one length, padded on an outer side only, and applied
    // to the join of the state rows they give the join of the live rows.
    const auto& emit_left = kernel.emit_left();
    const auto& emit_right = kernel.emit_right();
    const auto& ops = kernel.emit_ops();
    if (emit_left.size() != ops.size() || emit_right.size() != ops.size()) __builtin_trap();
    const bool forwards = !plan.mini_batch && plan.how == jn::How::Inner;
    std::vector<Row> all[2];
    for (int s = 0; s < 2; ++s) {
      all[s] = state[s];
      all[s].insert(all[s].end(), rows[s].begin(), rows[s].end());
    }
    for (size_t i = 0; i < ops.size(); ++i) {
      const int64_t l = emit_left[i];
      const int64_t r = emit_right[i];
      if (l < -1 || l >= static_cast<int64_t>(all[jn::kLeft].size())) __builtin_trap();
      if (r < -1 || r >= static_cast<int64_t>(all[jn::kRight].size())) __builtin_trap();
      if (l < 0 && (r < 0 || !plan.outer(jn::kRight))) __builtin_trap();
      if (r < 0 && !plan.outer(jn::kLeft)) __builtin_trap();
      if (plan.how == jn::How::Inner && (l < 0 || r < 0)) __builtin_trap();
      const int8_t op = ops[i];
      if (op < 0 || op > 3 || (!forwards && op != 0 && op != 3)) __builtin_trap();
      Out row{l < 0 ? std::vector<int64_t>{} : all[jn::kLeft][static_cast<size_t>(l)].v,
              r < 0 ? std::vector<int64_t>{} : all[jn::kRight][static_cast<size_t>(r)].v};
      if (op == 0 || op == 2) {
        ++materialized[row];
        continue;
      }
      const auto it = materialized.find(row);
      if (it == materialized.end() || it->second <= 0) __builtin_trap();  // not in the output
      if (--it->second == 0) materialized.erase(it);
    }
    if (materialized != brute_join(plan, live)) __builtin_trap();

    // The kept rows: ascending, in range, the model's live rows; their distinct keys.
    std::set<std::vector<int64_t>> keys;
    for (int s = 0; s < 2; ++s) {
      const auto& keep = kernel.keep_rows(s);
      std::vector<Row> next;
      for (size_t i = 0; i < keep.size(); ++i) {
        if (keep[i] < 0 || keep[i] >= static_cast<int64_t>(all[s].size())) __builtin_trap();
        if (i > 0 && keep[i] <= keep[i - 1]) __builtin_trap();
        next.push_back(all[s][static_cast<size_t>(keep[i])]);
        next.back().op_null = false;
        next.back().op = 0;
      }
      if (values(next) != values(live[s])) __builtin_trap();
      for (const Row& r : live[s]) keys.emplace(r.v.begin(), r.v.begin() + plan.num_keys);
      kept[s] = std::move(next);
    }
    if (kernel.live_keys() != static_cast<int64_t>(keys.size())) __builtin_trap();
    have_kept = true;
  }
  return 0;
}
