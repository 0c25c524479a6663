// The input bytes of a libFuzzer harness, read one at a time; past the end every byte reads 0,
// so a harness decodes any input, however short, into a whole case. Shared by the harnesses
// that decode a plan and rows from their input (fuzz_dedup, fuzz_join).
#pragma once

#include <cstddef>
#include <cstdint>

struct Bytes {
  const uint8_t* p;
  size_t n;
  uint8_t next() {
    if (n == 0) return 0;
    --n;
    return *p++;
  }
};
