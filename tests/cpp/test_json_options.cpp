// Checks json::parse_options (cpp/json/options.cpp), the one parser of the JSON options that
// the binding, the fuzzer and these tests share: defaults, every key, and the errors. Build and
// run from the repository root (scripts/sanitize.sh does it under ASan+UBSan):
//
//   g++ -std=c++17 -O1 -Wall -Wextra -Wconversion -Icpp cpp/json/options.cpp
//   cpp/json/datetime/*.cpp tests/cpp/test_json_options.cpp -o /tmp/test_json_options
//   /tmp/test_json_options
//
// Exit status 0 when every check passes; each failure is printed.
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>

#include "json/options.h"

namespace {

using sliceflow::json::Mode;
using sliceflow::json::Options;
using sliceflow::json::parse_options;
using Map = std::map<std::string, std::string>;

int g_failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::printf("FAIL: %s\n", what);
    ++g_failures;
  }
}

// parse_options(m) must throw std::invalid_argument whose message contains `needle`.
void check_rejects(const Map& m, const std::string& needle) {
  try {
    parse_options(m);
    std::printf("FAIL: no error for a message with '%s'\n", needle.c_str());
    ++g_failures;
  } catch (const std::invalid_argument& e) {
    if (std::string(e.what()).find(needle) == std::string::npos) {
      std::printf("FAIL: message '%s' lacks '%s'\n", e.what(), needle.c_str());
      ++g_failures;
    }
  }
}

void defaults() {
  const Options d;
  const Options o = parse_options({});
  check(o.mode == Mode::Permissive, "default mode is PERMISSIVE");
  check(o.corrupt_column == -1, "no corrupt column by default");
  check(!o.root_value, "root_value off by default");
  check(o.allow_single_quotes && o.allow_non_numeric_numbers, "Spark's lenient defaults on");
  check(!o.allow_numeric_leading_zeros && !o.allow_unquoted_field_names && !o.allow_comments &&
            !o.allow_backslash_escaping_any_character && !o.allow_unquoted_control_chars,
        "Spark's strict defaults off");
  check(o.timestamp_format.empty() && o.timestamp_ntz_format.empty() && o.date_format.empty(),
        "no format by default");
  check(o.time_zone.is_fixed() && o.time_zone.fixed_offset_seconds() == 0, "UTC by default");
  check(o.max_nesting_depth == d.max_nesting_depth && o.max_number_length == d.max_number_length &&
            o.max_string_length == d.max_string_length,
        "Jackson's limits are not options");
}

void every_key() {
  const Options o = parse_options({{"mode", "FAILFAST"},
                                   {"corrupt_column_index", "3"},
                                   {"root_value", "true"},
                                   {"allowSingleQuotes", "false"},
                                   {"allowNonNumericNumbers", "false"},
                                   {"allowNumericLeadingZeros", "true"},
                                   {"allowUnquotedFieldNames", "true"},
                                   {"allowComments", "true"},
                                   {"allowBackslashEscapingAnyCharacter", "true"},
                                   {"allowUnquotedControlChars", "true"},
                                   {"timestampFormat", "yyyy-MM-dd HH:mm"},
                                   {"timestampNTZFormat", "yyyy/MM/dd HH:mm"},
                                   {"dateFormat", "dd.MM.yyyy"},
                                   {"timeZone", "+05:30"}});
  check(o.mode == Mode::FailFast, "mode FAILFAST");
  check(o.corrupt_column == 3, "corrupt_column_index");
  check(o.root_value, "root_value");
  check(!o.allow_single_quotes, "allowSingleQuotes");
  check(!o.allow_non_numeric_numbers, "allowNonNumericNumbers");
  check(o.allow_numeric_leading_zeros, "allowNumericLeadingZeros");
  check(o.allow_unquoted_field_names, "allowUnquotedFieldNames");
  check(o.allow_comments, "allowComments");
  check(o.allow_backslash_escaping_any_character, "allowBackslashEscapingAnyCharacter");
  check(o.allow_unquoted_control_chars, "allowUnquotedControlChars");
  check(o.timestamp_format == "yyyy-MM-dd HH:mm", "timestampFormat");
  check(o.timestamp_ntz_format == "yyyy/MM/dd HH:mm", "timestampNTZFormat");
  check(o.date_format == "dd.MM.yyyy", "dateFormat");
  check(o.time_zone.is_fixed() && o.time_zone.fixed_offset_seconds() == 19800, "timeZone offset");
  check(parse_options({{"mode", "PERMISSIVE"}}).mode == Mode::Permissive, "mode PERMISSIVE");
  const Options file = parse_options({{"mode", "DROPMALFORMED"},
                                      {"file_records", "true"},
                                      {"exact_string_text", "true"},
                                      {"skip_byte_order_mark", "true"},
                                      {"lineSep", "||"}});
  check(file.mode == Mode::DropMalformed, "mode DROPMALFORMED of file records");
  check(file.file_records && file.exact_string_text && file.skip_byte_order_mark,
        "file_records, exact_string_text, skip_byte_order_mark");
  check(file.line_separator == "||", "lineSep");
  const Options d = parse_options({});
  check(!d.file_records && !d.exact_string_text && !d.skip_byte_order_mark &&
            d.line_separator.empty(),
        "from_json's defaults: no file-record rules");
  check(parse_options({{"timeZone", "UTC"}}).time_zone.fixed_offset_seconds() == 0, "timeZone UTC");
}

void errors() {
  check_rejects({{"allowComments", "yes"}},
                "option 'allowComments' must be 'true' or 'false', got 'yes'");
  check_rejects({{"root_value", "TRUE"}}, "option 'root_value'");
  check_rejects({{"mode", "DROPMALFORMED"}}, "from_json supports PERMISSIVE and FAILFAST only");
  check_rejects({{"mode", "NOPE"}}, "unsupported mode 'NOPE'");
  check_rejects({{"lineSep", ""}}, "'lineSep' cannot be an empty string");
  check_rejects({{"file_records", "1"}}, "option 'file_records'");
  check_rejects({{"timeZone", "Mars/Olympus"}}, "unknown time zone 'Mars/Olympus'");
}

}  // namespace

int main() {
  defaults();
  every_key();
  errors();
  std::printf("parse_options: %s\n", g_failures == 0 ? "all checks passed" : "FAILED");
  return g_failures == 0 ? 0 : 1;
}
