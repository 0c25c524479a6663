// Calendar arithmetic shared by the datetime/*.cpp files (namespace dt: internal to them):
// proleptic Gregorian dates as java.time.LocalDate computes them, with java.time's range
// checks, and the micros-of-epoch conversions of SparkDateTimeUtils. All inline, no state,
// O(1) each; none throws or allocates.
#pragma once

#include <cstdint>
#include <limits>

namespace sliceflow::json::dt {

constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kSecondsPerDay = 86'400;
constexpr int64_t kMaxYear = 999'999'999;  // java.time.Year.MAX_VALUE
constexpr int32_t kMaxOffset = 18 * 3600;  // ZoneOffset.MAX

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline char ascii_upper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 32) : c; }
// Java's case-insensitive char comparison, restricted to ASCII (see the doc for non-ASCII).
inline bool ci_equal(char a, char b) { return a == b || ascii_upper(a) == ascii_upper(b); }

inline int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

inline bool is_leap(int64_t y) { return (y % 4 == 0) && (y % 100 != 0 || y % 400 == 0); }

inline int month_length(int64_t y, int64_t m) {
  static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return (m == 2 && is_leap(y)) ? 29 : kDays[m - 1];
}

// Days since 1970-01-01 of a proleptic Gregorian date (any int64 year that does not overflow).
inline int64_t epoch_day_of(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

inline int64_t year_of_epoch_day(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  return yoe + era * 400 + (m <= 2 ? 1 : 0);
}

// java.time.LocalDate.of(year, month, day).toEpochDay(); false = DateTimeException.
inline bool local_date_of(int64_t y, int64_t m, int64_t d, int64_t& epoch_day) {
  if (y < -kMaxYear || y > kMaxYear || m < 1 || m > 12 || d < 1 || d > 31) return false;
  if (d > month_length(y, m)) return false;
  epoch_day = epoch_day_of(y, m, d);
  return true;
}

// java.time.LocalDate.ofYearDay(year, dayOfYear).toEpochDay().
inline bool local_date_of_year_day(int64_t y, int64_t doy, int64_t& epoch_day) {
  if (y < -kMaxYear || y > kMaxYear || doy < 1 || doy > 366) return false;
  if (doy == 366 && !is_leap(y)) return false;
  epoch_day = epoch_day_of(y, 1, 1) + doy - 1;
  return true;
}

inline bool fits_int32(int64_t v) {
  return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
}

// SparkDateTimeUtils.instantToMicros (note the special case for the smallest second).
inline bool instant_to_micros(int64_t secs, int64_t micros_of_second, int64_t& out) {
  constexpr int64_t kMinSeconds = -9'223'372'036'855LL;  // floorDiv(Long.MIN_VALUE, 1e6)
  int64_t us = 0;
  if (secs == kMinSeconds) {
    if (__builtin_mul_overflow(secs + 1, kMicrosPerSecond, &us)) return false;
    return !__builtin_add_overflow(us, micros_of_second - kMicrosPerSecond, &out);
  }
  if (__builtin_mul_overflow(secs, kMicrosPerSecond, &us)) return false;
  return !__builtin_add_overflow(us, micros_of_second, &out);
}

// Iso8601TimestampFormatter.extractMicros: multiplyExact(epochSecond, 1e6) + microOfSecond.
inline bool exact_micros(int64_t secs, int64_t micros_of_second, int64_t& out) {
  int64_t us = 0;
  if (__builtin_mul_overflow(secs, kMicrosPerSecond, &us)) return false;
  return !__builtin_add_overflow(us, micros_of_second, &out);
}

}  // namespace sliceflow::json::dt
