// Spark 4.x string -> DATE / TIMESTAMP / TIMESTAMP_NTZ conversions, reproduced bit for bit.
//
// Two families:
//  * the CAST parsers (Spark's SparkDateTimeUtils.stringToDate / stringToTimestamp /
//    stringToTimestampWithoutTimeZone), which from_json also uses when no format option is set;
//  * DateTimePattern, a user pattern (timestampFormat / dateFormat / timestampNTZFormat) compiled
//    the way Spark's DateTimeFormatterHelper builds a java.time.DateTimeFormatter for parsing
//    (case-insensitive, STRICT resolver, 'y' read as proleptic year 'u', variable-width fraction,
//    missing fields defaulted to 1970-01-01 00:00:00).
//
// All results are in the proleptic Gregorian calendar: days / microseconds since 1970-01-01
// (00:00:00 UTC for TIMESTAMP, wall clock for TIMESTAMP_NTZ).
//
// The parse functions never throw and do not allocate, with two exceptions: the first time a
// region time-zone id (e.g. "America/Los_Angeles") is met, its TZif file is read from
// $TZDIR or /usr/share/zoneinfo and cached for the life of the process; and the "GMT"-stripping
// retry of the from_json defaults copies strings longer than 256 bytes into a reused
// thread-local buffer. Everything is thread-safe; a compiled DateTimePattern is immutable.
// See docs/json-datetime.md for the Spark rules and the known differences.
//
// The implementation (cpp/json/datetime/) follows Spark's SparkDateTimeUtils,
// DateTimeFormatterHelper and the parts of java.time they rely on (DateTimeFormatterBuilder,
// Parsed, ZoneId, ZoneRules) step by step, so that every accept/reject decision and every value
// matches: calendar.h (date arithmetic), tz_rules.cpp (TZif files, a region's offsets),
// zone_id.cpp (zone ids, with the generated table zone_ids.inc), cast.cpp (the CAST parsers),
// pattern_compile.cpp, pattern_parse.cpp and pattern_resolve.cpp (DateTimePattern).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace sliceflow::json {

// A time zone as Spark resolves spark.sql.session.timeZone (SparkDateTimeUtils.getZoneId):
// fixed offsets ("+05:30", "GMT+1", "UTC", "Z"), ZoneId.SHORT_IDS ("PST", "EST") and region ids
// ("America/Los_Angeles", with its daylight-saving rules). A region session zone must be passed
// as a TimeZone: no single fixed offset gives Spark's answer for every value.
class TimeZone {
 public:
  TimeZone() = default;  // UTC
  static TimeZone fixed(int64_t offset_seconds) {
    TimeZone z;
    z.offset_ = offset_seconds;
    return z;
  }
  // false if Spark would reject the id (or this machine has no rules for the region).
  static bool of(std::string_view id, TimeZone& out);

  // A zone with one UTC offset for all time (UTC, "+02:00"): that offset.
  bool is_fixed() const { return rules_ == nullptr; }
  int64_t fixed_offset_seconds() const { return offset_; }

 private:
  friend struct ZoneAccess;
  const void* rules_ = nullptr;  // region rules, owned by a process-wide cache
  int64_t offset_ = 0;           // seconds east of UTC when rules_ is null
};

// --- CAST-style parsers -------------------------------------------------------------------

// Spark's DateTimeUtils.stringToDate (CAST(s AS DATE)), after Spark's trimming. false = not a date.
bool cast_string_to_date(std::string_view s, int32_t& days_since_epoch);

// Spark's DateTimeUtils.stringToTimestamp (CAST(s AS TIMESTAMP)); values without a zone use
// `default_offset_seconds` (the session time zone, already resolved to a fixed offset).
// Time-only strings ("12:34", "T12:34:56") make Spark use today's date: they return false here.
bool cast_string_to_timestamp(std::string_view s, int64_t default_offset_seconds, int64_t& micros);
bool cast_string_to_timestamp(std::string_view s, const TimeZone& session_zone, int64_t& micros);

// CAST(s AS TIMESTAMP_NTZ): a (valid) zone in the string is ignored, an invalid one rejects.
bool cast_string_to_timestamp_ntz(std::string_view s, int64_t& micros);

