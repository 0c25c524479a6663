// Spark's rules for the value that sum and avg emit, in one place for every operator: a BIGINT
// sum wraps around (non-ANSI) or fails (ANSI) when the exact sum leaves int64; an integer avg
// is DOUBLE; a DECIMAL(p, s) sum is DECIMAL(min(38, p + 10), s) and an avg DECIMAL(min(38,
// p + 4), min(38, s + 4)), null (non-ANSI) or an error (ANSI) when the value does not fit.
// Invariants: the sums given are exact (an int128 for integers, a WideSum for decimals), the
// count given is the number of non-null values summed and is not 0 (a zero count emits null
// before these rules are asked). A negative count (a changelog that retracts values it never
// inserted) gives the quotient of the exact values. Cost: O(1) per emitted value; the
// decimal avg divides in 256 bits (decimal_math.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "agg/decimal_math.h"
#include "arrow/int128.h"

namespace sliceflow::agg {

// The BIGINT value of an integer sum `s` (its aggregate's output column is `name`).
inline int64_t bigint_sum(int128 s, bool ansi, const std::string& name) {
  if (s > std::numeric_limits<int64_t>::max() || s < std::numeric_limits<int64_t>::min()) {
    if (ansi) ansi_overflow(false, false, name);
  }
  // Spark's non-ANSI BIGINT sum wraps around: the exact sum modulo 2^64.
  return static_cast<int64_t>(static_cast<uint64_t>(static_cast<uint128>(s)));
}

// The DOUBLE avg of an integer column with sum `s` over `n` values. A negative count keeps the
// quotient's sign rule of the exact value: 0 / -1 is 0.0, not -0.0.
inline double integer_avg(int128 s, int64_t n) {
  return n > 0 ? static_cast<double>(s) / static_cast<double>(n)
               : static_cast<double>(-s) / static_cast<double>(-n);
}

// sum or avg of a DECIMAL column, its result type fixed.
class DecimalSumRule {
 public:
  // `scale`: the argument's (and the sum's) scale; `rp`, `rs`: the result's precision and
  // scale (sum: DECIMAL(p1, s); avg: DECIMAL(min(38, p + 4), ...) with p1 = min(38, p + 10)).
  DecimalSumRule(bool avg, bool ansi, std::string name, int scale, int rp, int rs)
      : avg_(avg),
        ansi_(ansi),
        name_(std::move(name)),
        p1_(avg ? std::min(38, rp + 6) : rp),
        scale_(scale),
        rp_(rp),
        rs_(rs) {}

  // The value of `sum` over `n` values (`overflowed`: a partial sum already passed 38 digits,
  // so the total is not known exactly). True: *out holds it; false: null (non-ANSI). Under
  // ANSI a value that does not fit throws ansi_overflow.
  bool value(const WideSum& sum, int64_t n, bool overflowed, int128* out) const {
    int128 exact = 0;
    bool ok = !overflowed && sum.fits(p1_, &exact);
    if (ok && avg_) {
      ok = n > 0 ? decimal_avg(exact, n, scale_, rp_, rs_, out)
                 : decimal_avg(-exact, -n, scale_, rp_, rs_, out);
    } else if (ok) {
      ok = sum.fits(rp_, out);
    }
    if (!ok && ansi_) ansi_overflow(true, avg_, name_);
    return ok;
  }

 private:
  bool avg_;
  bool ansi_;
  std::string name_;
  int p1_;  // precision of the sum
  int scale_;
  int rp_;
  int rs_;
};

}  // namespace sliceflow::agg
