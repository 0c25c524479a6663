// Grouping keys as bytes. The key columns of a row are written into one byte string (a tag
// byte per column, 0 for null, then the value in its native width, little-endian; strings as a
// 4-byte length and their bytes), so that any combination of key columns hashes, compares and
// travels through Spark's shuffle as one binary column. Floating-point keys are normalised the way
// Spark's groupBy normalises them: -0.0 is 0.0 and every NaN is the same NaN. Every operator
// keys its state by these bytes, so the format is shared (agg/). Cost: one pass per key column
// over a chunk of rows, no per-row allocation; hashing is O(key bytes).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "arrow/builder.h"
#include "arrow/column_view.h"
#include "arrow/int128.h"
#include "arrow/type.h"

namespace sliceflow::agg {

// 64x64 -> 128-bit multiply, folded (the mixing step of wyhash-style hashes).
inline uint64_t fold_mul(uint64_t a, uint64_t b) {
  const uint128 r = static_cast<uint128>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}

inline uint64_t hash_bytes(std::string_view s) {
  const char* p = s.data();
  const size_t n = s.size();
  constexpr uint64_t k0 = 0x9E3779B97F4A7C15ULL;
  constexpr uint64_t k1 = 0xff51afd7ed558ccdULL;
  uint64_t a = 0;
  uint64_t b = 0;
  if (n <= 16) {
    // Short keys (a tagged integer key is 9 bytes): two overlapping loads, one multiply.
    if (n >= 8) {
      std::memcpy(&a, p, 8);
      std::memcpy(&b, p + n - 8, 8);
    } else if (n >= 4) {
      uint32_t x, y;
      std::memcpy(&x, p, 4);
      std::memcpy(&y, p + n - 4, 4);
      a = x;
      b = y;
    } else if (n > 0) {
      a = (static_cast<uint64_t>(static_cast<uint8_t>(p[0])) << 16) |
          (static_cast<uint64_t>(static_cast<uint8_t>(p[n >> 1])) << 8) |
          static_cast<uint8_t>(p[n - 1]);
    }
    return fold_mul(a ^ k0, b ^ (k1 * n));
  }
  uint64_t h = k0 ^ (static_cast<uint64_t>(n) * k1);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    std::memcpy(&a, p + i, 8);
    std::memcpy(&b, p + i + 8, 8);
    h = fold_mul(a ^ h, b ^ k1);
  }
  std::memcpy(&a, p + n - 16, 8);
  std::memcpy(&b, p + n - 8, 8);
  return fold_mul(a ^ h ^ k0, b ^ k1);
}

// The hash of (key, slice) that the bundle buffer is probed with.
inline uint64_t hash_key_slice(std::string_view key, int64_t slice) {
  return fold_mul(hash_bytes(key) ^ static_cast<uint64_t>(slice), 0x9E3779B97F4A7C15ULL);
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

  // Encodes rows [begin, end) (the previous range is forgotten).
  void encode(int64_t begin, int64_t end);
  std::string_view key(int64_t row) const {
    const auto i = static_cast<size_t>(row - begin_);
    return {bytes_.data() + offsets_[i], offsets_[i + 1] - offsets_[i]};
  }

 private:
  std::vector<const arrow::ColumnView*> columns_;
  int64_t begin_ = 0;
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

}  // namespace sliceflow::agg
