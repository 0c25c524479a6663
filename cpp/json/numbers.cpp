// Number conversions with Jackson's and Spark's results (see numbers.h): integer, double,
// float and decimal parsing, and Java 17's Double.toString.
#include "json/numbers.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace sliceflow::json {
namespace {

struct DecimalText {
  bool negative = false;
  std::string_view int_digits;
  std::string_view frac_digits;
  int64_t exponent = 0;
};

// java.math.BigDecimal's grammar: [+-] digits [. digits] [eE [+-] digits], at least one digit
// before the exponent. BigDecimal skips leading zeros of the exponent only to keep ten digits,
// allows at most ten more and rejects a value beyond an int; with `saturate`
// (Double.parseDouble's view) a huge exponent is kept as a huge value instead.
bool split_decimal(std::string_view text, DecimalText& out, bool saturate = false) {
  size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    out.negative = text[i] == '-';
    ++i;
  }
  const size_t int_begin = i;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  out.int_digits = text.substr(int_begin, i - int_begin);
  if (i < text.size() && text[i] == '.') {
    ++i;
    const size_t frac_begin = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    out.frac_digits = text.substr(frac_begin, i - frac_begin);
  }
  if (out.int_digits.empty() && out.frac_digits.empty()) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
      exp_negative = text[i] == '-';
      ++i;
    }
    size_t exp_begin = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    if (i == exp_begin) return false;
    while (i - exp_begin > 10 && text[exp_begin] == '0') ++exp_begin;
    int64_t exp = 0;
    if (i - exp_begin > 10) {
      if (!saturate) return false;
      exp = int64_t{1} << 40;
    } else {
      for (size_t k = exp_begin; k < i; ++k) exp = exp * 10 + (text[k] - '0');
    }
    if (exp_negative) exp = -exp;
    if (!saturate &&
        (exp > std::numeric_limits<int32_t>::max() || exp < std::numeric_limits<int32_t>::min())) {
      return false;
    }
    out.exponent = exp;
  }
  return i == text.size();
}

int digit_count(uint128 v) {
  int n = 1;
  while (v >= 10) {
    v /= 10;
    ++n;
  }
  return n;
}

// The decimal exponent of the leading significant digit, for values from_chars cannot hold.
int64_t magnitude(std::string_view text) {
  DecimalText d;
  if (!split_decimal(text, d, true)) return 0;
  size_t lead = 0;
  while (lead < d.int_digits.size() && d.int_digits[lead] == '0') ++lead;
  if (lead < d.int_digits.size()) {
    return d.exponent + static_cast<int64_t>(d.int_digits.size() - lead);
  }
  size_t frac_lead = 0;
  while (frac_lead < d.frac_digits.size() && d.frac_digits[frac_lead] == '0') ++frac_lead;
  return d.exponent - static_cast<int64_t>(frac_lead);
}

template <typename T>
T parse_floating(std::string_view text) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  const bool negative = begin != end && *begin == '-';
  if (begin != end && (*begin == '+' || *begin == '-')) ++begin;
  T value{};
  const auto result = std::from_chars(begin, end, value, std::chars_format::general);
  if (result.ec == std::errc::result_out_of_range) {
    value = magnitude(text) > 0 ? std::numeric_limits<T>::infinity() : T(0);
  }
  return negative ? -value : value;
}

}  // namespace

bool parse_int64(std::string_view text, int64_t& out) {
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) {
    negative = text[i] == '-';
    ++i;
  }
  if (i == text.size()) return false;
  // Accumulate negatively so that INT64_MIN fits.
  int64_t value = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c < '0' || c > '9') return false;
    const int digit = c - '0';
    if (value < (std::numeric_limits<int64_t>::min() + digit) / 10) return false;
    value = value * 10 - digit;
  }
  if (!negative) {
    if (value == std::numeric_limits<int64_t>::min()) return false;
    value = -value;
  }
  out = value;
  return true;
}

double parse_double(std::string_view text) { return parse_floating<double>(text); }

float parse_float(std::string_view text) { return parse_floating<float>(text); }

