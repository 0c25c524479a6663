#include "state/checksum.h"

#include "state/byte_order.h"

namespace sliceflow::state {
namespace {

constexpr uint64_t kPrime1 = 0x9E3779B185EBCA87ULL;
constexpr uint64_t kPrime2 = 0xC2B2AE3D27D4EB4FULL;
constexpr uint64_t kPrime3 = 0x165667B19E3779F9ULL;

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

inline uint64_t round(uint64_t lane, uint64_t word) {
  return rotl(lane + word * kPrime2, 31) * kPrime1;
}

// Spreads every input bit over the whole result.
inline uint64_t avalanche(uint64_t h) {
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  h *= kPrime3;
  h ^= h >> 32;
  return h;
}

}  // namespace

uint64_t checksum(const char* p, size_t n, uint64_t seed) {
  uint64_t lanes[4] = {seed + kPrime1 + kPrime2, seed + kPrime2, seed, seed - kPrime1};
  size_t at = 0;
  for (; at + 32 <= n; at += 32) {
    for (int i = 0; i < 4; ++i)
      lanes[i] = round(lanes[i], load_le<uint64_t>(p + at + 8 * static_cast<size_t>(i)));
  }
  uint64_t h = rotl(lanes[0], 1) + rotl(lanes[1], 7) + rotl(lanes[2], 12) + rotl(lanes[3], 18);
  h += static_cast<uint64_t>(n);
  for (; at + 8 <= n; at += 8)
    h = rotl(h ^ round(0, load_le<uint64_t>(p + at)), 27) * kPrime1 + kPrime3;
  uint64_t tail = 0;
  for (size_t i = 0; at + i < n; ++i)
    tail |= static_cast<uint64_t>(static_cast<uint8_t>(p[at + i])) << (8 * i);
  h = rotl(h ^ (tail * kPrime1), 23) * kPrime2 + kPrime3;
  return avalanche(h);
}

}  // namespace sliceflow::state
