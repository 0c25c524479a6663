// Spark's JSON options that change how a document is read, and parse_options, which reads them
// from the option map the Python side (sliceflow.json.options) passes down. The binding, the
// fuzzer and the C++ tests all build their Options through parse_options.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "json/datetime.h"

namespace sliceflow::json {

// DropMalformed is spark.read.json's mode (from_json refuses it): a bad record gives no row.
enum class Mode : uint8_t { Permissive, FailFast, DropMalformed };

struct Options {
  Mode mode = Mode::Permissive;
  int corrupt_column = -1;  // top-level field that receives a malformed row's text, or -1
  // The schema's one field is the type of the whole document (from_json with an ARRAY or MAP
  // schema): a document is read as that value instead of as an object of fields.
  bool root_value = false;
  // Records of a file, as spark.read.json reads them (sliceflow.json's readers set it, never
  // from_json): a record with no JSON value gives no row, a
  // top-level array gives a row per element (one bad element fails them all, a partial one
  // marks them all), and DROPMALFORMED is allowed.
  bool file_records = false;
  // The record is parsed from its bytes (spark.read.json without an `encoding` option): a
  // STRING field given a number, literal, object or array takes the exact source text,
  // where a parser over characters (from_json, or an `encoding`) re-writes the value.
  bool exact_string_text = false;
  // A UTF-8 byte order mark at the start of a record of 4 bytes or more is skipped (read.json
  // of UTF-8 text, whose parser looks at 4 bytes to find the encoding: a lone BOM fails; a
  // BOM left in text transcoded from UTF-16LE/BE fails the record in Spark, as here).
  bool skip_byte_order_mark = false;
  // Bytes that end a record in decode_lines (Spark's lineSep, in the input's encoding);
  // empty: \n, \r\n or a lone \r.
  std::string line_separator;
  bool allow_single_quotes = true;
  bool allow_non_numeric_numbers = true;
  bool allow_numeric_leading_zeros = false;
  bool allow_unquoted_field_names = false;
  bool allow_comments = false;
  bool allow_backslash_escaping_any_character = false;
  bool allow_unquoted_control_chars = false;
  // Empty means Spark's default pattern with its lenient fallback parser.
  std::string timestamp_format;
  std::string timestamp_ntz_format;
  std::string date_format;
  // The zone of timestamps written without one (Spark's session time zone or the timeZone
  // option): a fixed offset or a region's rules.
  TimeZone time_zone;
  // Jackson's StreamReadConstraints defaults in the version Spark ships.
  int max_nesting_depth = 1000;
  int max_number_length = 1000;
  int max_string_length = 20000000;  // UTF-16 units of one string value
};

// Options from their textual form: Spark's option names (allowComments, mode, timeZone,
// dateFormat, lineSep, ...) plus sliceflow's own "corrupt_column_index", "root_value",
// "file_records" and "exact_string_text", as normalised
// by sliceflow.json.options (names, defaults and most validation live there). A missing key
// keeps the default above. Throws std::invalid_argument naming the option and the value when
// a flag is not "true"/"false", the mode is not PERMISSIVE/FAILFAST (DROPMALFORMED with
// file_records), lineSep is empty or the time zone is unknown.
// Cost: one map lookup per option, plus TimeZone::of (which may read a TZif file once).
Options parse_options(const std::map<std::string, std::string>& options);

}  // namespace sliceflow::json
