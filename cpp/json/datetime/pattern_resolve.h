// The fields a compiled DateTimePattern parses (java.time.format.Parsed, reduced to what the
// supported pattern letters produce) and their resolution: Parsed.resolve with
// ResolverStyle.STRICT in the ISO chronology, then Spark's DateTimeFormatterHelper.toLocalDate /
// toLocalTime defaults (1970-01-01 00:00:00). pattern_parse.cpp fills a Parsed,
// pattern_resolve.cpp resolves it. Internal to datetime/*.cpp (namespace dt). O(1) per value;
// allocates nothing and throws nothing.
#pragma once

#include <cstdint>

#include "json/datetime/calendar.h"
#include "json/datetime/pattern.h"
#include "json/datetime/zone.h"

namespace sliceflow::json::dt {

struct Range {
  int64_t min, max;
};
// ChronoField.range() minimum / maximum of each field.
constexpr Range kRanges[kFieldCount] = {{-kMaxYear, kMaxYear},
                                        {1, 12},
                                        {1, 31},
                                        {1, 366},
                                        {0, 23},
                                        {1, 24},
                                        {0, 11},
                                        {1, 12},
                                        {0, 1},
                                        {0, 59},
                                        {0, 59},
                                        {0, 999'999'999},
                                        {-kMaxOffset, kMaxOffset},
                                        {0, 1},
                                        {1, kMaxYear + 1}};

inline bool in_range(int f, int64_t v) { return v >= kRanges[f].min && v <= kRanges[f].max; }

// java.time.format.Parsed, reduced to the fields the supported pattern letters produce.
struct Parsed {
  int64_t v[kFieldCount] = {};
  uint32_t mask = 0;
  bool has_zone = false;
  Zone zone;
  bool has(int f) const { return (mask >> f) & 1u; }
  int64_t get(int f) const { return v[f]; }
  void put(int f, int64_t x) {
    v[f] = x;
    mask |= 1u << f;
  }
  void remove(int f) { mask &= ~(1u << f); }
};

// What resolve() made of the fields: a date (epoch day) and a time of day, each if complete.
struct Resolved {
  bool has_date = false;
  int64_t epoch_day = 0;
  bool has_time = false;
  int64_t hour = 0, minute = 0, second = 0, nano = 0;
};

// Parsed.resolve with ResolverStyle.STRICT: false when the fields conflict or are out of range.
// Resolved fields leave `p`; what remains is cross-checked against the date and time.
bool resolve(Parsed& p, Resolved& r);
// DateTimeFormatterHelper.toLocalDate: the epoch day, missing fields from 1970-01-01.
bool to_local_date(const Parsed& p, const Resolved& r, int64_t& epoch_day);
// DateTimeFormatterHelper.toLocalTime: seconds and nanoseconds of the day, missing fields 0.
bool to_local_time(const Parsed& p, const Resolved& r, int64_t& second_of_day, int64_t& nano);

}  // namespace sliceflow::json::dt
