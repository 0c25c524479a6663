// One aggregate's value for one key, as it is emitted: compared with the value emitted before
// (an unchanged value emits nothing) and appended to the output column.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "agg/values.h"
#include "arrow/builder.h"
#include "arrow/int128.h"

namespace sliceflow::changelog {

struct Scalar {
  bool valid = false;
  int64_t i = 0;       // I64 class (and counts)
  double d = 0;        // F64 class
  int128 x = 0;        // I128 class
  std::string_view s;  // Str class
};

// Equal as emitted: nulls equal each other, floats by bit pattern but every NaN equal.
inline bool same_scalar(agg::ValueClass c, const Scalar& a, const Scalar& b) {
  if (a.valid != b.valid) return false;
  if (!a.valid) return true;
  switch (c) {
    case agg::ValueClass::I64:
      return a.i == b.i;
    case agg::ValueClass::F64:
      // Every NaN is one value (Spark's normalisation); otherwise the bits (-0.0 is not 0.0).
      if (a.d != a.d || b.d != b.d) return a.d != a.d && b.d != b.d;
      return std::memcmp(&a.d, &b.d, sizeof(double)) == 0;
    case agg::ValueClass::I128:
      return a.x == b.x;
    default:
      return a.s == b.s;
  }
}

inline void append_scalar(agg::ValueClass c, arrow::ColumnBuilder& out, const Scalar& v) {
  if (!v.valid) return out.append_null();
  switch (c) {
    case agg::ValueClass::I64:
      return agg::I64Values::append(out, v.i);
    case agg::ValueClass::F64:
      return agg::F64Values::append(out, v.d);
    case agg::ValueClass::I128:
      return agg::I128Values::append(out, v.x);
    default:
      return agg::StrValues::append(out, v.s);
  }
}

// Scalar accessors for the value classes' traits.
inline void set_scalar(Scalar& out, int64_t v) { out.i = v; }
inline void set_scalar(Scalar& out, double v) { out.d = v; }
inline void set_scalar(Scalar& out, int128 v) { out.x = v; }
inline void set_scalar(Scalar& out, std::string_view v) { out.s = v; }

}  // namespace sliceflow::changelog