// stringToTimestampWithoutTimeZone(s, allowTimeZone). allow_time_zone=false rejects any string
// that carries a zone (this is what from_json does for TIMESTAMP_NTZ without a format).
bool string_to_timestamp_ntz(std::string_view s, bool allow_time_zone, int64_t& micros);

// --- from_json behaviour without a format option ------------------------------------------

// DATE: stringToDate(s), else stringToDate(s with every "GMT" removed), else
// Integer.parseInt(s) read as a day count in the Julian calendar (Spark 1.5 files).
bool json_default_parse_date(std::string_view s, int32_t& days_since_epoch);

// TIMESTAMP: stringToTimestamp(s), else stringToTimestamp(s with every "GMT" removed).
bool json_default_parse_timestamp(std::string_view s, int64_t default_offset_seconds,
                                  int64_t& micros);
bool json_default_parse_timestamp(std::string_view s, const TimeZone& session_zone,
                                  int64_t& micros);

// TIMESTAMP_NTZ: stringToTimestampWithoutTimeZone(s, allowTimeZone = false); no fallback.
bool json_default_parse_timestamp_ntz(std::string_view s, int64_t& micros);

// A JSON integer token read into a TIMESTAMP column: seconds * 1_000_000 with Java's silent
// 64-bit wrap-around (Spark does `parser.getLongValue * 1000000L`). Integers outside the signed
// 64-bit range, floats and any number for DATE / TIMESTAMP_NTZ are conversion errors.
int64_t json_integer_seconds_to_micros(int64_t seconds);

// Spark's RebaseDateTime.rebaseJulianToGregorianDays.
int32_t rebase_julian_to_gregorian_days(int32_t days);

// Thrown by DateTimePattern::compile.
class DateTimePatternError : public std::invalid_argument {
 public:
  enum class Kind {
    kInvalid,       // Spark cannot build a formatter for the pattern either
    kNotSupported,  // Spark accepts the pattern; this port does not (see the doc)
  };
  DateTimePatternError(Kind kind, bool fails_query, const std::string& what)
      : std::invalid_argument(what), kind_(kind), fails_query_(fails_query) {}
  Kind kind() const noexcept { return kind_; }
  // For kInvalid: what from_json does with it. Spark builds the formatter lazily, on the first
  // non-empty string of the column, and then
  //  * true:  fails the whole query (SparkUpgradeException: the legacy parser would accept the
  //           pattern) -- DATE and TIMESTAMP columns only;
  //  * false: every non-empty string is a conversion error of its own (null in PERMISSIVE mode).
  //           TIMESTAMP_NTZ columns always behave like this.
  bool fails_query() const noexcept { return fails_query_; }

 private:
  Kind kind_;
  bool fails_query_;
};

// A Java DateTimeFormatter pattern as Spark compiles it for parsing (Iso8601TimestampFormatter /
// Iso8601DateFormatter with isParsing=true).
class DateTimePattern {
 public:
  // Throws DateTimePatternError for patterns Spark rejects and for the few valid ones this port
  // does not support; the message says why.
  static DateTimePattern compile(std::string_view pattern);

  // Iso8601TimestampFormatter.parse: a zone/offset in the string wins over the default.
  bool parse_timestamp(std::string_view s, int64_t default_offset_seconds, int64_t& micros) const;
  bool parse_timestamp(std::string_view s, const TimeZone& session_zone, int64_t& micros) const;
  // Iso8601TimestampFormatter.parseWithoutTimeZone(s, allowTimeZone). from_json passes false:
  // a string that carries a zone or offset is rejected.
  bool parse_timestamp_ntz(std::string_view s, int64_t& micros) const {
    return parse_timestamp_ntz(s, false, micros);
  }
  bool parse_timestamp_ntz(std::string_view s, bool allow_time_zone, int64_t& micros) const;
  // Iso8601DateFormatter.parse: time and zone fields are parsed and validated, then dropped.
  bool parse_date(std::string_view s, int32_t& days) const;

  struct Impl;

 private:
  explicit DateTimePattern(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// For from_json's format options: compiles `format`, or returns nothing for an empty one. A
// pattern that fails Spark's query, or that this port does not support, throws; one that Spark
// refuses value by value (every non-empty string a conversion error) returns nothing and puts
// the reason in `per_value_error`.
std::optional<DateTimePattern> compile_json_pattern(const std::string& format, bool ntz,
                                                    std::string& per_value_error);

}  // namespace sliceflow::json
