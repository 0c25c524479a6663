// Spark's CAST parsers (SparkDateTimeUtils.stringToDate / stringToTimestamp /
// stringToTimestampWithoutTimeZone) and from_json's fallbacks when no format option is set
// (the "GMT"-stripping retry, Spark 1.5's Julian day counts). Each call is O(length of the
// string), throws nothing and allocates nothing (strings over 256 bytes excepted, see
// with_gmt_removed).
#include <cstring>
#include <string>
#include <string_view>

#include "json/datetime.h"
#include "json/datetime/calendar.h"
#include "json/datetime/zone.h"

namespace sliceflow::json {
using namespace dt;
namespace {

// UTF8String.isWhitespaceOrISOControl applied to a (signed) byte: 0x00-0x20 and 0x7F.
inline bool is_trim_byte(char c) {
  auto u = static_cast<unsigned char>(c);
  return u <= 0x20 || u == 0x7F;
}

// getTrimmedStart / getTrimmedEnd
inline void spark_trim(std::string_view s, size_t& start, size_t& end) {
  start = 0;
  while (start < s.size() && is_trim_byte(s[start])) ++start;
  end = s.size();
  while (end > start + 1 && is_trim_byte(s[end - 1])) --end;
}

struct TsParts {
  int64_t seg[9] = {1, 1, 1, 0, 0, 0, 0, 0, 0};
  bool just_time = false;
  bool has_zone = false;
  Zone zone;
};

// SparkDateTimeUtils.parseTimestampString, including the validation of the zone id.
bool parse_timestamp_string(std::string_view s, TsParts& out) {
  auto valid = [](int segment, int digits) {
    constexpr int kMaxDigitsYear = 6;
    return segment == 6 || (segment == 0 && digits >= 4 && digits <= kMaxDigitsYear) ||
           (segment == 7 && digits <= 2) ||
           (segment != 0 && segment != 6 && segment != 7 && digits > 0 && digits <= 2);
  };
  int64_t* seg = out.seg;
  size_t j = 0, end = 0;
  spark_trim(s, j, end);
  if (j == end) return false;
  int digits_milli = 0;
  bool just_time = false;
  int year_sign = 0;
  if (s[j] == '-' || s[j] == '+') {
    year_sign = s[j] == '-' ? -1 : 1;
    ++j;
  }
  int i = 0;
  int64_t cur = 0;
  int cur_digits = 0;
  std::string_view tz;
  bool has_tz = false;
  auto next_segment = [&](int idx) {
    if (!valid(idx, cur_digits)) return false;
    seg[idx] = cur;
    cur = 0;
    cur_digits = 0;
    return true;
  };
  while (j < end) {
    const char b = s[j];
    if (!is_digit(b)) {
      if (j == 0 && b == 'T') {  // note: j is not relative to the trimmed start, as in Spark
        just_time = true;
        i += 3;
      } else if (i < 2) {
        if (b == '-') {
          if (!next_segment(i)) return false;
          ++i;
        } else if (i == 0 && b == ':' && year_sign == 0) {
          just_time = true;
          if (!next_segment(3)) return false;
          i = 4;
        } else {
          return false;
        }
      } else if (i == 2) {
        if (b != ' ' && b != 'T') return false;
        if (!next_segment(i)) return false;
        ++i;
      } else if (i == 3 || i == 4) {
        if (b != ':') return false;
        if (!next_segment(i)) return false;
        ++i;
      } else if (i == 5 || i == 6) {
        if (b == '.' && i == 5) {
          if (!next_segment(i)) return false;
          ++i;
        } else {
          if (!next_segment(i)) return false;
          ++i;
          has_tz = true;
          tz = s.substr(j, end - j);
          j = end - 1;
        }
        if (i == 6 && b != '.') ++i;
      } else {
        if (i < 9 && (b == ':' || b == ' ')) {
          if (!next_segment(i)) return false;
          ++i;
        } else {
          return false;
        }
      }
    } else {
      if (i == 6) ++digits_milli;
      // Digits past the 6th of the fraction are dropped; other over-long segments are
      // rejected later, so stop accumulating before int64 could overflow.
      if ((i != 6 || cur_digits < 6) && cur_digits < 18) cur = cur * 10 + (b - '0');
      ++cur_digits;
    }
    ++j;
  }
  if (i >= 9 || !valid(i, cur_digits)) return false;
  seg[i] = cur;
  while (digits_milli < 6) {
    seg[6] *= 10;
    ++digits_milli;
  }
  if (has_tz) {
    // java.lang.String.trim (the end is already trimmed)
    size_t k = 0;
    while (k < tz.size() && static_cast<unsigned char>(tz[k]) <= 0x20) ++k;
    tz.remove_prefix(k);
    if (!spark_get_zone_id(tz, out.zone)) return false;
    out.has_zone = true;
  }
  if (year_sign != 0) seg[0] *= year_sign;
  out.just_time = just_time;
  return true;
}

bool parts_local_seconds(const TsParts& p, int64_t& local) {
  const int64_t* seg = p.seg;
  if (seg[3] > 23 || seg[4] > 59 || seg[5] > 59) return false;  // LocalTime.of
  int64_t day = 0;
  if (!local_date_of(seg[0], seg[1], seg[2], day)) return false;
  local = day * kSecondsPerDay + seg[3] * 3600 + seg[4] * 60 + seg[5];
  return true;
}

// UTF8String.replace("GMT", ""): calls fn on the cleaned string; false if there was no "GMT".
template <typename Fn>
bool with_gmt_removed(std::string_view s, Fn&& fn) {
  size_t pos = s.find("GMT");
  if (pos == std::string_view::npos) return false;
  char stack_buf[256];
  thread_local std::string heap_buf;  // only for unusually long strings; reused
  char* buf = stack_buf;
  if (s.size() > sizeof stack_buf) {
    if (heap_buf.size() < s.size()) heap_buf.resize(s.size());
    buf = heap_buf.data();
  }
  size_t n = 0, start = 0;
  while (pos != std::string_view::npos) {
    std::memcpy(buf + n, s.data() + start, pos - start);
    n += pos - start;
    start = pos + 3;
    pos = s.find("GMT", start);
  }
  std::memcpy(buf + n, s.data() + start, s.size() - start);
  n += s.size() - start;
  return fn(std::string_view(buf, n));
}

// Character.digit(ch, 10) for one UTF-8 encoded character of the Basic Multilingual Plane
// (java strings are UTF-16: digits outside the BMP are surrogate pairs and never digits).
int java_decimal_digit(std::string_view s, size_t& i) {
  // The zero of every Unicode 13 "Nd" run of ten digits in the BMP.
  static constexpr uint32_t kZeros[] = {
      0x0030, 0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6,
      0x0C66, 0x0CE6, 0x0D66, 0x0DE6, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0,
      0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620,
      0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10};
  auto u = [&](size_t k) { return static_cast<uint32_t>(static_cast<unsigned char>(s[k])); };
  uint32_t cp = 0;
  size_t len = 0;
  if (u(i) < 0x80) {
    cp = u(i);
    len = 1;
  } else if ((u(i) & 0xE0) == 0xC0 && i + 1 < s.size()) {
    cp = ((u(i) & 0x1F) << 6) | (u(i + 1) & 0x3F);
    len = 2;
  } else if ((u(i) & 0xF0) == 0xE0 && i + 2 < s.size()) {
    cp = ((u(i) & 0x0F) << 12) | ((u(i + 1) & 0x3F) << 6) | (u(i + 2) & 0x3F);
    len = 3;
  } else {
    return -1;
  }
  for (uint32_t zero : kZeros) {
    if (cp >= zero && cp < zero + 10) {
      i += len;
      return static_cast<int>(cp - zero);
    }
  }
  return -1;
}

// java.lang.Integer.parseInt(s) (radix 10).
bool java_parse_int(std::string_view s, int32_t& out) {
  if (s.empty()) return false;
  size_t i = 0;
  bool negative = false;
  if (s[0] == '-' || s[0] == '+') {
    negative = s[0] == '-';
    i = 1;
    if (s.size() == 1) return false;
  }
  int64_t v = 0;
  while (i < s.size()) {
    int d = java_decimal_digit(s, i);
    if (d < 0) return false;
    v = v * 10 + d;
    if (v > 2147483648LL) return false;
  }
  if (negative) v = -v;
  if (!fits_int32(v)) return false;
  out = static_cast<int32_t>(v);
  return true;
}

}  // namespace

bool cast_string_to_date(std::string_view s, int32_t& days_since_epoch) {
  auto valid = [](int segment, int digits) {
    constexpr int kMaxDigitsYear = 7;
    return (segment == 0 && digits >= 4 && digits <= kMaxDigitsYear) ||
           (segment != 0 && digits > 0 && digits <= 2);
  };
  int64_t seg[3] = {1, 1, 1};
  int64_t sign = 1;
  int i = 0;
  int64_t cur = 0;
  int cur_digits = 0;
  size_t j = 0, end = 0;
  spark_trim(s, j, end);
  if (j == end) return false;
  if (s[j] == '-' || s[j] == '+') {
    sign = s[j] == '-' ? -1 : 1;
    ++j;
  }
  while (j < end && i < 3 && !(s[j] == ' ' || s[j] == 'T')) {
    const char b = s[j];
    if (i < 2 && b == '-') {
      if (!valid(i, cur_digits)) return false;
      seg[i] = cur;
      cur = 0;
      cur_digits = 0;
      ++i;
    } else {
      if (!is_digit(b)) return false;
      if (cur_digits < 18) cur = cur * 10 + (b - '0');
      ++cur_digits;
    }
    ++j;
  }
  if (!valid(i, cur_digits)) return false;
  if (i < 2 && j < end) return false;  // "yyyy" and "yyyy-[m]m" must consume everything
  seg[i] = cur;
  int64_t day = 0;
  if (!local_date_of(sign * seg[0], seg[1], seg[2], day) || !fits_int32(day)) return false;
  days_since_epoch = static_cast<int32_t>(day);
  return true;
}

namespace {

bool cast_to_timestamp(std::string_view s, const Zone& session_zone, int64_t& micros) {
  TsParts p;
  if (!parse_timestamp_string(s, p)) return false;
  const int64_t* seg = p.seg;
  if (seg[3] > 23 || seg[4] > 59 || seg[5] > 59) return false;
  if (p.just_time) return false;  // Spark uses LocalDate.now(zone): not reproducible here
  int64_t local = 0;
  if (!parts_local_seconds(p, local)) return false;
  const Zone& zone = p.has_zone ? p.zone : session_zone;
  return instant_to_micros(local_to_epoch(zone, local), seg[6], micros);
}

bool json_default_to_timestamp(std::string_view s, const Zone& session_zone, int64_t& micros) {
  if (cast_to_timestamp(s, session_zone, micros)) return true;
  return with_gmt_removed(
      s, [&](std::string_view t) { return cast_to_timestamp(t, session_zone, micros); });
}

}  // namespace

bool cast_string_to_timestamp(std::string_view s, int64_t default_offset_seconds, int64_t& micros) {
  return cast_to_timestamp(s, Zone{nullptr, default_offset_seconds}, micros);
}

bool cast_string_to_timestamp(std::string_view s, const TimeZone& session_zone, int64_t& micros) {
  return cast_to_timestamp(s, ZoneAccess::get(session_zone), micros);
}

bool string_to_timestamp_ntz(std::string_view s, bool allow_time_zone, int64_t& micros) {
  TsParts p;
  if (!parse_timestamp_string(s, p)) return false;
  if (p.just_time || (!allow_time_zone && p.has_zone)) return false;
  int64_t local = 0;
  if (!parts_local_seconds(p, local)) return false;
  return instant_to_micros(local, p.seg[6], micros);
}

bool cast_string_to_timestamp_ntz(std::string_view s, int64_t& micros) {
  return string_to_timestamp_ntz(s, true, micros);
}

int32_t rebase_julian_to_gregorian_days(int32_t days) {
  if (days < -719164) {
    // RebaseDateTime.localRebaseJulianToGregorianDays: read the day as a date of the (proleptic)
    // Julian calendar and take the same year, month and day in the Gregorian calendar.
    const int64_t c = static_cast<int64_t>(days) + 2440588 + 32082;  // Julian day number + 32082
    const int64_t d = floor_div(4 * c + 3, 1461);
    const int64_t e = c - floor_div(1461 * d, 4);
    const int64_t m = floor_div(5 * e + 2, 153);
    const int64_t day = e - floor_div(153 * m + 2, 5) + 1;
    const int64_t month = m + 3 - 12 * floor_div(m, 10);
    const int64_t year = d - 4800 + floor_div(m, 10);
    return static_cast<int32_t>(epoch_day_of(year, month, 1) + day - 1);
  }
  static constexpr int32_t kDiffs[] = {2, 1, 0, -1, -2, -3, -4, -5, -6, -7, -8, -9, -10, 0};
  static constexpr int32_t kSwitchDays[] = {-719164, -682945, -646420, -609895, -536845,
                                            -500320, -463795, -390745, -354220, -317695,
                                            -244645, -208120, -171595, -141427};
  int i = static_cast<int>(sizeof kSwitchDays / sizeof kSwitchDays[0]);
  do {
    --i;
  } while (i > 0 && days < kSwitchDays[i]);
  return static_cast<int32_t>(static_cast<uint32_t>(days) + static_cast<uint32_t>(kDiffs[i]));
}

bool json_default_parse_date(std::string_view s, int32_t& days_since_epoch) {
  if (cast_string_to_date(s, days_since_epoch)) return true;
  if (with_gmt_removed(
          s, [&](std::string_view t) { return cast_string_to_date(t, days_since_epoch); })) {
    return true;
  }
  int32_t v = 0;
  if (!java_parse_int(s, v)) return false;
  days_since_epoch = rebase_julian_to_gregorian_days(v);
  return true;
}

bool json_default_parse_timestamp(std::string_view s, int64_t default_offset_seconds,
                                  int64_t& micros) {
  return json_default_to_timestamp(s, Zone{nullptr, default_offset_seconds}, micros);
}

bool json_default_parse_timestamp(std::string_view s, const TimeZone& session_zone,
                                  int64_t& micros) {
  return json_default_to_timestamp(s, ZoneAccess::get(session_zone), micros);
}

bool json_default_parse_timestamp_ntz(std::string_view s, int64_t& micros) {
  return string_to_timestamp_ntz(s, false, micros);
}

int64_t json_integer_seconds_to_micros(int64_t seconds) {
  return static_cast<int64_t>(static_cast<uint64_t>(seconds) *
                              static_cast<uint64_t>(kMicrosPerSecond));
}

}  // namespace sliceflow::json
