// libFuzzer harness for the window kernel. The input bytes pick a window (kind, size, slide,
// offset), a bundle size, an output batch size and rows (key, time, integer, double and string
// values, each possibly null). The rows go through the local phase in small batches, the
// partial rows are sorted by (key, slice) as Spark's shuffle would sort them, and the global
// phase sweeps them. Checks, besides the sanitizers: every row with a time is counted by
// count(*) in exactly as many windows as hold it (TUMBLE and HOP: size/slide when the slide
// divides the size; CUMULATE: the steps from its slice to the cycle's end).
// Inputs whose first byte has the top bit set run as a stream instead (run_streaming).
// Built by scripts/sanitize.sh with clang -fsanitize=fuzzer,address,undefined.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "agg/plan_fields.h"
#include "agg/state_schema.h"
#include "arrow/builder.h"
#include "arrow/column_view.h"
#include "arrow/type.h"
#include "owned_arrays.h"
#include "window/global_aggregator.h"
#include "window/local_aggregator.h"
#include "window/plan.h"
#include "window/slice_assigner.h"

namespace {

using sliceflow::arrow::ColumnBuilder;
using sliceflow::arrow::ColumnView;
using sliceflow::arrow::Kind;
using sliceflow::arrow::Type;
namespace win = sliceflow::window;

std::unique_ptr<Type> leaf(const std::string& name, Kind kind, const char* tz = "") {
  auto t = sliceflow::agg::column_type(name, kind);
  t->timezone = tz;
  return t;
}

using fuzz::copy_value;
using fuzz::own;
using fuzz::Owned;
using sliceflow::agg::clone_type;

// A partial row: the batch it is in and its row number.
struct Ref {
  const ColumnView* view;
  int64_t row;
};

// Streaming: the rows go in micro-batches (a row whose byte 4 has its top bit set ends one),
// each run as one step of a bucket (sliceflow.window.state): the local phase leaves rows out
// of windows ending by the previous watermark, the sweep merges the carried partial rows
// (input 0) with the new ones (input 1), fires the windows ending in (previous, current
// watermark] and names the rows to carry. A last step with a far watermark fires the rest.
// Checks: carried row numbers are in range; nothing is carried at the end; every (row, window)
// pair is counted once, in a fired window or as late.
template <typename AppendRow>
void run_streaming(const win::Plan& plan, const Type& input, const Type& partial,
                   const Type& output, const uint8_t* data, size_t size, int64_t max_output,
                   size_t batch_rows, AppendRow& append_row, bool checkable) {
  constexpr int64_t unit = 1000;
  const int64_t delay = (data[1] >> 4) * unit;
  std::vector<std::unique_ptr<Owned>> arrays;  // every partial batch, alive to the end
  std::vector<std::unique_ptr<ColumnView>> views;
  std::vector<Ref> carry;
  sliceflow::int128 watermark = -(sliceflow::int128{1} << 40);
  bool seen_time = false;
  int64_t max_time = 0;
  int64_t expected = 0;
  int64_t counted = 0;
  int64_t late = 0;
  auto keep = [&](std::unique_ptr<ArrowArray> array) {
    arrays.push_back(own(partial, std::move(array)));
    views.push_back(std::make_unique<ColumnView>(arrays.back()->schema, arrays.back()->array));
    return views.back().get();
  };
  auto add_run = [&](win::GlobalAggregator& global, const std::vector<Ref>& rows, int run) {
    ColumnBuilder b(partial);
    for (size_t i = 0; i < rows.size(); ++i) {
      for (size_t c = 0; c < rows[i].view->num_children(); ++c) {
        copy_value(rows[i].view->child(c), rows[i].row, b.child(c));
      }
      b.finish_struct();
      if (static_cast<size_t>(b.length()) >= batch_rows || i + 1 == rows.size()) {
        auto array = std::make_unique<ArrowArray>();
        b.export_to(array.get());
        auto owned = own(partial, std::move(array));
        global.add(owned->schema, &owned->array, run);
      }
    }
  };
  // One step: the rows [begin, end) of the input (5 bytes each), then the watermark `next`.
  auto step = [&](size_t begin, size_t end, sliceflow::int128 next) {
    win::LocalAggregator local(plan, input, clone_type(partial));
    local.set_late_floor(watermark);
    std::vector<Ref> fresh;
    auto take_all = [&]() {
      while (auto p = local.take()) {
        const ColumnView* v = keep(std::move(p));
        for (int64_t r = 0; r < v->length(); ++r) fresh.push_back({v, r});
      }
    };
    ColumnBuilder batch(input);
    auto flush_batch = [&]() {
      if (batch.length() == 0) return;
      auto array = std::make_unique<ArrowArray>();
      batch.export_to(array.get());
      auto owned = own(input, std::move(array));
      if (local.add(owned->schema, owned->array)) take_all();
    };
    for (size_t at = begin; at < end; at += 5) {
      expected += append_row(batch, data + at);
      int16_t t;
      std::memcpy(&t, data + at + 1, 2);
      if (t != INT16_MIN) {
        max_time =
            seen_time ? std::max<int64_t>(max_time, int64_t{t} * unit / 4) : int64_t{t} * unit / 4;
        seen_time = true;
      }
      if (static_cast<size_t>(batch.length()) >= batch_rows) flush_batch();
    }
    flush_batch();
    if (auto p = local.finish()) {
      const ColumnView* v = keep(std::move(p));
      for (int64_t r = 0; r < v->length(); ++r) fresh.push_back({v, r});
    }
    late += local.stats().late_row_windows;
    std::sort(fresh.begin(), fresh.end(), [](const Ref& a, const Ref& b) {
      const auto ka = a.view->child(0).str(a.row);
      const auto kb = b.view->child(0).str(b.row);
      if (ka != kb) return ka < kb;
      return a.view->child(1).i64(a.row) < b.view->child(1).i64(b.row);
    });
    win::GlobalAggregator global(plan, clone_type(partial), clone_type(output), max_output);
    global.set_bounds(watermark, next);
    add_run(global, carry, 0);
    add_run(global, fresh, 1);
    global.finish();
    while (auto out = global.pull()) {
      auto owned = own(output, std::move(out));
      const ColumnView view(owned->schema, owned->array);
      for (int64_t row = 0; row < view.length(); ++row) counted += view.child(4).i64(row);
    }
    std::vector<Ref> all = carry;
    all.insert(all.end(), fresh.begin(), fresh.end());
    auto rows_type = leaf("", Kind::Int64);
    auto owned = own(*rows_type, global.take_carry());
    const ColumnView rows(owned->schema, owned->array);
    std::vector<Ref> next_carry;
    for (int64_t i = 0; i < rows.length(); ++i) {
      const int64_t r = rows.i64(i);
      if (r < 0 || static_cast<size_t>(r) >= all.size()) __builtin_trap();
      next_carry.push_back(all[static_cast<size_t>(r)]);
    }
    carry = std::move(next_carry);
    watermark = next;
  };
  size_t begin = 8;
  for (size_t at = 8; at + 5 <= size; at += 5) {
    if ((data[at + 4] & 0x80) || at + 10 > size) {
      const sliceflow::int128 next =
          seen_time ? std::max<sliceflow::int128>(watermark, max_time - delay) : watermark;
      step(begin, at + 5, next);
      begin = at + 5;
    }
  }
  step(begin, begin, sliceflow::int128{1} << 60);
  if (!carry.empty()) __builtin_trap();
  if (checkable && counted + late != expected) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 8) return 0;
  constexpr int64_t unit = 1000;
  // The plan's fields as sliceflow.window.plan writes them, read by the bindings' parser.
  sliceflow::agg::PlanFields fields("window plan");
  const int64_t slide = (1 + data[1] % 8) * unit;
  switch (data[0] % 3) {
    case 0:
      fields.set_string("kind", "tumble");
      fields.set_int("size", slide);
      break;
    case 1:
      fields.set_string("kind", "hop");
      fields.set_int("size", slide * (1 + data[2] % 5) +
                                 (data[3] % 2 ? (data[3] / 2 % (slide / unit)) * unit : 0));
      break;
    default:
      fields.set_string("kind", "cumulate");
      fields.set_int("size", slide * (1 + data[2] % 6));
      break;
  }
  fields.set_int("slide", slide);
  fields.set_int("offset", static_cast<int8_t>(data[4]) * unit / 3);
  fields.set_int("num_keys", 1);
  fields.set_int("bundle_rows", 1 + data[5] % 16);
  // Input columns: k, ts, v (int64), d (double), s (string).
  fields.set_aggs({{"count", -1},
                   {"count", 2},
                   {"sum", 2},
                   {"avg", 3},
                   {"min", 4},
                   {"max", 2},
                   {"count_distinct", 4},
                   {"first_value", 2},
                   {"last_value", 3},
                   {"sum", 3},
                   {"avg", 2}});
  const win::Plan plan = win::parse_plan(fields);
  const int64_t max_output = 1 + data[6] % 8;
  const size_t batch_rows = 1 + data[7] % 7;

