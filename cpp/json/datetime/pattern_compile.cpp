// DateTimePattern::compile: Spark's DateTimeFormatterHelper (convertIncompatiblePattern, the
// variable-length second fraction) and DateTimeFormatterBuilder.appendPattern, with their
// exceptions turned into DateTimePatternError. Runs once per format option (O(pattern length));
// allocates the nodes.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "json/datetime.h"
#include "json/datetime/pattern.h"

namespace sliceflow::json {
using namespace dt;
namespace {

// Whether commons-lang3's FastDateFormat (Spark's legacy parser for JSON) accepts the pattern:
// quotes closed, and every unquoted letter one it knows ('X' at most three times).
bool legacy_fast_date_format_accepts(std::string_view p) {
  bool in_quote = false;
  for (size_t i = 0; i < p.size();) {
    const char c = p[i];
    if (c == '\'') {
      if (i + 1 < p.size() && p[i + 1] == '\'') {
        i += 2;
      } else {
        in_quote = !in_quote;
        ++i;
      }
      continue;
    }
    if (!in_quote && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
      size_t j = i;
      while (j < p.size() && p[j] == c) ++j;
      if (std::strchr("adhkmsuwyzDEFGHKLMSWYZX", c) == nullptr) return false;
      if (c == 'X' && j - i > 3) return false;
      i = j;
      continue;
    }
    ++i;
  }
  return !in_quote;
}

[[noreturn]] void reject(const std::string& pattern, const std::string& why) {
  throw DateTimePatternError(DateTimePatternError::Kind::kInvalid,
                             legacy_fast_date_format_accepts(pattern),
                             "invalid datetime pattern '" + pattern + "': " + why);
}

[[noreturn]] void not_supported(const std::string& pattern, const std::string& why) {
  throw DateTimePatternError(
      DateTimePatternError::Kind::kNotSupported, false,
      "datetime pattern '" + pattern + "' is valid in Spark but not supported here: " + why);
}

// A printer-parser node of `kind` for `field`; the caller sets the kind's other members.
Node make_node(NodeKind kind, Field field = kYear) {
  Node n;
  n.kind = kind;
  n.field = field;
  return n;
}

class Builder {
 public:
  explicit Builder(std::string pattern) : pattern_(std::move(pattern)) { levels_.push_back({}); }

  std::vector<Node> finish() {
    while (levels_.size() > 1) optional_end();
    return std::move(levels_[0].nodes);
  }

  void append_literal(std::string s) {
    if (s.empty()) return;
    Node n = make_node(NodeKind::Literal);
    n.text = std::move(s);
    append_internal(std::move(n));
  }

  // DateTimeFormatterBuilder.appendFraction(NANO_OF_SECOND, min, max, false)
  void append_fraction(int min_width, int max_width) {
    if (max_width < 1 || max_width > 9) fail("Maximum width must be from 1 to 9 inclusive");
    Node n = make_node(NodeKind::Fraction, kNano);
    n.min_width = min_width;
    n.max_width = max_width;
    n.sign = Sign::NotNegative;
    if (min_width == max_width) append_value(std::move(n));
    else append_internal(std::move(n));
  }

  // DateTimeFormatterBuilder.parsePattern
  void append_pattern(std::string_view p) {
    for (size_t pos = 0; pos < p.size(); ++pos) {
      char cur = p[pos];
      if ((cur >= 'A' && cur <= 'Z') || (cur >= 'a' && cur <= 'z')) {
        size_t start = pos++;
        while (pos < p.size() && p[pos] == cur) ++pos;
        parse_letter(cur, static_cast<int>(pos - start));
        --pos;
      } else if (cur == '\'') {
        size_t start = pos++;
        for (; pos < p.size(); ++pos) {
          if (p[pos] == '\'') {
            if (pos + 1 < p.size() && p[pos + 1] == '\'') ++pos;
            else break;
          }
        }
        if (pos >= p.size()) fail("Pattern ends with an incomplete string literal");
        std::string_view str = p.substr(start + 1, pos - start - 1);
        if (str.empty()) {
          append_literal("'");
        } else {
          std::string lit;
          for (size_t k = 0; k < str.size(); ++k) {
            lit += str[k];
            if (str[k] == '\'' && k + 1 < str.size() && str[k + 1] == '\'') ++k;
          }
          append_literal(std::move(lit));
        }
      } else if (cur == '[') {
        levels_.back().value_parser_index = -1;
        levels_.push_back({});
      } else if (cur == ']') {
        if (levels_.size() == 1) fail("Pattern invalid as it contains ] without previous [");
        optional_end();
      } else if (cur == '{' || cur == '}' || cur == '#') {
        fail(std::string("Pattern includes reserved character: '") + cur + "'");
      } else {
        append_literal(std::string(1, cur));
      }
    }
  }

 private:
  struct Level {
    std::vector<Node> nodes;
    int value_parser_index = -1;
  };

  [[noreturn]] void fail(const std::string& why) { reject(pattern_, why); }

  int append_internal(Node n) {
    Level& a = levels_.back();
    a.nodes.push_back(std::move(n));
    a.value_parser_index = -1;
    return static_cast<int>(a.nodes.size()) - 1;
  }

