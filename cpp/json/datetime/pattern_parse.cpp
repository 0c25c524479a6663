// Parsing with a compiled DateTimePattern: java.time's printer-parsers (case-insensitive,
// strict) fill a Parsed, which pattern_resolve.cpp resolves (Parsed.resolve with
// ResolverStyle.STRICT, then Spark's toLocalDate / toLocalTime defaults). O(length of the
// string); allocates nothing and throws nothing.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "json/datetime.h"
#include "json/datetime/calendar.h"
#include "json/datetime/pattern.h"
#include "json/datetime/pattern_resolve.h"
#include "json/datetime/zone.h"

namespace sliceflow::json {
using namespace dt;
namespace {

using Pos = int64_t;  // a parse position; negative = ~(error position), as in java.time

// SignStyle.parse(positive, strict=true, fixedWidth)
bool sign_allowed(Sign s, bool positive) {
  switch (s) {
    case Sign::Normal:
      return !positive;
    case Sign::Always:
    case Sign::ExceedsPad:
      return true;
    default:
      return false;
  }
}

// Month and AM/PM texts of Locale.US in the JDK's CLDR data, longest first as java.time tries them.
constexpr const char* kMonthShort[12] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr const char* kMonthFull[12] = {"January",   "February", "March",    "April",
                                        "May",       "June",     "July",     "August",
                                        "September", "October",  "November", "December"};
constexpr const char* kAmPmTexts[2] = {"AM", "PM"};
constexpr const char* kEraShort[2] = {"BC", "AD"};
constexpr const char* kEraFull[2] = {"Before Christ", "Anno Domini"};

struct Ctx {
  std::string_view text;
  Parsed parsed;
  bool fatal = false;  // java threw an exception: the whole parse fails, even inside [..]
};

inline Pos set_parsed_field(Ctx& c, int f, int64_t value, Pos error_pos, Pos success_pos) {
  bool conflict = c.parsed.has(f) && c.parsed.get(f) != value;
  c.parsed.put(f, value);
  return conflict ? ~error_pos : success_pos;
}

inline bool sub_sequence_equals_ci(std::string_view text, Pos pos, std::string_view lit) {
  if (pos < 0 || static_cast<size_t>(pos) + lit.size() > text.size()) return false;
  for (size_t i = 0; i < lit.size(); ++i) {
    if (!ci_equal(text[static_cast<size_t>(pos) + i], lit[i])) return false;
  }
  return true;
}

Pos parse_nodes(Ctx& c, const std::vector<Node>& nodes, Pos position);

Pos parse_number(Ctx& c, const Node& n, Pos position) {
  const Pos length = static_cast<Pos>(c.text.size());
  if (position == length) return ~position;
  const char sign = c.text[static_cast<size_t>(position)];
  bool negative = false, positive = false;
  if (sign == '+') {
    if (!sign_allowed(n.sign, true)) return ~position;
    positive = true;
    ++position;
  } else if (sign == '-') {
    if (!sign_allowed(n.sign, false)) return ~position;
    negative = true;
    ++position;
  } else if (n.sign == Sign::Always) {
    return ~position;
  }
  const Pos eff_min = n.min_width;
  const Pos min_end = position + eff_min;
  if (min_end > length) return ~position;
  Pos eff_max = n.max_width + std::max(n.subsequent_width, 0);
  uint64_t total = 0;
  Pos pos = position;
  for (int pass = 0; pass < 2; ++pass) {
    const Pos max_end = std::min(pos + eff_max, length);
    while (pos < max_end) {
      const char ch = c.text[static_cast<size_t>(pos++)];
      if (!is_digit(ch)) {
        --pos;
        if (pos < min_end) return ~position;
        break;
      }
      if (pos - position <= 19) total = total * 10 + static_cast<uint64_t>(ch - '0');
    }
    if (n.subsequent_width > 0 && pass == 0) {
      const Pos parse_len = pos - position;
      eff_max = std::max(eff_min, parse_len - n.subsequent_width);
      pos = position;
      total = 0;
    } else {
      break;
    }
  }
  int64_t value = 0;
  if (negative) {
    if (total == 0) return ~(position - 1);  // minus zero
  } else if (n.sign == Sign::ExceedsPad) {
    const Pos parse_len = pos - position;
    if (positive) {
      if (parse_len <= n.min_width) return ~(position - 1);
    } else if (parse_len > n.min_width) {
      return ~position;
    }
  }
  constexpr uint64_t kMaxMagnitude = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (total > kMaxMagnitude + (negative ? 1 : 0)) {  // BigInteger.bitLength() > 63
    total /= 10;
    --pos;
  }
  if (negative) {
    value = total == kMaxMagnitude + 1 ? std::numeric_limits<int64_t>::min()
                                       : -static_cast<int64_t>(total);
  } else {
    value = static_cast<int64_t>(total);
  }
  if (n.reduced && pos - position == n.min_width && value >= 0) {
    value = 2000 + value;  // ReducedPrinterParser with base date 2000-01-01
  }
  return set_parsed_field(c, n.field, value, position, pos);
}

Pos parse_fraction(Ctx& c, const Node& n, Pos position) {
  const Pos length = static_cast<Pos>(c.text.size());
  if (position == length) return n.min_width > 0 ? ~position : position;
  const Pos min_end = position + n.min_width;
  if (min_end > length) return ~position;
  const Pos max_end = std::min(position + n.max_width, length);
  int64_t total = 0;
  Pos pos = position;
  while (pos < max_end) {
    const char ch = c.text[static_cast<size_t>(pos++)];
    if (!is_digit(ch)) {
      if (pos <= min_end) return ~position;
      --pos;
      break;
    }
    total = total * 10 + (ch - '0');
  }
  for (Pos d = pos - position; d < 9; ++d) total *= 10;
  return set_parsed_field(c, kNano, total, position, pos);
}

Pos parse_text(Ctx& c, const Node& n, Pos position) {
  if (position < 0 || position > static_cast<Pos>(c.text.size())) return ~position;
  const char* const* texts = nullptr;
  int count = 0;
  switch (n.text_set) {
    case TextSet::MonthShort:
      texts = kMonthShort;
      count = 12;
      break;
    case TextSet::MonthFull:
      texts = kMonthFull;
      count = 12;
      break;
    case TextSet::AmPm:
      texts = kAmPmTexts;
      count = 2;
      break;
    case TextSet::EraShort:
      texts = kEraShort;
      count = 2;
      break;
    case TextSet::EraFull:
      texts = kEraFull;
      count = 2;
      break;
  }
  int best = -1;
  size_t best_len = 0;
  for (int i = 0; i < count; ++i) {
    std::string_view t(texts[i]);
    if (t.size() > best_len && sub_sequence_equals_ci(c.text, position, t)) {
      best = i;
      best_len = t.size();
    }
  }
  if (best < 0) return ~position;
  const bool zero_based = n.text_set == TextSet::AmPm || n.text_set == TextSet::EraShort ||
                          n.text_set == TextSet::EraFull;
  int64_t value = zero_based ? best : best + 1;
  return set_parsed_field(c, n.field, value, position, position + static_cast<Pos>(best_len));
}

// OffsetIdPrinterParser.parse in strict mode; the offset goes to `secs`. Returns the position.
Pos parse_offset_id(Ctx& c, int type, std::string_view no_offset_text, Pos position,
                    int64_t& secs) {
  const std::string_view text = c.text;
  const Pos length = static_cast<Pos>(text.size());
  if (position == length) return ~position;
  if (sub_sequence_equals_ci(text, position, no_offset_text)) {
    secs = 0;
    return position + static_cast<Pos>(no_offset_text.size());
  }
  const char sign = text[static_cast<size_t>(position)];
  if (sign != '+' && sign != '-') return ~position;
  const int negative = sign == '-' ? -1 : 1;
  const int style = type % 11;
  const bool is_colon = style > 0 && (style % 2) == 0;
  const bool padded_hour = type < 11;
  Pos arr[4] = {position + 1, 0, 0, 0};
  auto parse_digits = [&](bool colon, int index) {
    Pos pos = arr[0];
    if (pos < 0) return true;
    if (colon && index != 1) {
      if (pos + 1 > length || text[static_cast<size_t>(pos)] != ':') return false;
      ++pos;
    }
    if (pos + 2 > length) return false;
    const char ch1 = text[static_cast<size_t>(pos)];
    const char ch2 = text[static_cast<size_t>(pos + 1)];
    if (!is_digit(ch1) || !is_digit(ch2)) return false;
    const int value = (ch1 - '0') * 10 + (ch2 - '0');
    if (value > 59) return false;
    arr[index] = value;
    arr[0] = pos + 2;
    return true;
  };
  auto parse_hour = [&]() {
    if (padded_hour && !parse_digits(false, 1)) arr[0] = ~arr[0];
  };
  auto parse_minute = [&](bool mandatory) {
    if (!parse_digits(is_colon, 2) && mandatory) arr[0] = ~arr[0];
  };
  auto parse_second = [&](bool mandatory) {
    if (!parse_digits(is_colon, 3) && mandatory) arr[0] = ~arr[0];
  };
  switch (type) {
    case 0:
      parse_hour();
      break;
    case 1:
    case 2:
      parse_hour();
      parse_minute(false);
      break;
    case 3:
    case 4:
      parse_hour();
      parse_minute(true);
      break;
    case 5:
    case 6:
      parse_hour();
      parse_minute(true);
      parse_second(false);
      break;
    case 7:
    case 8:
      parse_hour();
      parse_minute(true);
      parse_second(true);
      break;
    case 9:
    case 10:
      parse_hour();
      if (parse_digits(is_colon, 2)) parse_digits(is_colon, 3);
      break;
    default:
      return ~position;  // unpadded-hour patterns are never produced by pattern letters
  }
  if (arr[0] > 0) {
    if (arr[1] > 23 || arr[2] > 59 || arr[3] > 59) {
      c.fatal = true;  // DateTimeException("Value out of range")
      return ~position;
    }
    secs = negative * (arr[1] * 3600 + arr[2] * 60 + arr[3]);
    return arr[0];
  }
  return ~position;
}

// LocalizedOffsetIdPrinterParser.parse ("GMT+8", "GMT+08:00").
Pos parse_localized_offset(Ctx& c, bool full, Pos position) {
  const std::string_view text = c.text;
  const Pos end = static_cast<Pos>(text.size());
  Pos pos = position;
  if (!sub_sequence_equals_ci(text, pos, "GMT")) return ~position;
  pos += 3;
  if (pos == end) return set_parsed_field(c, kOffsetSeconds, 0, position, pos);
  const char sign = text[static_cast<size_t>(pos)];
  int negative = 0;
  if (sign == '+') negative = 1;
  else if (sign == '-') negative = -1;
  else return set_parsed_field(c, kOffsetSeconds, 0, position, pos);
  ++pos;
  // getDigit / charAt beyond the end throw in java: the whole parse fails.
  bool oob = false;
  auto digit = [&](Pos p) -> int {
    if (p >= end) {
      oob = true;
      return -1;
    }
    char ch = text[static_cast<size_t>(p)];
    return is_digit(ch) ? ch - '0' : -1;
  };
  int h = 0, m = 0, s = 0;
  if (full) {
    int h1 = digit(pos++);
    int h2 = oob ? -1 : digit(pos++);
    if (oob) {
      c.fatal = true;
      return ~position;
    }
    if (h1 < 0 || h2 < 0) return ~position;
    if (pos >= end) {
      c.fatal = true;
      return ~position;
    }
    if (text[static_cast<size_t>(pos++)] != ':') return ~position;
    h = h1 * 10 + h2;
    int m1 = digit(pos++);
    int m2 = oob ? -1 : digit(pos++);
    if (oob) {
      c.fatal = true;
      return ~position;
    }
    if (m1 < 0 || m2 < 0) return ~position;
    m = m1 * 10 + m2;
    if (pos + 2 < end && text[static_cast<size_t>(pos)] == ':') {
      int s1 = digit(pos + 1), s2 = digit(pos + 2);
      if (s1 >= 0 && s2 >= 0) {
        s = s1 * 10 + s2;
        pos += 3;
      }
    }
  } else {
    h = digit(pos++);
    if (oob) {
      c.fatal = true;
      return ~position;
    }
    if (h < 0) return ~position;
    if (pos < end) {
      int h2 = digit(pos);
      if (h2 >= 0) {
        h = h * 10 + h2;
        ++pos;
      }
      if (pos + 2 < end && text[static_cast<size_t>(pos)] == ':') {
        int m1 = digit(pos + 1), m2 = digit(pos + 2);
        if (m1 >= 0 && m2 >= 0) {
          m = m1 * 10 + m2;
          pos += 3;
          if (pos + 2 < end && text[static_cast<size_t>(pos)] == ':') {
            int s1 = digit(pos + 1), s2 = digit(pos + 2);
            if (s1 >= 0 && s2 >= 0) {
              s = s1 * 10 + s2;
              pos += 3;
            }
          }
        }
      }
    }
  }
  int64_t secs = negative * (h * 3600LL + m * 60LL + s);
  return set_parsed_field(c, kOffsetSeconds, secs, position, pos);
}

// ZoneIdPrinterParser.parseOffsetBased
Pos parse_offset_based(Ctx& c, Pos prefix_pos, Pos position, bool id_z) {
  const std::string_view text = c.text;
  const Pos length = static_cast<Pos>(text.size());
  if (position >= length || text[static_cast<size_t>(position)] == '0' ||
      ci_equal(text[static_cast<size_t>(position)], 'Z')) {
    c.parsed.has_zone = true;
    c.parsed.zone = Zone{nullptr, 0};  // ZoneId.of("UTC" | "GMT" | "UT")
    return position;
  }
  int64_t secs = 0;
  // java parses the offset into a fresh context: no conflict with an OFFSET_SECONDS parsed
  // earlier is possible.
  Pos end_pos = parse_offset_id(c, 6, id_z ? "Z" : "0", position, secs);
  if (c.fatal) return ~prefix_pos;
  if (end_pos < 0) {
    if (id_z) return ~prefix_pos;
    c.parsed.has_zone = true;
    c.parsed.zone = Zone{nullptr, 0};
    return position;
  }
  if (secs < -kMaxOffset || secs > kMaxOffset) return ~prefix_pos;
  c.parsed.has_zone = true;
  c.parsed.zone = Zone{nullptr, secs};
  return end_pos;
}

// ZoneIdPrinterParser.parse ('VV') and, for region ids and offsets only, ZoneTextPrinterParser
// ('z').
Pos parse_zone(Ctx& c, const Node& n, Pos position) {
  const std::string_view text = c.text;
  const Pos length = static_cast<Pos>(text.size());
  if (position > length) return ~position;
  if (position == length) return ~position;
  auto at = [&](Pos p) { return text[static_cast<size_t>(p)]; };
  const char next = at(position);
  if (next == '+' || next == '-') return parse_offset_based(c, position, position, true);
  if (length >= position + 2) {
    const char next2 = at(position + 1);
    if (ci_equal(next, 'U') && ci_equal(next2, 'T')) {
      if (length >= position + 3 && ci_equal(at(position + 2), 'C')) {
        if (length == position + 3 || at(position + 3) == '+' || at(position + 3) == '-') {
          return parse_offset_based(c, position, position + 3, false);
        }
      } else {
        return parse_offset_based(c, position, position + 2, false);
      }
    } else if (ci_equal(next, 'G') && length >= position + 3 && ci_equal(next2, 'M') &&
               ci_equal(at(position + 2), 'T')) {
      if (length >= position + 4 && ci_equal(at(position + 3), '0')) {
        c.parsed.has_zone = true;
        c.parsed.zone = Zone{nullptr, 0};  // GMT0
        return position + 4;
      }
      return parse_offset_based(c, position, position + 3, false);
    }
  }
  size_t len = 0;
  int index = find_zone_id_prefix_ci(text.substr(static_cast<size_t>(position)), len);
  if (index < 0) {
    // 'z' also knows localized names ("PST", "Pacific Standard Time"): not supported here,
    // reported as a failure of the whole parse rather than a skipped optional section.
    const bool alpha = ascii_upper(next) >= 'A' && ascii_upper(next) <= 'Z';
    const bool lone_z =
        ci_equal(next, 'Z') && (position + 1 == length || !(ascii_upper(at(position + 1)) >= 'A' &&
                                                            ascii_upper(at(position + 1)) <= 'Z'));
    if (n.zone_text && alpha && !lone_z) {
      c.fatal = true;
      return ~position;
    }
    if (ci_equal(next, 'Z')) {
      c.parsed.has_zone = true;
      c.parsed.zone = Zone{nullptr, 0};
      return position + 1;
    }
    return ~position;
  }
  std::string_view id = zone_id_at(index);
  if (n.zone_text && id.find('/') == std::string_view::npos) {
    // For 'z' an id without '/' may be shadowed by a localized name ("EST", "CET"...):
    // unsupported, reported as a parse failure.
    c.fatal = true;
    return ~position;
  }
  Zone z;
  if (!zone_region(id, z)) {  // rules not available on this machine
    c.fatal = true;
    return ~position;
  }
  c.parsed.has_zone = true;
  c.parsed.zone = z;
  return position + static_cast<Pos>(len);
}

Pos parse_node(Ctx& c, const Node& n, Pos position) {
  switch (n.kind) {
    case NodeKind::Literal: {
      if (!sub_sequence_equals_ci(c.text, position, n.text)) return ~position;
      return position + static_cast<Pos>(n.text.size());
    }
    case NodeKind::Number:
      return parse_number(c, n, position);
    case NodeKind::Fraction:
      return parse_fraction(c, n, position);
    case NodeKind::Text:
      return parse_text(c, n, position);
    case NodeKind::Offset: {
      int64_t secs = 0;
      Pos end = parse_offset_id(c, n.offset_type, n.text, position, secs);
      if (end < 0) return end;
      return set_parsed_field(c, kOffsetSeconds, secs, position, end);
    }
    case NodeKind::LocalizedOffset:
      return parse_localized_offset(c, n.full, position);
    case NodeKind::ZoneId:
      return parse_zone(c, n, position);
    case NodeKind::Optional: {
      const Parsed saved = c.parsed;
      Pos pos = parse_nodes(c, n.children, position);
      if (pos < 0 && !c.fatal) {
        c.parsed = saved;
        return position;
      }
      return pos;
    }
  }
  return ~position;
}

Pos parse_nodes(Ctx& c, const std::vector<Node>& nodes, Pos position) {
  for (const Node& n : nodes) {
    position = parse_node(c, n, position);
    if (position < 0 || c.fatal) return position < 0 ? position : ~position;
  }
  return position;
}

// formatter.parse(s): parse the whole string, then resolve.
bool parse_and_resolve(const DateTimePattern::Impl& impl, std::string_view s, Parsed& p,
                       Resolved& r) {
  Ctx c;
  c.text = s;
  Pos pos = parse_nodes(c, impl.nodes, 0);
  if (c.fatal || pos < 0 || static_cast<size_t>(pos) != s.size()) return false;
  p = c.parsed;
  return resolve(p, r);
}

}  // namespace

bool DateTimePattern::parse_timestamp(std::string_view s, int64_t default_offset_seconds,
                                      int64_t& micros) const {
  return parse_timestamp(s, TimeZone::fixed(default_offset_seconds), micros);
}

bool DateTimePattern::parse_timestamp(std::string_view s, const TimeZone& session_zone,
                                      int64_t& micros) const {
  Parsed p;
  Resolved r;
  if (!parse_and_resolve(*impl_, s, p, r)) return false;
  Zone zone = ZoneAccess::get(session_zone);
  if (p.has_zone) {
    zone = p.zone;
  } else if (p.has(kOffsetSeconds)) {
    if (!in_range(kOffsetSeconds, p.get(kOffsetSeconds)))
      return false;  // ZoneOffset.ofTotalSeconds
    zone = Zone{nullptr, p.get(kOffsetSeconds)};
  }
  int64_t day = 0, sod = 0, nano = 0;
  if (!to_local_date(p, r, day) || !to_local_time(p, r, sod, nano)) return false;
  int64_t epoch = local_to_epoch(zone, day * kSecondsPerDay + sod);
  return exact_micros(epoch, nano / 1000, micros);
}

bool DateTimePattern::parse_timestamp_ntz(std::string_view s, bool allow_time_zone,
                                          int64_t& micros) const {
  Parsed p;
  Resolved r;
  if (!parse_and_resolve(*impl_, s, p, r)) return false;
  if (!allow_time_zone && (p.has_zone || p.has(kOffsetSeconds))) return false;
  int64_t day = 0, sod = 0, nano = 0;
  if (!to_local_date(p, r, day) || !to_local_time(p, r, sod, nano)) return false;
  return instant_to_micros(day * kSecondsPerDay + sod, nano / 1000, micros);
}

bool DateTimePattern::parse_date(std::string_view s, int32_t& days) const {
  Parsed p;
  Resolved r;
  if (!parse_and_resolve(*impl_, s, p, r)) return false;
  int64_t day = 0;
  if (!to_local_date(p, r, day) || !fits_int32(day)) return false;
  days = static_cast<int32_t>(day);
  return true;
}

}  // namespace sliceflow::json
