// One aggregate's value for one key, as it is emitted: compared with the value emitted before
// (an unchanged value emits nothing) and appended to the output column.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "arrow/builder.h"
#include "arrow/int128.h"
#include "window/values.h"

namespace sliceflow::changelog {

struct Scalar {
  bool valid = false;
  int64_t i = 0;  // I64 class (and counts)
  double d = 0;   // F64 class
  int128 x = 0;   // I128 class
  std::string_view s;  // Str class
};

// Equal as emitted: nulls equal each other, floats by bit pattern but every NaN equal.
inline bool same_scalar(window::ValueClass c, const Scalar& a, const Scalar& b) {
  if (a.valid != b.valid) return false;
  if (!a.valid) return true;
  switch (c) {
    case window::ValueClass::I64:
      return a.i == b.i;
    case window::ValueClass::F64:
      // Every NaN is one value (Spark's normalisation); otherwise the bits (-0.0 is not 0.0).
      if (a.d != a.d || b.d != b.d) return a.d != a.d && b.d != b.d;
      return std::memcmp(&a.d, &b.d, sizeof(double)) == 0;
    case window::ValueClass::I128:
      return a.x == b.x;
    default:
      return a.s == b.s;
  }
}

inline void append_scalar(window::ValueClass c, arrow::ColumnBuilder& out, const Scalar& v) {
  if (!v.valid) return out.append_null();
  switch (c) {
    case window::ValueClass::I64:
      return window::I64Values::append(out, v.i);
    case window::ValueClass::F64:
      return window::F64Values::append(out, v.d);
    case window::ValueClass::I128:
      return window::I128Values::append(out, v.x);
    default:
      return window::StrValues::append(out, v.s);
  }
}

// The value class of an output column's type.
inline window::ValueClass output_class(const arrow::Type& t) {
  switch (t.kind) {
    case arrow::Kind::Float32:
    case arrow::Kind::Float64:
      return window::ValueClass::F64;
    case arrow::Kind::Decimal128:
      return window::ValueClass::I128;
    case arrow::Kind::Utf8:
    case arrow::Kind::Binary:
      return window::ValueClass::Str;
    default:
      return window::ValueClass::I64;
  }
}

// Scalar accessors for the value classes' traits.
inline void set_scalar(Scalar& out, int64_t v) { out.i = v; }
inline void set_scalar(Scalar& out, double v) { out.d = v; }
inline void set_scalar(Scalar& out, int128 v) { out.x = v; }
inline void set_scalar(Scalar& out, std::string_view v) { out.s = v; }

}  // namespace sliceflow::changelog
