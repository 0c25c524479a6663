// Little-endian encoding of fixed-width values, the byte order of every sliceflow state value
// (docs/state.md): a checkpoint written on one machine reads the same on any other. On a
// little-endian host (x86-64, AArch64) both directions are one memcpy; elsewhere the bytes are
// reversed. Works for any trivially copyable scalar (integers up to 128 bits, IEEE doubles).
#pragma once

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace sliceflow::state {

#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__)
constexpr bool kLittleEndianHost = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
#else
#error "sliceflow's state format needs the compiler's __BYTE_ORDER__ (GCC or Clang)"
#endif

// Writes v's sizeof(T) bytes to dst, least significant byte first.
template <typename T>
inline void store_le(char* dst, T v) {
  static_assert(std::is_trivially_copyable_v<T>, "state values are plain scalars");
  std::memcpy(dst, &v, sizeof(T));
  if constexpr (!kLittleEndianHost) std::reverse(dst, dst + sizeof(T));
}

// Reads a value written by store_le.
template <typename T>
inline T load_le(const char* src) {
  static_assert(std::is_trivially_copyable_v<T>, "state values are plain scalars");
  char bytes[sizeof(T)];
  std::memcpy(bytes, src, sizeof(T));
  if constexpr (!kLittleEndianHost) std::reverse(bytes, bytes + sizeof(T));
  T v;
  std::memcpy(&v, bytes, sizeof(T));
  return v;
}

}  // namespace sliceflow::state
