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
// The parse functions never throw and never allocate, with one exception: the first time a
// region time-zone id (e.g. "America/Los_Angeles") is met, its TZif file is read from
// $TZDIR or /usr/share/zoneinfo and cached for the life of the process.
// See docs/json-datetime.md for the Spark rules and the known differences.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>

namespace sliceflow::json {

// --- CAST-style parsers -------------------------------------------------------------------

// Spark's DateTimeUtils.stringToDate (CAST(s AS DATE)), after Spark's trimming. false = not a date.
bool cast_string_to_date(std::string_view s, int32_t& days_since_epoch);

// Spark's DateTimeUtils.stringToTimestamp (CAST(s AS TIMESTAMP)); values without a zone use
// `default_offset_seconds` (the session time zone, already resolved to a fixed offset).
// Time-only strings ("12:34", "T12:34:56") make Spark use today's date: they return false here.
bool cast_string_to_timestamp(std::string_view s, int64_t default_offset_seconds, int64_t& micros);

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

// TIMESTAMP_NTZ: stringToTimestampWithoutTimeZone(s, allowTimeZone = false); no fallback.
bool json_default_parse_timestamp_ntz(std::string_view s, int64_t& micros);

// A JSON integer token read into a TIMESTAMP column: seconds * 1_000_000 with Java's silent
// 64-bit wrap-around (Spark does `parser.getLongValue * 1000000L`). Integers outside the signed
// 64-bit range, floats and any number for DATE / TIMESTAMP_NTZ are conversion errors.
int64_t json_integer_seconds_to_micros(int64_t seconds);

// Spark's RebaseDateTime.rebaseJulianToGregorianDays.
int32_t rebase_julian_to_gregorian_days(int32_t days);

// A Java DateTimeFormatter pattern as Spark compiles it for parsing (Iso8601TimestampFormatter /
// Iso8601DateFormatter with isParsing=true).
class DateTimePattern {
 public:
  // Throws std::invalid_argument for patterns Spark rejects (then from_json fails the query on
  // the first string value it has to parse) and for the few valid ones this port does not
  // support; the message says which.
  static DateTimePattern compile(std::string_view pattern);

  // Iso8601TimestampFormatter.parse: a zone/offset in the string wins over the default.
  bool parse_timestamp(std::string_view s, int64_t default_offset_seconds, int64_t& micros) const;
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

}  // namespace sliceflow::json