  // DateTimeFormatterBuilder.appendValue(NumberPrinterParser): adjacent value parsing.
  void append_value(Node pp) {
    Level& a = levels_.back();
    if (a.value_parser_index >= 0) {
      const int active = a.value_parser_index;
      Node& base = a.nodes[static_cast<size_t>(active)];
      if (pp.min_width == pp.max_width && pp.sign == Sign::NotNegative) {
        base.subsequent_width += pp.max_width;
        pp.subsequent_width = -1;
        append_internal(std::move(pp));
        levels_.back().value_parser_index = active;
      } else {
        base.subsequent_width = -1;
        int idx = append_internal(std::move(pp));
        levels_.back().value_parser_index = idx;
      }
    } else {
      int idx = append_internal(std::move(pp));
      levels_.back().value_parser_index = idx;
    }
  }

  void optional_end() {
    Level done = std::move(levels_.back());
    levels_.pop_back();
    if (!done.nodes.empty()) {
      Node n = make_node(NodeKind::Optional);
      n.children = std::move(done.nodes);
      append_internal(std::move(n));
    }
  }

  void number(Field f, int min_width, int max_width, Sign sign) {
    Node n = make_node(NodeKind::Number, f);
    n.min_width = min_width;
    n.max_width = max_width;
    n.sign = (min_width == max_width && sign == Sign::NotNegative) ? Sign::NotNegative : sign;
    append_value(std::move(n));
  }

  void text(Field f, TextSet set) {
    Node n = make_node(NodeKind::Text, f);
    n.text_set = set;
    append_internal(std::move(n));
  }

  void offset(int type, const char* no_offset_text) {
    Node n = make_node(NodeKind::Offset, kOffsetSeconds);
    n.offset_type = type;
    n.text = no_offset_text;
    append_internal(std::move(n));
  }

  void localized_offset(bool full) {
    Node n = make_node(NodeKind::LocalizedOffset, kOffsetSeconds);
    n.full = full;
    append_internal(std::move(n));
  }

  void zone(bool zone_text, bool full) {
    Node n = make_node(NodeKind::ZoneId);
    n.zone_text = zone_text;
    n.full = full;
    append_internal(std::move(n));
  }

  void too_many(char c) { fail(std::string("Too many pattern letters: ") + c); }

  void parse_letter(char cur, int count) {
    switch (cur) {
      case 'u':
      case 'y': {
        // 'y' only survives Spark's y -> u rewrite when the pattern has an era ('G').
        const Field f = cur == 'u' ? kYear : kYearOfEra;
        if (count == 2) {
          Node n = make_node(NodeKind::Number, f);
          n.min_width = n.max_width = 2;
          n.sign = Sign::NotNegative;
          n.reduced = true;
          append_value(std::move(n));
        } else if (count < 4) {
          number(f, count, 19, Sign::Normal);
        } else {
          if (count > 19) too_many(cur);
          number(f, count, 19, Sign::ExceedsPad);
        }
        break;
      }
      case 'M':
      case 'L':
        if (count == 1) number(kMonth, 1, 19, Sign::Normal);
        else if (count == 2) number(kMonth, 2, 2, Sign::NotNegative);
        else if (count == 3) text(kMonth, TextSet::MonthShort);
        else if (count == 4) text(kMonth, TextSet::MonthFull);
        else too_many(cur);
        break;
      case 'd':
      case 'h':
      case 'H':
      case 'k':
      case 'K':
      case 'm':
      case 's': {
        Field f = cur == 'd'   ? kDayOfMonth
                  : cur == 'h' ? kClockHourOfAmPm
                  : cur == 'H' ? kHourOfDay
                  : cur == 'k' ? kClockHourOfDay
                  : cur == 'K' ? kHourOfAmPm
                  : cur == 'm' ? kMinute
                               : kSecond;
        if (count == 1) number(f, 1, 19, Sign::Normal);
        else if (count == 2) number(f, 2, 2, Sign::NotNegative);
        else too_many(cur);
        break;
      }
      case 'D':
        if (count == 1) number(kDayOfYear, 1, 19, Sign::Normal);
        else if (count == 2 || count == 3) number(kDayOfYear, count, 3, Sign::NotNegative);
        else too_many(cur);
        break;
      case 'a':
        if (count != 1) too_many(cur);
        text(kAmPm, TextSet::AmPm);
        break;
      case 'S':
        append_fraction(count, count);
        break;
      case 'z':
        if (count > 4) too_many(cur);
        zone(true, count == 4);
        break;
      case 'V':
        if (count != 2) fail("Pattern letter count must be 2: V");
        zone(false, false);
        break;
      case 'Z':
        if (count < 4) offset(3, "+0000");
        else if (count == 4) localized_offset(true);
        else if (count == 5) offset(6, "Z");
        else too_many(cur);
        break;
      case 'O':
        if (count == 1) localized_offset(false);
        else if (count == 4) localized_offset(true);
        else fail("Pattern letter count must be 1 or 4: O");
        break;
      case 'X':
        if (count > 5) too_many(cur);
        offset(count + (count == 1 ? 0 : 1), "Z");
        break;
      case 'x':
        if (count > 5) too_many(cur);
        offset(count + (count == 1 ? 0 : 1),
               count == 1 ? "+00" : (count % 2 == 0 ? "+0000" : "+00:00"));
        break;
      case 'G':
        if (count <= 3) text(kEra, TextSet::EraShort);
        else if (count == 4) text(kEra, TextSet::EraFull);
        else too_many(cur);
        break;
      case 'g':
        if (count > 19) too_many(cur);
        not_supported(pattern_, "the modified-julian-day letter 'g'");
      case 'v':
        if (count != 1 && count != 4) fail("Wrong number of pattern letters: v");
        not_supported(pattern_, "generic zone names ('v')");
      default:
        fail(std::string("Unknown pattern letter: ") + cur);
    }
  }

