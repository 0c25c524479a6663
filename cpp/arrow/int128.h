// Arrow's decimal128 values as the compiler's 128-bit integers (GCC and Clang).
#pragma once

namespace sliceflow {

__extension__ using int128 = __int128;
__extension__ using uint128 = unsigned __int128;

}  // namespace sliceflow
