#include "json/numbers.h"

#include <charconv>
#include <cmath>
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

// java.math.BigDecimal's grammar: [+-] digits [. digits] [eE [+-] digits], at least one digit.
bool split_decimal(std::string_view text, DecimalText& out) {
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
    const size_t exp_begin = i;
    int64_t exp = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      // BigDecimal limits the exponent to an int; beyond it the text is rejected.
      exp = exp * 10 + (text[i] - '0');
      if (exp > std::numeric_limits<int32_t>::max()) return false;
      ++i;
    }
    if (i == exp_begin) return false;
    out.exponent = exp_negative ? -exp : exp;
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
  if (!split_decimal(text, d)) return 0;
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
  // value = digits * 10^(exponent - frac_len); wanted: value * 10^scale, rounded HALF_UP.
  const int64_t shift = d.exponent - static_cast<int64_t>(d.frac_digits.size()) + scale;
  uint128 acc = 0;
  int significant = 0;  // digits accumulated after the leading zeros
  bool round_up = false;
  const int64_t total = static_cast<int64_t>(d.int_digits.size() + d.frac_digits.size());
  // Digits at index >= keep are dropped by the rescale (shift < 0).
  const int64_t keep = shift >= 0 ? total : total + shift;
  for (int64_t k = 0; k < total; ++k) {
    const size_t uk = static_cast<size_t>(k);
    const char c = uk < d.int_digits.size() ? d.int_digits[uk] : d.frac_digits[uk - d.int_digits.size()];
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
    for (int64_t k = 0; k < shift; ++k) {
      acc *= 10;
      if (digit_count(acc) > precision) return false;
    }
  }
  if (digit_count(acc) > precision) return false;
  unscaled = d.negative ? -static_cast<int128>(acc) : static_cast<int128>(acc);
  return true;
}

namespace {

// Java's FloatingDecimal output: the shortest digits that round-trip (as Java 19+ prints;
// Java 17 can print one more digit for rare values), laid out the Java way.
template <typename T>
void format_java(T value, std::string& out) {
  if (std::isnan(value)) {
    out += "NaN";
    return;
  }
  if (std::isinf(value)) {
    out += value > 0 ? "Infinity" : "-Infinity";
    return;
  }
  if (value == 0) {
    out += std::signbit(value) ? "-0.0" : "0.0";
    return;
  }
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(result.ptr - buf));
  bool negative = false;
  if (sci[0] == '-') {
    negative = true;
    sci.remove_prefix(1);
  }
  const size_t e = sci.find('e');
  std::string digits;
  digits.push_back(sci[0]);
  if (sci[1] == '.') digits.append(sci.substr(2, e - 2));
  int exp = 0;
  std::from_chars(sci.data() + e + (sci[e + 1] == '+' ? 2 : 1), sci.data() + sci.size(), exp);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  if (negative) out.push_back('-');
  if (exp >= -3 && exp < 7) {
    if (exp >= 0) {
      const size_t int_len = static_cast<size_t>(exp) + 1;
      if (digits.size() <= int_len) {
        out.append(digits);
        out.append(int_len - digits.size(), '0');
        out.append(".0");
      } else {
        out.append(digits, 0, int_len);
        out.push_back('.');
        out.append(digits, int_len, std::string::npos);
      }
    } else {
      out.append("0.");
      out.append(static_cast<size_t>(-exp - 1), '0');
      out.append(digits);
    }
  } else {
    out.push_back(digits[0]);
    out.push_back('.');
    if (digits.size() > 1) {
      out.append(digits, 1, std::string::npos);
    } else {
      out.push_back('0');
    }
    out.push_back('E');
    out.append(std::to_string(exp));
  }
}

}  // namespace

void format_java_double(double value, std::string& out) { format_java(value, out); }

void format_java_float(float value, std::string& out) { format_java(value, out); }

}  // namespace sliceflow::json