  std::string pattern_;
  std::vector<Level> levels_;
};

// java.lang.String.split(String) with a one-character separator: trailing empty strings removed.
std::vector<std::string_view> java_split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  while (!parts.empty() && parts.back().empty()) parts.pop_back();
  if (parts.empty() && s.empty()) parts.push_back(s);  // "".split(x) == [""]
  return parts;
}

bool has_line_terminator(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '\n' || c == '\r') return true;
    if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x85) return true;
    if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
        (static_cast<unsigned char>(s[i + 2]) == 0xA8 ||
         static_cast<unsigned char>(s[i + 2]) == 0xA9)) {
      return true;
    }
  }
  return false;
}

// DateTimeFormatterHelper.convertIncompatiblePattern(pattern, isParsing = true).
std::string convert_incompatible_pattern(const std::string& pattern) {
  bool era = false;
  {
    auto parts = java_split(pattern, '\'');
    for (size_t i = 0; i < parts.size(); i += 2)
      era = era || parts[i].find('G') != std::string_view::npos;
  }
  std::string padded = pattern + " ";
  auto parts = java_split(padded, '\'');
  std::string out;
  for (size_t idx = 0; idx < parts.size(); ++idx) {
    if (idx > 0) out += '\'';
    std::string part(parts[idx]);
    if (idx % 2 == 0) {
      for (char c : part) {
        if (std::strchr("YWwuec", c) != nullptr && c != '\0') {
          reject(pattern, std::string("Spark rejects week-based pattern letter '") + c + "'");
        }
      }
      for (char c : part) {
        if (c != '\0' &&
            (std::strchr("ABnNp", c) != nullptr || std::strchr("EFqQ", c) != nullptr)) {
          reject(pattern, std::string("Spark rejects pattern letter '") + c + "' for parsing");
        }
      }
      for (const char* style : {"GGGGG", "MMMMM", "LLLLL", "EEEEE", "QQQQQ", "qqqqq", "yyyyyyy"}) {
        if (part.find(style) != std::string::npos) {
          reject(pattern, std::string("Spark rejects the pattern length '") + style + "'");
        }
      }
      if (!era) std::replace(part.begin(), part.end(), 'y', 'u');
    }
    out += part;
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace

DateTimePattern DateTimePattern::compile(std::string_view pattern_view) {
  const std::string pattern(pattern_view);
  const std::string converted = convert_incompatible_pattern(pattern);
  Builder b(pattern);
  if (converted.find('S') != std::string::npos) {
    // DateTimeFormatterHelper.createBuilderWithVarLengthSecondFraction
    auto parts = java_split(converted, '\'');
    for (size_t idx = 0; idx < parts.size(); ++idx) {
      std::string_view part = parts[idx];
      if (part.empty() && idx != 0) {
        b.append_literal("'");
      } else if (idx % 2 == 0) {
        std::string_view rest = part;
        while (!rest.empty()) {
          size_t s_begin = rest.find('S');
          if (s_begin == std::string_view::npos) s_begin = rest.size();
          size_t s_end = s_begin;
          while (s_end < rest.size() && rest[s_end] == 'S') ++s_end;
          // ^([^S]*)(S*)(.*)$ : '.' does not match line terminators
          if (has_line_terminator(rest.substr(s_end))) reject(pattern, "INVALID_DATETIME_PATTERN");
          b.append_pattern(rest.substr(0, s_begin));
          if (s_end > s_begin) b.append_fraction(1, static_cast<int>(s_end - s_begin));
          rest = rest.substr(s_end);
        }
      } else {
        b.append_literal(std::string(part));
      }
    }
  } else {
    b.append_pattern(converted);
  }
  auto impl = std::make_shared<Impl>();
  impl->nodes = b.finish();
  return DateTimePattern(std::move(impl));
}

std::optional<DateTimePattern> compile_json_pattern(const std::string& format, bool ntz,
                                                    std::string& per_value_error) {
  per_value_error.clear();
  if (format.empty()) return std::nullopt;
  try {
    return DateTimePattern::compile(format);
  } catch (const DateTimePatternError& e) {
    if (e.kind() == DateTimePatternError::Kind::kNotSupported || (e.fails_query() && !ntz)) throw;
    per_value_error = e.what();
    return std::nullopt;
  }
}

}  // namespace sliceflow::json