bool parse_decimal(std::string_view text, int precision, int scale, int128& unscaled) {
  DecimalText d;
  if (!split_decimal(text, d)) return false;
  // BigDecimal's scale (fraction digits minus exponent) must be an int.
  const int64_t own_scale = static_cast<int64_t>(d.frac_digits.size()) - d.exponent;
  if (own_scale > std::numeric_limits<int32_t>::max() ||
      own_scale < std::numeric_limits<int32_t>::min()) {
    return false;
  }
  // value = digits * 10^(exponent - frac_len); wanted: value * 10^scale, rounded HALF_UP.
  const int64_t shift = d.exponent - static_cast<int64_t>(d.frac_digits.size()) + scale;
  // setScale() divides a non-zero value by 10^-shift; BigInteger cannot hold a power of ten
  // beyond 10^536870912 (an ArithmeticException, so the value fails).
  constexpr int64_t kMaxPowerOfTen = 536870912;
  if (shift < -kMaxPowerOfTen) {
    const auto nonzero = [](std::string_view digits) {
      return digits.find_first_not_of('0') != std::string_view::npos;
    };
    if (nonzero(d.int_digits) || nonzero(d.frac_digits)) return false;
  }
  uint128 acc = 0;
  int significant = 0;  // digits accumulated after the leading zeros
  bool round_up = false;
  const int64_t total = static_cast<int64_t>(d.int_digits.size() + d.frac_digits.size());
  // Digits at index >= keep are dropped by the rescale (shift < 0).
  const int64_t keep = shift >= 0 ? total : total + shift;
  for (int64_t k = 0; k < total; ++k) {
    const size_t uk = static_cast<size_t>(k);
    const char c =
        uk < d.int_digits.size() ? d.int_digits[uk] : d.frac_digits[uk - d.int_digits.size()];
    const int digit = c - '0';
    if (k >= keep) {
      if (k == keep) round_up = digit >= 5;
      break;
    }
    if (significant == 0 && digit == 0) continue;
    if (++significant > precision) return false;
    acc = acc * 10 + static_cast<unsigned>(digit);
  }
  if (round_up) {
    acc += 1;
  }
  if (shift > 0 && acc != 0) {
    // Check before each step: 10^38 already needs most of the 128 bits.
    for (int64_t k = 0; k < shift; ++k) {
      if (digit_count(acc) >= precision) return false;
      acc *= 10;
    }
  }
  if (digit_count(acc) > precision) return false;
  unscaled = d.negative ? -static_cast<int128>(acc) : static_cast<int128>(acc);
  return true;
}

