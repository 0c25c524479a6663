// Spark's Murmur3 hash of Arrow columns (spark_hash.h). Per value type, as Spark's
// InterpretedHashFunction.hash: BOOLEAN, BYTE, SHORT, INT and DATE as an int; BIGINT and
// TIMESTAMP (microseconds) as a long; FLOAT and DOUBLE by their bits after -0.0 -> 0 and NaN ->
// the canonical NaN; DECIMAL by precision; STRING and BINARY by their bytes; a struct's fields
// and an array's elements chained in order.
#include "hash/spark_hash.h"

#include <cmath>
#include <cstring>
#include <string>

namespace sliceflow::hash {
namespace {

constexpr uint32_t kC1 = 0xCC9E2D51u;
constexpr uint32_t kC2 = 0x1B873593u;

inline uint32_t rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

inline uint32_t mix_k1(uint32_t k1) { return rotl(k1 * kC1, 15) * kC2; }

inline uint32_t mix_h1(uint32_t h1, uint32_t k1) { return rotl(h1 ^ k1, 13) * 5u + 0xE6546B64u; }

inline int32_t fmix(uint32_t h1, uint32_t length) {
  h1 ^= length;
  h1 ^= h1 >> 16;
  h1 *= 0x85EBCA6Bu;
  h1 ^= h1 >> 13;
  h1 *= 0xC2B2AE35u;
  h1 ^= h1 >> 16;
  return static_cast<int32_t>(h1);
}

inline uint32_t u32(int32_t v) { return static_cast<uint32_t>(v); }

// BigInteger.toByteArray of a 128-bit value: big-endian two's complement, without the leading
// bytes that only repeat the sign (at least one byte).
std::string_view minimal_bytes(int128 value, char (&buffer)[16]) {
  auto bits = static_cast<uint128>(value);
  for (int i = 15; i >= 0; --i) {
    buffer[i] = static_cast<char>(static_cast<uint8_t>(bits & 0xFF));
    bits >>= 8;
  }
  int start = 0;
  while (start < 15) {
    const auto b = static_cast<uint8_t>(buffer[start]);
    const auto next = static_cast<uint8_t>(buffer[start + 1]);
    const bool redundant = (b == 0x00 && (next & 0x80) == 0) || (b == 0xFF && (next & 0x80) != 0);
    if (!redundant) break;
    ++start;
  }
  return {buffer + start, static_cast<size_t>(16 - start)};
}

// The precision of a "d:p,s" format.
int decimal_precision(const std::string& format) {
  return std::stoi(format.substr(2, format.find(',') - 2));
}

int32_t hash_value(const arrow::ColumnView& c, int64_t i, int32_t seed) {
  if (c.is_null(i)) return seed;
  switch (c.layout()) {
    case arrow::Layout::Bool:
    case arrow::Layout::Int8:
    case arrow::Layout::Int16:
    case arrow::Layout::Int32:
      return hash_int(static_cast<int32_t>(c.i64(i)), seed);
    case arrow::Layout::Int64:
      return hash_long(c.i64(i), seed);
    case arrow::Layout::Float32: {
      const auto f = static_cast<float>(c.f64(i));
      if (f == 0.0f) return hash_int(0, seed);
      if (std::isnan(f)) return hash_int(0x7FC00000, seed);
      int32_t bits;
      std::memcpy(&bits, &f, sizeof(bits));
      return hash_int(bits, seed);
    }
    case arrow::Layout::Float64: {
      const double d = c.f64(i);
      if (d == 0.0) return hash_long(0, seed);
      if (std::isnan(d)) return hash_long(0x7FF8000000000000LL, seed);
      int64_t bits;
      std::memcpy(&bits, &d, sizeof(bits));
      return hash_long(bits, seed);
    }
    case arrow::Layout::Decimal128: {
      const int128 v = c.i128(i);
      if (decimal_precision(c.format()) <= 18) return hash_long(static_cast<int64_t>(v), seed);
      char buffer[16];
      return hash_bytes(minimal_bytes(v, buffer), seed);
    }
    case arrow::Layout::String:
    case arrow::Layout::LargeString:
      return hash_bytes(c.str(i), seed);
    case arrow::Layout::List: {
      const auto& items = c.child(0);
      for (int64_t j = c.list_begin(i); j < c.list_end(i); ++j) seed = hash_value(items, j, seed);
      return seed;
    }
    case arrow::Layout::Struct:
      for (size_t f = 0; f < c.num_children(); ++f) seed = hash_value(c.child(f), i, seed);
      return seed;
  }
  return seed;
}

}  // namespace

int32_t hash_int(int32_t value, int32_t seed) {
  return fmix(mix_h1(u32(seed), mix_k1(u32(value))), 4);
}

int32_t hash_long(int64_t value, int32_t seed) {
  const auto bits = static_cast<uint64_t>(value);
  uint32_t h1 = mix_h1(u32(seed), mix_k1(static_cast<uint32_t>(bits)));
  h1 = mix_h1(h1, mix_k1(static_cast<uint32_t>(bits >> 32)));
  return fmix(h1, 8);
}

int32_t hash_bytes(std::string_view bytes, int32_t seed) {
  const size_t aligned = bytes.size() - bytes.size() % 4;
  uint32_t h1 = u32(seed);
  for (size_t i = 0; i < aligned; i += 4) {
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.data() + i);
    const uint32_t word = static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
                          (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
    h1 = mix_h1(h1, mix_k1(word));
  }
  for (size_t i = aligned; i < bytes.size(); ++i) {
    const auto signed_byte = static_cast<int32_t>(static_cast<int8_t>(bytes[i]));
    h1 = mix_h1(h1, mix_k1(u32(signed_byte)));
  }
  return fmix(h1, static_cast<uint32_t>(bytes.size()));
}

void spark_hash(const std::vector<const arrow::ColumnView*>& columns, int64_t length, int32_t* out,
                int32_t seed) {
  for (int64_t i = 0; i < length; ++i) out[i] = seed;
  for (const auto* c : columns) {
    for (int64_t i = 0; i < length; ++i) out[i] = hash_value(*c, i, out[i]);
  }
}

}  // namespace sliceflow::hash