  auto input = leaf("", Kind::Struct);
  input->children.push_back(leaf("k", Kind::Int64));
  input->children.push_back(leaf("ts", Kind::TimestampUs, "UTC"));
  input->children.push_back(leaf("v", Kind::Int64));
  input->children.push_back(leaf("d", Kind::Float64));
  input->children.push_back(leaf("s", Kind::Utf8));

  // The schemas as the plans derive them (cpp/agg/state_schema.h).
  const auto args = sliceflow::agg::argument_types(plan.aggs, *input);
  auto partial = win::partial_schema(plan, args);
  auto output = leaf("", Kind::Struct);
  for (const char* name : {"window_start", "window_end", "window_time"}) {
    output->children.push_back(leaf(name, Kind::TimestampUs, "UTC"));
  }
  output->children.push_back(leaf("k", Kind::Int64));
  for (size_t a = 0; a < plan.aggs.size(); ++a) {
    output->children.push_back(
        sliceflow::agg::result_type(plan.aggs[a].fn, args[a], "agg" + std::to_string(a)));
  }

  const win::SliceAssigner assigner(plan);
  // Appends the row that the 5 bytes at r describe; returns how many windows hold it.
  auto append_row = [&](ColumnBuilder& batch, const uint8_t* r) -> int64_t {
    int64_t windows = 0;
    if (r[0] == 0xFF) {
      batch.child(0).append_null();
    } else {
      batch.child(0).append_fixed<int64_t>(r[0] % 7);
    }
    int16_t t;
    std::memcpy(&t, r + 1, 2);
    if (t == INT16_MIN) {
      batch.child(1).append_null();
    } else {
      const int64_t ts = int64_t{t} * unit / 4;
      batch.child(1).append_fixed<int64_t>(ts);
      const sliceflow::int128 s = assigner.slice_start(ts);
      if (plan.kind == win::WindowKind::Cumulate) {
        const sliceflow::int128 c = assigner.cycle_start(s);
        windows = static_cast<int64_t>((c + plan.size - s) / plan.slide);
      } else if (plan.size % plan.slide == 0) {
        windows = plan.size / plan.slide;
      }
    }
    if (r[3] == 0xFF) {
      batch.child(2).append_null();
      batch.child(3).append_null();
      batch.child(4).append_null();
    } else {
      const auto v = static_cast<int8_t>(r[3]);
      batch.child(2).append_fixed<int64_t>(v * int64_t{1000000007});
      batch.child(3).append_fixed<double>(v * 0.25);
      batch.child(4).append_string(std::string(1 + r[4] % 3, static_cast<char>('a' + r[4] % 5)));
    }
    batch.finish_struct();
    return windows;
  };
  const bool checkable = plan.kind == win::WindowKind::Cumulate || plan.size % plan.slide == 0;
  if (data[0] & 0x80) {
    try {
      run_streaming(plan, *input, *partial, *output, data, size, max_output, batch_rows, append_row,
                    checkable);
    } catch (const std::overflow_error&) {
      // Overflow errors (ANSI sums) are answers, not crashes.
    }
    return 0;
  }
  int64_t expected_counts = 0;
  std::vector<std::unique_ptr<Owned>> partials;
  try {
    win::LocalAggregator local(plan, *input, clone_type(*partial));
    ColumnBuilder batch(*input);
    auto flush_batch = [&]() {
      if (batch.length() == 0) return;
      auto array = std::make_unique<ArrowArray>();
      batch.export_to(array.get());
      auto owned = own(*input, std::move(array));
      local.add(owned->schema, owned->array);
      while (auto p = local.take()) partials.push_back(own(*partial, std::move(p)));
    };
    for (size_t at = 8; at + 5 <= size; at += 5) {
      expected_counts += append_row(batch, data + at);
      if (static_cast<size_t>(batch.length()) >= batch_rows) flush_batch();
    }
    flush_batch();
    if (auto p = local.finish()) partials.push_back(own(*partial, std::move(p)));

    // Spark's shuffle: by key, sorted by (key, slice).
    std::vector<std::unique_ptr<ColumnView>> views;
    std::vector<std::tuple<std::string, int64_t, size_t, int64_t>> order;
    for (size_t b = 0; b < partials.size(); ++b) {
      views.push_back(std::make_unique<ColumnView>(partials[b]->schema, partials[b]->array));
      for (int64_t row = 0; row < views[b]->length(); ++row) {
        order.emplace_back(std::string(views[b]->child(0).str(row)), views[b]->child(1).i64(row), b,
                           row);
      }
    }
    std::sort(order.begin(), order.end());
    win::GlobalAggregator global(plan, clone_type(*partial), clone_type(*output), max_output);
    int64_t counted = 0;
    auto drain = [&]() {
      while (auto out = global.pull()) {
        auto owned = own(*output, std::move(out));
        const ColumnView view(owned->schema, owned->array);
        for (int64_t row = 0; row < view.length(); ++row) counted += view.child(4).i64(row);
      }
    };
    ColumnBuilder sorted(*partial);
    for (size_t i = 0; i < order.size(); ++i) {
      const auto& [key, slice, b, row] = order[i];
      for (size_t c = 0; c < views[b]->num_children(); ++c)
        copy_value(views[b]->child(c), row, sorted.child(c));
      sorted.finish_struct();
      if (static_cast<size_t>(sorted.length()) >= batch_rows || i + 1 == order.size()) {
        auto array = std::make_unique<ArrowArray>();
        sorted.export_to(array.get());
        auto owned = own(*partial, std::move(array));
        global.add(owned->schema, &owned->array);
        drain();
      }
    }
    global.finish();
    drain();
    if (checkable && counted != expected_counts) __builtin_trap();
  } catch (const std::overflow_error&) {
    // Overflow errors (ANSI sums) are answers, not crashes.
  }
  return 0;
}
