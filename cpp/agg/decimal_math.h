// Exact decimal arithmetic for sum and avg of DECIMAL columns: a 128-bit sum that counts its
// wrap-arounds (so retraction stays exact even past int128), and Spark's avg division
// (DecimalDivideWithOverflowCheck: round half up to scale 38, then to the result scale).
// Used by every operator's decimal sum and avg (agg/sum_rules.h). Cost: WideSum add/sub are
// O(1) per value; decimal_avg is a few 256-bit multiply/divide steps per emitted value.
#pragma once

#include <cstdint>
#include <string>

#include "arrow/int128.h"

namespace sliceflow::agg {

// value = lo + wraps * 2^128.
struct WideSum {
  int128 lo = 0;
  int64_t wraps = 0;

  void add(int128 x) {
    int128 r;
    if (__builtin_add_overflow(lo, x, &r)) wraps += x > 0 ? 1 : -1;
    lo = r;
  }
  void sub(int128 x) {
    int128 r;
    if (__builtin_sub_overflow(lo, x, &r)) wraps += x > 0 ? -1 : 1;
    lo = r;
  }
  void add(const WideSum& o) {
    add(o.lo);
    wraps += o.wraps;
  }
  void sub(const WideSum& o) {
    sub(o.lo);
    wraps -= o.wraps;
  }
  // The exact value if it has at most `digits` decimal digits.
  bool fits(int digits, int128* out) const;
};

int128 pow10_128(int n);  // 0 <= n <= 38

// Spark's avg of a DECIMAL(p, s) column: the sum (scale s) divided by the count, as
// DECIMAL(rp, rs). False: the result overflows rp digits.
bool decimal_avg(int128 sum, int64_t count, int s, int rp, int rs, int128* out);

// Spark's ANSI-mode error for a sum or avg result that does not fit its type: Spark 4.3's
// ARITHMETIC_OVERFLOW text for a BIGINT sum (`decimal` false) or a DECIMAL sum / avg, then
// `name`, the aggregate's output column. Throws std::overflow_error (Python: OverflowError).
[[noreturn]] void ansi_overflow(bool decimal, bool avg, const std::string& name);

}  // namespace sliceflow::agg
