// The checksum of a sealed state value (docs/state.md, "Checksum"): a 64-bit multiply-rotate
// hash over the value's bytes, read as little-endian 64-bit words in four independent lanes
// (about one multiply per 8 bytes, several GB/s), so that a damaged or cut value is refused
// before any of it is parsed. Its definition is part of the state format: changing it is a
// new format version.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sliceflow::state {

// The checksum of n bytes at p, continuing from seed (chain ranges: checksum(b, nb,
// checksum(a, na, 0)) covers a then b).
uint64_t checksum(const char* p, size_t n, uint64_t seed);

}  // namespace sliceflow::state
