// What the kernel fuzz harnesses (fuzz_window, fuzz_changelog, fuzz_dedup, fuzz_join,
// fuzz_topn) share: exported Arrow arrays that own their schema and free both, and row copies
// between batches.
#pragma once

#include <cstdint>
#include <memory>

#include "arrow/builder.h"
#include "arrow/c_data.h"
#include "arrow/column_view.h"
#include "arrow/int128.h"
#include "arrow/type.h"

namespace fuzz {

using sliceflow::arrow::ColumnBuilder;
using sliceflow::arrow::ColumnView;
using sliceflow::arrow::Kind;
using sliceflow::arrow::Type;

// An exported array and its schema, released together.
struct Owned {
  ArrowSchema schema{};
  ArrowArray array{};
  Owned() = default;
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() {
    if (array.release != nullptr) array.release(&array);
    if (schema.release != nullptr) schema.release(&schema);
  }
};

// Takes `array` (a kernel's output) over, with `type`'s schema.
inline std::unique_ptr<Owned> own(const Type& type, std::unique_ptr<ArrowArray> array) {
  auto o = std::make_unique<Owned>();
  sliceflow::arrow::export_schema(type, &o->schema);
  o->array = *array;
  array->release = nullptr;
  return o;
}

// The rows built so far in `b`, exported.
inline std::unique_ptr<Owned> build(ColumnBuilder& b, const Type& type) {
  auto array = std::make_unique<ArrowArray>();
  b.export_to(array.get());
  return own(type, std::move(array));
}

// Appends row `row` of `in` to `out` (of the same type; int32 and int64 columns read as int64).
inline void copy_value(const ColumnView& in, int64_t row, ColumnBuilder& out) {
  if (in.is_null(row)) return out.append_null();
  switch (out.type().kind) {
    case Kind::Int32:
      return out.append_fixed<int32_t>(static_cast<int32_t>(in.i64(row)));
    case Kind::Int64:
      return out.append_fixed<int64_t>(in.i64(row));
    case Kind::Float64:
      return out.append_fixed<double>(in.f64(row));
    case Kind::Decimal128:
      return out.append_fixed<sliceflow::int128>(in.i128(row));
    case Kind::Utf8:
    case Kind::Binary:
      return out.append_string(in.str(row));
    case Kind::List:
      for (int64_t k = in.list_begin(row); k < in.list_end(row); ++k)
        copy_value(in.child(0), k, out.child(0));
      return out.finish_list();
    default:
      __builtin_trap();
  }
}

}  // namespace fuzz
