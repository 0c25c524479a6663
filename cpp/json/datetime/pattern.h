// A DateTimeFormatter pattern compiled into nodes (DateTimeFormatterBuilder's printer-parsers,
// reduced to what Spark's patterns produce): what pattern_compile.cpp builds and
// pattern_parse.cpp runs. Internal to datetime/*.cpp (namespace dt). A compiled pattern is
// immutable; parsing it allocates nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "json/datetime.h"

namespace sliceflow::json::dt {

enum Field : int {
  kYear,
  kMonth,
  kDayOfMonth,
  kDayOfYear,
  kHourOfDay,
  kClockHourOfDay,
  kHourOfAmPm,
  kClockHourOfAmPm,
  kAmPm,
  kMinute,
  kSecond,
  kNano,
  kOffsetSeconds,
  kEra,
  kYearOfEra,
  kFieldCount
};

enum class Sign : uint8_t { Normal, Always, Never, NotNegative, ExceedsPad };

enum class NodeKind : uint8_t {
  Literal,
  Number,
  Fraction,
  Text,
  Offset,
  LocalizedOffset,
  ZoneId,
  Optional
};
enum class TextSet : uint8_t { MonthShort, MonthFull, AmPm, EraShort, EraFull };

struct Node {
  NodeKind kind = NodeKind::Literal;
  Field field = kYear;
  int min_width = 0, max_width = 0, subsequent_width = 0;
  Sign sign = Sign::Normal;
  bool reduced = false;    // ReducedPrinterParser(2, 2, base 2000)
  std::string text;        // literal text / offset "no offset" text
  int offset_type = 0;     // index into OffsetIdPrinterParser.PATTERNS
  bool full = false;       // LocalizedOffset / zone text style FULL
  bool zone_text = false;  // 'z' (ZoneTextPrinterParser) rather than 'VV'
  TextSet text_set = TextSet::MonthShort;
  std::vector<Node> children;  // Optional
};

}  // namespace sliceflow::json::dt

namespace sliceflow::json {

struct DateTimePattern::Impl {
  std::vector<dt::Node> nodes;
};

}  // namespace sliceflow::json
