// parse_options: json::Options from the option map (see options.h).
#include "json/options.h"

#include <map>
#include <stdexcept>
#include <string>

namespace sliceflow::json {
namespace {

bool flag(const std::map<std::string, std::string>& options, const char* key, bool fallback) {
  const auto it = options.find(key);
  if (it == options.end()) return fallback;
  if (it->second == "true") return true;
  if (it->second == "false") return false;
  throw std::invalid_argument(std::string("option '") + key + "' must be 'true' or 'false', got '" +
                              it->second + "'");
}

std::string text(const std::map<std::string, std::string>& options, const char* key) {
  const auto it = options.find(key);
  return it == options.end() ? std::string() : it->second;
}

}  // namespace

Options parse_options(const std::map<std::string, std::string>& options) {
  Options out;
  const std::string mode = text(options, "mode");
  if (mode.empty() || mode == "PERMISSIVE") {
    out.mode = Mode::Permissive;
  } else if (mode == "FAILFAST") {
    out.mode = Mode::FailFast;
  } else if (mode == "DROPMALFORMED") {
    out.mode = Mode::DropMalformed;
  } else {
    throw std::invalid_argument("unsupported mode '" + mode + "'");
  }
  const std::string corrupt = text(options, "corrupt_column_index");
  out.corrupt_column = corrupt.empty() ? -1 : std::stoi(corrupt);
  out.root_value = flag(options, "root_value", false);
  out.file_records = flag(options, "file_records", false);
  out.exact_string_text = flag(options, "exact_string_text", false);
  out.skip_byte_order_mark = flag(options, "skip_byte_order_mark", false);
  if (out.mode == Mode::DropMalformed && !out.file_records) {
    throw std::invalid_argument(
        "mode 'DROPMALFORMED' drops records of a file; from_json supports PERMISSIVE and "
        "FAILFAST only");
  }
  if (options.count("lineSep") != 0) {
    out.line_separator = text(options, "lineSep");
    if (out.line_separator.empty())
      throw std::invalid_argument("'lineSep' cannot be an empty string");
  }
  out.allow_single_quotes = flag(options, "allowSingleQuotes", true);
  out.allow_non_numeric_numbers = flag(options, "allowNonNumericNumbers", true);
  out.allow_numeric_leading_zeros = flag(options, "allowNumericLeadingZeros", false);
  out.allow_unquoted_field_names = flag(options, "allowUnquotedFieldNames", false);
  out.allow_comments = flag(options, "allowComments", false);
  out.allow_backslash_escaping_any_character =
      flag(options, "allowBackslashEscapingAnyCharacter", false);
  out.allow_unquoted_control_chars = flag(options, "allowUnquotedControlChars", false);
  out.timestamp_format = text(options, "timestampFormat");
  out.timestamp_ntz_format = text(options, "timestampNTZFormat");
  out.date_format = text(options, "dateFormat");
  const std::string zone = text(options, "timeZone");
  if (!zone.empty() && !TimeZone::of(zone, out.time_zone)) {
    throw std::invalid_argument("unknown time zone '" + zone +
                                "' (use a region id such as 'America/Los_Angeles' or an offset "
                                "such as '+02:00')");
  }
  return out;
}

}  // namespace sliceflow::json
