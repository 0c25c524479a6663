// Grouping keys as bytes. The key columns of a row are written into one byte string (a tag
// byte per column, 0 for null, then the value in its native width; strings as a 4-byte length
// and their bytes), so that any combination of key columns hashes, compares and travels
// through Spark's shuffle as one binary column. Floating-point keys are normalised the way
// Spark's groupBy normalises them: -0.0 is 0.0 and every NaN is the same NaN.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "arrow/builder.h"
#include "arrow/column_view.h"
#include "arrow/type.h"

namespace sliceflow::window {

inline uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

inline uint64_t hash_bytes(std::string_view s) {
  const char* p = s.data();
  size_t n = s.size();
  uint64_t h = 0x9E3779B97F4A7C15ULL ^ (static_cast<uint64_t>(n) * 0xff51afd7ed558ccdULL);
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    h = (h ^ mix64(v)) * 0x9E3779B97F4A7C15ULL;
    p += 8;
    n -= 8;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, p, n);
  return mix64(h ^ tail ^ (static_cast<uint64_t>(n) << 56));
}

inline double normalized_double(double v) {
  if (v != v) return __builtin_nan("");
  return v == 0.0 ? 0.0 : v;
}
inline float normalized_float(float v) {
  if (v != v) return __builtin_nanf("");
  return v == 0.0f ? 0.0f : v;
}

// Encodes the key columns of a whole batch, column by column.
class KeyEncoder {
 public:
  // Checks that every key column has a layout that can be a key.
  explicit KeyEncoder(std::vector<const arrow::ColumnView*> columns);

  void encode(int64_t rows);
  std::string_view key(int64_t row) const {
    const auto b = offsets_[static_cast<size_t>(row)];
    return {bytes_.data() + b, offsets_[static_cast<size_t>(row) + 1] - b};
  }

 private:
  std::vector<const arrow::ColumnView*> columns_;
  std::vector<size_t> offsets_;
  std::vector<char> bytes_;
  std::vector<size_t> cursor_;
};

// Appends the key columns held in `key` to `out` (one builder per key column, of the output
// types). Throws std::invalid_argument if the bytes do not match the types.
void decode_key(std::string_view key, const std::vector<arrow::ColumnBuilder*>& out);

// Throws std::invalid_argument unless a key of input layout `layout` can be written as an
// output column of type `type`.
void check_key_type(arrow::Layout layout, const arrow::Type& type);

}  // namespace sliceflow::window
