#include "order/sort_key.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "arrow/int128.h"

namespace sliceflow::order {
namespace {

using arrow::Layout;

constexpr char kNullFirst = 0x00;
constexpr char kValue = 0x01;
constexpr char kNullLast = 0x02;

// Appends the `width` low bytes of `bits` big-endian, inverted when `invert`.
inline void put_be(std::vector<char>& out, uint64_t bits, int width, bool invert) {
  if (invert) bits = ~bits;
  for (int shift = (width - 1) * 8; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((bits >> shift) & 0xFF));
  }
}

inline uint64_t signed_bits(int64_t v, int width) {
  const uint64_t sign = uint64_t{1} << (width * 8 - 1);
  const uint64_t mask = width == 8 ? ~uint64_t{0} : (uint64_t{1} << (width * 8)) - 1;
  return (static_cast<uint64_t>(v) & mask) ^ sign;
}

inline uint64_t double_bits(double v) {
  if (v != v) v = __builtin_nan("");
  if (v == 0.0) v = 0.0;  // -0.0 sorts as 0.0
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return (bits >> 63) != 0 ? ~bits : bits ^ (uint64_t{1} << 63);
}

inline uint32_t float_bits(float v) {
  if (v != v) v = __builtin_nanf("");
  if (v == 0.0f) v = 0.0f;
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return (bits >> 31) != 0 ? ~bits : bits ^ (uint32_t{1} << 31);
}

int int_width(Layout layout) {
  switch (layout) {
    case Layout::Bool:
    case Layout::Int8:
      return 1;
    case Layout::Int16:
      return 2;
    case Layout::Int32:
      return 4;
    default:
      return 8;
  }
}

}  // namespace

void check_orderable(const arrow::ColumnView& column) {
  switch (column.layout()) {
    case Layout::List:
    case Layout::Struct:
      throw std::invalid_argument("order column '" + column.name() + "' (format '" +
                                  column.format() +
                                  "') cannot be ordered: only atomic types (numbers, strings, "
                                  "binary, booleans, dates, timestamps, decimals) can");
    default:
      return;
  }
}

SortKeyEncoder::SortKeyEncoder(std::vector<SortColumn> columns) : columns_(std::move(columns)) {
  for (const auto& c : columns_) {
    if (c.column == nullptr) throw std::invalid_argument("sort key: missing column");
    check_orderable(*c.column);
    if (c.column->length() != columns_.front().column->length()) {
      throw std::invalid_argument("sort key: order columns of different lengths");
    }
  }
}

void SortKeyEncoder::append_value(const SortColumn& c, int64_t row) {
  const auto& col = *c.column;
  const bool inv = c.descending;
  switch (col.layout()) {
    case Layout::Bool:
    case Layout::Int8:
    case Layout::Int16:
    case Layout::Int32:
    case Layout::Int64: {
      const int width = int_width(col.layout());
      put_be(bytes_, signed_bits(col.i64(row), width), width, inv);
      return;
    }
    case Layout::Float32:
      put_be(bytes_, float_bits(static_cast<float>(col.f64(row))), 4, inv);
      return;
    case Layout::Float64:
      put_be(bytes_, double_bits(col.f64(row)), 8, inv);
      return;
    case Layout::Decimal128: {
      const auto u = static_cast<uint128>(col.i128(row)) ^ (static_cast<uint128>(1) << 127);
      put_be(bytes_, static_cast<uint64_t>(u >> 64), 8, inv);
      put_be(bytes_, static_cast<uint64_t>(u), 8, inv);
      return;
    }
    case Layout::String:
    case Layout::LargeString: {
      const std::string_view s = col.str(row);
      const char zero = inv ? static_cast<char>(0xFF) : 0;
      const char escape = inv ? 0 : static_cast<char>(0xFF);
      for (const char ch : s) {
        if (ch == 0) {
          bytes_.push_back(zero);
          bytes_.push_back(escape);
        } else {
          bytes_.push_back(inv ? static_cast<char>(~ch) : ch);
        }
      }
      bytes_.push_back(zero);
      bytes_.push_back(zero);
      return;
    }
    default:
      check_orderable(col);  // throws for the nested layouts
  }
}

void SortKeyEncoder::encode() {
  rows_ = columns_.empty() ? 0 : columns_.front().column->length();
  bytes_.clear();
  offsets_.assign(1, 0);
  offsets_.reserve(static_cast<size_t>(rows_) + 1);
  bytes_.reserve(static_cast<size_t>(rows_) * columns_.size() * 9);
  for (int64_t row = 0; row < rows_; ++row) {
    for (const auto& c : columns_) {
      if (c.column->is_null(row)) {
        bytes_.push_back(c.nulls_first ? kNullFirst : kNullLast);
      } else {
        bytes_.push_back(kValue);
        append_value(c, row);
      }
    }
    offsets_.push_back(static_cast<int64_t>(bytes_.size()));
  }
}

}  // namespace sliceflow::order
