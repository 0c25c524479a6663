// The four physical value classes the aggregates of every operator work on, with the
// comparisons, hashing and output appends each needs (header-only: the traits inline into the
// per-batch loops, O(1) per value). Booleans, integers, dates and timestamps are int64; float and
// double are double; decimal128 is int128; strings are bytes compared unsigned, as Spark's
// UTF8String compares them.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

#include "agg/key_codec.h"
#include "arrow/builder.h"
#include "arrow/column_view.h"
#include "arrow/int128.h"
#include "arrow/type.h"

namespace sliceflow::agg {

enum class ValueClass : uint8_t { I64, F64, I128, Str };

inline ValueClass value_class(arrow::Layout layout, const std::string& column) {
  switch (layout) {
    case arrow::Layout::Bool:
    case arrow::Layout::Int8:
    case arrow::Layout::Int16:
    case arrow::Layout::Int32:
    case arrow::Layout::Int64:
      return ValueClass::I64;
    case arrow::Layout::Float32:
    case arrow::Layout::Float64:
      return ValueClass::F64;
    case arrow::Layout::Decimal128:
      return ValueClass::I128;
    case arrow::Layout::String:
    case arrow::Layout::LargeString:
      return ValueClass::Str;
    default:
      throw std::invalid_argument("column '" + column +
                                  "' has a nested type, which cannot be aggregated");
  }
}

// The value class of a column of type `t` (a partial, state or output column).
inline ValueClass value_class_of(const arrow::Type& t) {
  switch (t.kind) {
    case arrow::Kind::Float32:
    case arrow::Kind::Float64:
      return ValueClass::F64;
    case arrow::Kind::Decimal128:
      return ValueClass::I128;
    case arrow::Kind::Utf8:
    case arrow::Kind::Binary:
      return ValueClass::Str;
    case arrow::Kind::Bool:
    case arrow::Kind::Int8:
    case arrow::Kind::Int16:
    case arrow::Kind::Int32:
    case arrow::Kind::Int64:
    case arrow::Kind::Date32:
    case arrow::Kind::TimestampUs:
      return ValueClass::I64;
    default:
      throw std::invalid_argument("column '" + t.name +
                                  "' has a nested type, which an aggregate does not hold");
  }
}

// A fixed-width value class: held by value, its bytes are its memory.
template <typename V>
struct FixedValues {
  using T = V;
  using View = V;
  static void assign(T& dst, View v) { dst = v; }
  static View view(const T& v) { return v; }
  static std::string_view bytes(const View& v, char* scratch) {
    std::memcpy(scratch, &v, sizeof(v));
    return {scratch, sizeof(v)};
  }
  static T from_bytes(std::string_view b) {
    T v;
    std::memcpy(&v, b.data(), sizeof(v));
    return v;
  }
};

struct I64Values : FixedValues<int64_t> {
  static View read(const arrow::ColumnView& c, int64_t i) { return c.i64(i); }
  static bool less(View a, View b) { return a < b; }
  static void append(arrow::ColumnBuilder& out, View v) {
    switch (out.type().kind) {
      case arrow::Kind::Bool:
        out.append_bool(v != 0);
        break;
      case arrow::Kind::Int8:
        out.append_fixed<int8_t>(static_cast<int8_t>(v));
        break;
      case arrow::Kind::Int16:
        out.append_fixed<int16_t>(static_cast<int16_t>(v));
        break;
      case arrow::Kind::Int32:
      case arrow::Kind::Date32:
        out.append_fixed<int32_t>(static_cast<int32_t>(v));
        break;
      default:
        out.append_fixed<int64_t>(v);
        break;
    }
  }
};

struct F64Values : FixedValues<double> {
  static View read(const arrow::ColumnView& c, int64_t i) { return c.f64(i); }
  // NaN is larger than every other value, as in Spark's ordering.
  static bool less(View a, View b) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
    return a < b;
  }
  // -0.0 and 0.0 are one distinct value, and every NaN is one (Spark's normalisation).
  static std::string_view bytes(const View& v, char* scratch) {
    return FixedValues<double>::bytes(normalized_double(v), scratch);
  }
  static void append(arrow::ColumnBuilder& out, View v) {
    if (out.type().kind == arrow::Kind::Float32) {
      out.append_fixed<float>(static_cast<float>(v));
    } else {
      out.append_fixed<double>(v);
    }
  }
};

struct I128Values : FixedValues<int128> {
  static View read(const arrow::ColumnView& c, int64_t i) { return c.i128(i); }
  static bool less(View a, View b) { return a < b; }
  static void append(arrow::ColumnBuilder& out, View v) { out.append_fixed<int128>(v); }
};

struct StrValues {
  using T = std::string;
  using View = std::string_view;
  static View read(const arrow::ColumnView& c, int64_t i) { return c.str(i); }
  static bool less(View a, View b) { return a < b; }
  static void assign(T& dst, View v) { dst.assign(v.data(), v.size()); }
  static View view(const T& v) { return v; }
  static std::string_view bytes(const View& v, char*) { return v; }
  static T from_bytes(std::string_view b) { return T(b); }
  static void append(arrow::ColumnBuilder& out, View v) { out.append_string(v); }
};

// Calls f(Values{}) with the value class's traits.
template <typename F>
decltype(auto) with_values(ValueClass c, F&& f) {
  switch (c) {
    case ValueClass::I64:
      return f(I64Values{});
    case ValueClass::F64:
      return f(F64Values{});
    case ValueClass::I128:
      return f(I128Values{});
    default:
      return f(StrValues{});
  }
}

}  // namespace sliceflow::agg