namespace {

// ---------------------------------------------------------------------------------------------
// Java 17's Double.toString.
//
// JDK 17 does not print the shortest decimal that round-trips: its digit generator (a
// Steele & White style loop over exact integers, chosen among 32-bit, 64-bit and big-integer
// arithmetic by a size estimate) stops on a symmetric half-ULP test, and the 32/64-bit
// variants use a slightly different stopping comparison and wrap on overflow. Integers below
// 2^63 are printed from their exact value, with low digits beyond the precision rounded
// away. This reimplements that behaviour, so 2e23 prints as 1.9999999999999998E23 and
// 5e-324 as 4.9E-324, as Spark on JDK 17 writes them.
// ---------------------------------------------------------------------------------------------

// Number of bits of 5^i for i < 27 (5^26 is the largest power that fits in 63 bits).
constexpr int bit_length(uint64_t v) {
  int n = 0;
  while (v != 0) {
    ++n;
    v >>= 1;
  }
  return n;
}

constexpr uint64_t pow5_u64(int i) {
  uint64_t v = 1;
  for (int k = 0; k < i; ++k) v *= 5;
  return v;
}

constexpr int kPow5Count = 27;

int pow5_bits(int i) { return i < kPow5Count ? bit_length(pow5_u64(i)) : i * 3; }

// floor(log10(2^p)) for 1 < p < 64, else 0: how many low decimal digits of an exact integer
// with p bits beyond the significand carry no information.
int insignificant_digits_for_pow2(int p) {
  if (p <= 1 || p >= 64) return 0;
  uint64_t v = uint64_t{1} << p;
  int n = 0;
  while (v >= 10) {
    v /= 10;
    ++n;
  }
  return n;
}

// Two's complement wrap-around, as Java's int and long arithmetic.
int32_t wrap32(int64_t v) {
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
}
int64_t wrap64(uint64_t v) { return static_cast<int64_t>(v); }
int64_t add64(int64_t a, int64_t b) {
  return wrap64(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t mul64(int64_t a, int64_t b) {
  return wrap64(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// A non-negative integer of up to kWords 32-bit words, little endian. Only the first n_ words
// are meaningful (the rest is left uninitialised).
class BigNat {
 public:
  // Enough for 10 * S and 10^18 * M of any double (about 1100 + 64 bits).
  static constexpr int kWords = 48;

  explicit BigNat(uint64_t v = 0) {  // NOLINT(cppcoreguidelines-pro-type-member-init)
    w_[0] = static_cast<uint32_t>(v);
    w_[1] = static_cast<uint32_t>(v >> 32);
    n_ = w_[1] != 0 ? 2 : (w_[0] != 0 ? 1 : 0);
  }

  void assign(const BigNat& o) {
    n_ = o.n_;
    std::memcpy(w_, o.w_, sizeof(uint32_t) * static_cast<size_t>(n_));
  }

  void mul_small(uint32_t m) {
    uint64_t carry = 0;
    for (int i = 0; i < n_; ++i) {
      const uint64_t t = uint64_t{w_[i]} * m + carry;
      w_[i] = static_cast<uint32_t>(t);
      carry = t >> 32;
    }
    if (carry != 0) w_[n_++] = static_cast<uint32_t>(carry);
  }

  void mul_pow5(int e) {
    while (e >= 13) {
      mul_small(1220703125u);  // 5^13
      e -= 13;
    }
    if (e > 0) mul_small(static_cast<uint32_t>(pow5_u64(e)));
  }

  void shl(int bits) {
    if (n_ == 0 || bits == 0) return;
    const int words = bits / 32;
    const int rest = bits % 32;
    if (rest != 0) {
      uint32_t carry = 0;
      for (int i = 0; i < n_; ++i) {
        const uint32_t v = w_[i];
        w_[i] = (v << rest) | carry;
        carry = v >> (32 - rest);
      }
      if (carry != 0) w_[n_++] = carry;
    }
    if (words != 0) {
      for (int i = n_ - 1; i >= 0; --i) w_[i + words] = w_[i];
      for (int i = 0; i < words; ++i) w_[i] = 0;
      n_ += words;
    }
  }

  static int cmp(const BigNat& a, const BigNat& b) {
    if (a.n_ != b.n_) return a.n_ < b.n_ ? -1 : 1;
    for (int i = a.n_ - 1; i >= 0; --i) {
      if (a.w_[i] != b.w_[i]) return a.w_[i] < b.w_[i] ? -1 : 1;
    }
    return 0;
  }

  // out = a + b
  static void sum(const BigNat& a, const BigNat& b, BigNat& out) {
    const int n = a.n_ > b.n_ ? a.n_ : b.n_;
    uint64_t carry = 0;
    for (int i = 0; i < n; ++i) {
      const uint64_t t = uint64_t{i < a.n_ ? a.w_[i] : 0u} + (i < b.n_ ? b.w_[i] : 0u) + carry;
      out.w_[i] = static_cast<uint32_t>(t);
      carry = t >> 32;
    }
    out.n_ = n;
    if (carry != 0) out.w_[out.n_++] = static_cast<uint32_t>(carry);
  }

  void sub(const BigNat& b) {  // requires *this >= b
    int64_t borrow = 0;
    for (int i = 0; i < n_; ++i) {
      int64_t t = int64_t{w_[i]} - (i < b.n_ ? int64_t{b.w_[i]} : 0) - borrow;
      borrow = t < 0 ? 1 : 0;
      if (t < 0) t += int64_t{1} << 32;
      w_[i] = static_cast<uint32_t>(t);
    }
    while (n_ > 0 && w_[n_ - 1] == 0) --n_;
  }

  // Returns floor(*this / s) (known to be below 10) and leaves 10 * (*this mod s); `scratch`
  // is working space.
  int quo_rem_times10(const BigNat& s, BigNat& scratch) {
    // Estimate from the leading words, then correct.
    const auto lead = [&s](const BigNat& x) {
      double v = 0;
      for (int i = x.n_ - 1; i >= 0 && i >= x.n_ - 3; --i) {
        v += std::ldexp(static_cast<double>(x.w_[i]), 32 * (i - s.n_ + 1));
      }
      return v;
    };
    int q = s.n_ == 0 ? 0 : static_cast<int>(lead(*this) / lead(s));
    if (q > 9) q = 9;
    if (q > 0) {
      scratch.assign(s);
      scratch.mul_small(static_cast<uint32_t>(q));
      while (q > 0 && cmp(*this, scratch) < 0) {
        --q;
        scratch.sub(s);
      }
      sub(scratch);
    }
    while (cmp(*this, s) >= 0) {
      sub(s);
      ++q;
    }
    mul_small(10);
    return q;
  }

 private:
  uint32_t w_[kWords];
  int n_ = 0;
};

BigNat pow52(int p5, int p2, uint64_t factor = 1) {
  BigNat r(factor);
  r.mul_pow5(p5);
  r.shl(p2);
  return r;
}

struct JavaDecimal {
  char digits[32];
  int first = 0;
  int count = 0;
  int exponent = 0;  // value = 0.d1d2d3... * 10^exponent

  char& last() { return digits[first + count - 1]; }

  void round_up() {
    int i = first + count - 1;
    if (digits[i] == '9') {
      while (digits[i] == '9' && i > first) {
        digits[i] = '0';
        --i;
      }
      if (digits[i] == '9') {
        exponent += 1;
        digits[first] = '1';
        return;
      }
    }
    digits[i] = static_cast<char>(digits[i] + 1);
  }
};

// The exact integer path: digits of `value` without trailing zeros, after rounding away
// `insignificant` low digits (half up).
void long_digits(uint64_t value, int insignificant, JavaDecimal& out) {
  int dec_exp = 0;
  if (insignificant != 0) {
    uint64_t pow10 = 1;
    for (int i = 0; i < insignificant; ++i) pow10 *= 10;
    const uint64_t residue = value % pow10;
    value /= pow10;
    dec_exp += insignificant;
    if (residue >= (pow10 >> 1)) ++value;
  }
  char buf[24];
  int n = 0;
  while (value % 10 == 0) {
    value /= 10;
    ++dec_exp;
  }
  while (value != 0) {
    buf[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
  out.first = 0;
  out.count = n;
  for (int i = 0; i < n; ++i) out.digits[i] = buf[n - 1 - i];
  out.exponent = dec_exp + n;
}

int estimate_decimal_exponent(uint64_t fract_bits, int bin_exp) {
  // A linear approximation of log10 of the value, evaluated in double exactly as written
  // (volatile keeps the compiler from fusing the multiply-adds).
  uint64_t bits = (uint64_t{0x3FF} << 52) | (fract_bits & ((uint64_t{1} << 52) - 1));
  double d2 = 0;
  std::memcpy(&d2, &bits, sizeof d2);
  volatile double t1 = (d2 - 1.5) * 0.289529654;
  volatile double t2 = t1 + 0.176091259;
  volatile double t3 = static_cast<double>(bin_exp) * 0.301029995663981;
  const double d = t2 + t3;
  return static_cast<int>(std::floor(d));
}

// fract_bits: the significand with its leading one at bit 52; the value is
// fract_bits * 2^(bin_exp - 52); n_sig: significant bits of the source format.
void java_digits(uint64_t fract_bits, int bin_exp, int n_sig, JavaDecimal& out) {
  const int tail_zeros = __builtin_ctzll(fract_bits);
  const int n_fract_bits = 53 - tail_zeros;
  const int n_tiny_bits = std::max(0, n_fract_bits - bin_exp - 1);
  if (bin_exp <= 62 && bin_exp >= -21 && n_tiny_bits == 0) {
    // An integer below 2^63: exact digits.
    const int insignificant =
        bin_exp > n_sig ? insignificant_digits_for_pow2(bin_exp - n_sig - 1) : 0;
    const uint64_t value =
        bin_exp >= 52 ? fract_bits << (bin_exp - 52) : fract_bits >> (52 - bin_exp);
    long_digits(value, insignificant, out);
    return;
  }
  int dec_exp = estimate_decimal_exponent(fract_bits, bin_exp);
  // value = B / S * 10^dec_exp with 1 <= B/S < 10; M = half an ULP scaled like B.
  const int b5 = std::max(0, -dec_exp);
  int b2 = b5 + n_tiny_bits + bin_exp;
  const int s5 = std::max(0, dec_exp);
  int s2 = s5 + n_tiny_bits;
  const int m5 = b5;
  int m2 = b2 - n_sig;
  const uint64_t fract = fract_bits >> tail_zeros;
  b2 -= n_fract_bits - 1;
  const int common = std::min(b2, s2);
  b2 -= common;
  s2 -= common;
  m2 -= common;
  if (n_fract_bits == 1) m2 -= 1;  // below a power of two the next value is half as far
  if (m2 < 0) {
    b2 -= m2;
    s2 -= m2;
    m2 = 0;
  }
  const int b_bits = n_fract_bits + b2 + pow5_bits(b5);
  const int ten_s_bits = s2 + 1 + pow5_bits(s5 + 1);
  int n = 0;
  bool low = false;
  bool high = false;
  int low_digit_difference = 0;  // only its sign matters
  if (b_bits < 64 && ten_s_bits < 64) {
    if (b_bits < 32 && ten_s_bits < 32) {
      int32_t b = wrap32(static_cast<int64_t>(fract) * static_cast<int64_t>(pow5_u64(b5)) << b2);
      const int32_t s = wrap32(static_cast<int64_t>(pow5_u64(s5)) << s2);
      int32_t m = wrap32(static_cast<int64_t>(pow5_u64(m5)) << m2);
      const int32_t tens = wrap32(int64_t{s} * 10);
      int q = b / s;
      b = wrap32(int64_t{10} * (b % s));
      m = wrap32(int64_t{m} * 10);
      low = b < m;
      high = wrap32(int64_t{b} + m) > tens;
      if (q == 0 && !high) {
        --dec_exp;
      } else {
        out.digits[n++] = static_cast<char>('0' + q);
      }
      if (dec_exp < -3 || dec_exp >= 8) high = low = false;
      while (!low && !high) {
        q = b / s;
        b = wrap32(int64_t{10} * (b % s));
        m = wrap32(int64_t{m} * 10);
        if (m > 0) {
          low = b < m;
          high = wrap32(int64_t{b} + m) > tens;
        } else {
          low = high = true;
        }
        out.digits[n++] = static_cast<char>('0' + q);
      }
      const int64_t diff = wrap32(int64_t{wrap32(int64_t{b} << 1)} - tens);
      low_digit_difference = diff > 0 ? 1 : (diff < 0 ? -1 : 0);
    } else {
      int64_t b = wrap64((fract * pow5_u64(b5)) << b2);
      const int64_t s = wrap64(pow5_u64(s5) << s2);
      int64_t m = wrap64(pow5_u64(m5) << m2);
      const int64_t tens = mul64(s, 10);
      int q = static_cast<int>(b / s);
      b = mul64(10, b % s);
      m = mul64(m, 10);
      low = b < m;
      high = add64(b, m) > tens;
      if (q == 0 && !high) {
        --dec_exp;
      } else {
        out.digits[n++] = static_cast<char>('0' + q);
      }
      if (dec_exp < -3 || dec_exp >= 8) high = low = false;
      while (!low && !high) {
        q = static_cast<int>(b / s);
        b = mul64(10, b % s);
        m = mul64(m, 10);
        if (m > 0) {
          low = b < m;
          high = add64(b, m) > tens;
        } else {
          low = high = true;
        }
        out.digits[n++] = static_cast<char>('0' + q);
      }
      const int64_t diff = add64(wrap64(static_cast<uint64_t>(b) << 1), -tens);
      low_digit_difference = diff > 0 ? 1 : (diff < 0 ? -1 : 0);
    }
  } else {
    const BigNat s = pow52(s5, s2);
    BigNat b = pow52(b5, b2, fract);
    BigNat m = pow52(m5 + 1, m2 + 1);            // 10 * M, scaled for the first digit
    const BigNat ten_s = pow52(s5 + 1, s2 + 1);  // 10 * S
    BigNat scratch;
    int q = b.quo_rem_times10(s, scratch);
    low = BigNat::cmp(b, m) < 0;
    BigNat::sum(b, m, scratch);
    high = BigNat::cmp(ten_s, scratch) <= 0;
    if (q == 0 && !high) {
      --dec_exp;
    } else {
      out.digits[n++] = static_cast<char>('0' + q);
    }
    if (dec_exp < -3 || dec_exp >= 8) high = low = false;
    while (!low && !high) {
      q = b.quo_rem_times10(s, scratch);
      m.mul_small(10);
      low = BigNat::cmp(b, m) < 0;
      BigNat::sum(b, m, scratch);
      high = BigNat::cmp(ten_s, scratch) <= 0;
      out.digits[n++] = static_cast<char>('0' + q);
    }
    if (high && low) {
      b.shl(1);
      low_digit_difference = BigNat::cmp(b, ten_s);
    }
  }
  out.first = 0;
  out.count = n;
  out.exponent = dec_exp + 1;
  if (high) {
    if (low) {
      if (low_digit_difference == 0) {
        if ((out.last() - '0') % 2 != 0) out.round_up();
      } else if (low_digit_difference > 0) {
        out.round_up();
      }
    } else {
      out.round_up();
    }
  }
}

void append_java_layout(bool negative, const JavaDecimal& d, std::string& out) {
  if (negative) out.push_back('-');
  const char* digits = d.digits + d.first;
  const int n = d.count;
  const int e = d.exponent;
  if (e > 0 && e < 8) {
    const int int_len = std::min(n, e);
    out.append(digits, static_cast<size_t>(int_len));
    if (int_len < e) {
      out.append(static_cast<size_t>(e - int_len), '0');
      out.append(".0");
    } else {
      out.push_back('.');
      if (int_len < n) {
        out.append(digits + int_len, static_cast<size_t>(n - int_len));
      } else {
        out.push_back('0');
      }
    }
  } else if (e <= 0 && e > -3) {
    out.append("0.");
    out.append(static_cast<size_t>(-e), '0');
    out.append(digits, static_cast<size_t>(n));
  } else {
    out.push_back(digits[0]);
    out.push_back('.');
    if (n > 1) {
      out.append(digits + 1, static_cast<size_t>(n - 1));
    } else {
      out.push_back('0');
    }
    out.push_back('E');
    out.append(std::to_string(e <= 0 ? -(-e + 1) : e - 1));
  }
}

bool append_special(double value, std::string& out) {
  if (std::isnan(value)) {
    out += "NaN";
  } else if (std::isinf(value)) {
    out += value > 0 ? "Infinity" : "-Infinity";
  } else if (value == 0) {
    out += std::signbit(value) ? "-0.0" : "0.0";
  } else {
    return false;
  }
  return true;
}

// A finite, non-zero double in Java's Double.toString layout. Subnormals are normalised first,
// with their number of significant bits.
void append_java_double(uint64_t bits, bool negative, std::string& out) {
  constexpr int kFractionBits = 52;
  constexpr int kBias = 1023;
  uint64_t fract = bits & ((uint64_t{1} << kFractionBits) - 1);
  int bin_exp = static_cast<int>((bits >> kFractionBits) & 0x7ff);
  int n_sig = kFractionBits + 1;
  if (bin_exp == 0) {
    const int leading_zeros = __builtin_clzll(fract);
    const int shift = leading_zeros - (64 - kFractionBits - 1);
    fract <<= shift;
    bin_exp = 1 - shift;
    n_sig = 64 - leading_zeros;
  } else {
    fract |= uint64_t{1} << kFractionBits;
  }
  JavaDecimal d;
  java_digits(fract, bin_exp - kBias, n_sig, d);
  append_java_layout(negative, d, out);
}

}  // namespace

void format_java_double(double value, std::string& out) {
  if (append_special(value, out)) return;
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  append_java_double(bits, std::signbit(value), out);
}

}  // namespace sliceflow::json
