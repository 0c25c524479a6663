#include "json/fast_path.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "arrow/byte_buffer.h"
#include "arrow/int128.h"

namespace sliceflow::json {

using arrow::ColumnBuilder;
using arrow::Kind;
using arrow::Type;
using simdjson::dom::element_type;

namespace {

// Jackson refuses nesting deeper than 1000; stay well inside so that the reference path
// decides every document near the limit.
constexpr size_t kFastMaxDepth = 512;

bool pow10_fits(int scale, int precision, int64_t v, int128& out) {
  int128 x = v;
  for (int i = 0; i < scale; ++i) x *= 10;
  int128 limit = 1;
  for (int i = 0; i < precision; ++i) limit *= 10;
  if (x >= limit || x <= -limit) return false;
  out = x;
  return true;
}

bool number_byte(char c) {
  return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+';
}

// Jackson's StreamReadConstraints reject numbers of more than `max_digits` digits, field
// names of more than 50000 characters and string values of more than `max_string` characters,
// which simdjson accepts. True when the document may hold any of them (conservatively: the
// reference path then decides). Costs nothing for short documents.
bool may_exceed_jackson_limits(std::string_view doc, size_t max_digits, size_t max_string) {
  constexpr size_t kMaxNameLength = 50000;
  if (doc.size() > max_digits && max_digits >= 2) {
    // Such a number is a run of more than max_digits bytes of [0-9.eE+-], so two consecutive
    // samples taken every max_digits / 2 bytes fall into it.
    const size_t step = max_digits / 2;
    bool previous = false;
    for (size_t i = 0; i < doc.size(); i += step) {
      const bool in = number_byte(doc[i]);
      const bool both = in && previous;
      previous = in;
      if (both) {
        size_t begin = i;
        while (begin > 0 && number_byte(doc[begin - 1])) --begin;
        size_t digits = 0;
        size_t end = begin;
        for (; end < doc.size() && number_byte(doc[end]); ++end) {
          if (doc[end] >= '0' && doc[end] <= '9') ++digits;
        }
        if (digits > max_digits) return true;
        i = end;  // continue sampling past this run
        previous = false;
      }
    }
  }
  if (doc.size() > kMaxNameLength) {
    // A string of more than 50000 bytes followed by ':' (a name; bytes >= characters).
    const char* const end = doc.data() + doc.size();
    const char* p = doc.data();
    while (p < end) {
      const char* open =
          static_cast<const char*>(std::memchr(p, '"', static_cast<size_t>(end - p)));
      if (open == nullptr) break;
      const char* close = open + 1;
      for (;;) {
        close = static_cast<const char*>(std::memchr(close, '"', static_cast<size_t>(end - close)));
        if (close == nullptr) return true;  // not well-formed: let the reference path decide
        size_t backslashes = 0;
        while (close - static_cast<std::ptrdiff_t>(backslashes) > open + 1 &&
               close[-1 - static_cast<std::ptrdiff_t>(backslashes)] == '\\') {
          ++backslashes;
        }
        if (backslashes % 2 == 0) break;
        ++close;
      }
      // A value's bytes are at least its characters.
      if (static_cast<size_t>(close - open - 1) > max_string) return true;
      if (static_cast<size_t>(close - open - 1) > kMaxNameLength) {
        const char* q = close + 1;
        while (q < end && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')) ++q;
        if (q < end && *q == ':') return true;
      }
      p = close + 1;
    }
  }
  return false;
}

}  // namespace

namespace {

// Two ASCII digits, or a value above 99 when either byte is not a digit.
inline unsigned two_digits(const char* p) {
  const unsigned a = static_cast<unsigned char>(p[0]) - unsigned{'0'};
  const unsigned b = static_cast<unsigned char>(p[1]) - unsigned{'0'};
  return (a > 9 || b > 9) ? 100 : a * 10 + b;
}

// Days from 1970-01-01 to a valid date of the years 1000-9999 (proleptic Gregorian).
int64_t epoch_day(unsigned year, unsigned month, unsigned day, bool leap) {
  static constexpr unsigned kDaysBefore[] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
  const unsigned before = year - 1;
  const unsigned days = 365 * before + before / 4 - before / 100 + before / 400 +
                        kDaysBefore[month - 1] + (leap && month > 2 ? 1 : 0) + day - 1;
  constexpr unsigned kEpoch = 719162;  // days from 0001-01-01 to 1970-01-01
  return static_cast<int64_t>(days) - kEpoch;
}

}  // namespace

// The usual machine-written timestamp "yyyy-MM-dd HH:mm:ss[.fraction][Z]" (or 'T'), which
// Spark's CAST parser reads as the obvious instant; anything else goes to the full parser.
// Consecutive values mostly share their date (event streams are in time order), so the day
// number of the last date is kept and only the time of day is parsed again.
bool FastPath::parse_canonical_timestamp(std::string_view s, int64_t offset_seconds,
                                         int64_t& micros) {
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') ||
      s[13] != ':' || s[16] != ':') {
    return false;
  }
  const char* p = s.data();
  uint64_t date_head;
  uint16_t date_tail;
  std::memcpy(&date_head, p, sizeof date_head);
  std::memcpy(&date_tail, p + 8, sizeof date_tail);
  if (date_head != last_date_head_ || date_tail != last_date_tail_) {
    const unsigned y1 = two_digits(p);
    const unsigned y2 = two_digits(p + 2);
    const unsigned month = two_digits(p + 5);
    const unsigned day = two_digits(p + 8);
    if (y1 < 10 || y1 > 99 || y2 > 99 || month < 1 || month > 12 || day < 1) return false;
    const unsigned year = y1 * 100 + y2;
    static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if (day > kDays[month - 1] + (month == 2 && leap ? 1 : 0)) return false;
    last_date_head_ = date_head;
    last_date_tail_ = date_tail;
    last_epoch_day_ = epoch_day(year, month, day, leap);
  }
  const unsigned hour = two_digits(p + 11);
  const unsigned minute = two_digits(p + 14);
  const unsigned second = two_digits(p + 17);
  if (hour > 23 || minute > 59 || second > 59) return false;
  size_t i = 19;
  int64_t fraction = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    int digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (digits < 6) fraction = fraction * 10 + (s[i] - '0');  // Spark truncates to micros
      ++digits;
      ++i;
    }
    if (digits == 0 || digits > 9) return false;
    for (int k = digits; k < 6; ++k) fraction *= 10;
  }
  if (i < s.size() && s[i] == 'Z') {
    offset_seconds = 0;
    ++i;
  }
  if (i != s.size()) return false;
  const int64_t second_of_day = hour * 3600 + minute * 60 + second;
  const int64_t seconds = last_epoch_day_ * 86400 + second_of_day - offset_seconds;
  micros = seconds * 1000000 + fraction;
  return true;
}

namespace {

bool names_unique(const Type& type) {
  for (size_t i = 0; i < type.children.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (type.children[i]->name == type.children[j]->name) return false;
    }
    if (!names_unique(*type.children[i])) return false;
  }
  return true;
}

}  // namespace

FastPath::FastPath(const Type& row_type, const Options& options)
    : row_type_(row_type),
      options_(options),
      root_(make_node(row_type)),
      parser_(simdjson::SIMDJSON_MAXSIZE_BYTES),
      unique_names_(names_unique(row_type)) {
  if (parser_.allocate(1 << 16, kFastMaxDepth) != simdjson::SUCCESS) enabled_ = false;
  // Options that change Spark's reading of well-formed JSON in ways this path does not model.
  if (!options.allow_non_numeric_numbers) enabled_ = false;
  std::string error;
  timestamp_pattern_ = compile_json_pattern(options.timestamp_format, false, error);
  bad_timestamp_pattern_ = !error.empty();
  date_pattern_ = compile_json_pattern(options.date_format, false, error);
  bad_date_pattern_ = !error.empty();
  // The timestamp values scalar() reads with parse_canonical_timestamp first.
  const bool canonical_timestamps =
      !timestamp_pattern_ && !bad_timestamp_pattern_ && options.time_zone.is_fixed();
  for (size_t i = 0; i < row_type.children.size(); ++i) {
    const Type& child = *row_type.children[i];
    ScanField field;
    field.name = child.name.data();
    field.length = static_cast<uint32_t>(std::min<size_t>(child.name.size(), UINT32_MAX));
    const size_t head = std::min<size_t>(child.name.size(), 8);
    std::memcpy(&field.head, child.name.data(), head);
    field.head_mask = head == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * head)) - 1;
    field.in_place = unique_names_ && field.length == child.name.size() &&
                     static_cast<int>(i) != options.corrupt_column &&
                     std::all_of(child.name.begin(), child.name.end(), [](char c) {
                       const auto u = static_cast<unsigned char>(c);
                       return u >= 0x20 && u < 0x80 && c != '"' && c != '\\';
                     });
    if (child.kind == Kind::Int64) {
      field.write = ScanWrite::Int64;
    } else if (child.kind == Kind::Utf8) {
      field.write = ScanWrite::Utf8;
    } else if (child.kind == Kind::TimestampUs && !child.is_ntz() && canonical_timestamps) {
      field.write = ScanWrite::CanonicalTimestamp;
    }
    scan_fields_.push_back(field);
  }
  scan_fields_.emplace_back();  // past the last field: matches no key
}

bool FastPath::within_jackson_limits(std::string_view doc) const {
  const size_t max_digits = static_cast<size_t>(options_.max_number_length);
  return doc.size() <= std::min<size_t>(max_digits, 50000) ||
         !may_exceed_jackson_limits(doc, max_digits,
                                    static_cast<size_t>(options_.max_string_length));
}

template <typename Value>
bool FastPath::scalar(element_type et, const Value& element, const Type& type, ColumnBuilder& out) {
  switch (type.kind) {
    case Kind::Bool:
      if (et != element_type::BOOL) return false;
      out.append_bool(bool(element));
      return true;
    case Kind::Int8:
    case Kind::Int16:
    case Kind::Int32:
    case Kind::Int64: {
      if (et != element_type::INT64) return false;
      const int64_t v = int64_t(element);
      switch (type.kind) {
        case Kind::Int8:
          if (v < -128 || v > 255) return false;
          out.append_fixed<int8_t>(static_cast<int8_t>(static_cast<uint8_t>(v & 0xFF)));
          return true;
        case Kind::Int16:
          if (v < -32768 || v > 32767) return false;
          out.append_fixed<int16_t>(static_cast<int16_t>(v));
          return true;
        case Kind::Int32:
          if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
            return false;
          }
          out.append_fixed<int32_t>(static_cast<int32_t>(v));
          return true;
        default:
          out.append_fixed<int64_t>(v);
          return true;
      }
    }
    case Kind::Float32:
      // A decimal text must be rounded to float once, from its digits: the reference path does.
      if (et != element_type::INT64) return false;
      out.append_fixed<float>(static_cast<float>(int64_t(element)));
      return true;
    case Kind::Float64:
      if (et == element_type::INT64) {
        out.append_fixed<double>(static_cast<double>(int64_t(element)));
        return true;
      }
      if (et == element_type::DOUBLE) {
        const double d = double(element);
        if (d == 0 && std::signbit(d)) return false;  // "-0" and "-0.0" differ in Jackson
        out.append_fixed<double>(d);
        return true;
      }
      return false;
    case Kind::Decimal128: {
      if (et != element_type::INT64) return false;
      int128 unscaled = 0;
      if (!pow10_fits(type.scale, type.precision, int64_t(element), unscaled)) return false;
      out.append_fixed<int128>(unscaled);
      return true;
    }
    case Kind::Utf8:
      if (et == element_type::STRING) {
        out.append_string(std::string_view(element));
        return true;
      }
      // Type drift (a field that is a number in some records and text in others, inferred
      // STRING): Spark writes an integer's canonical text (from_json re-writes the value,
      // read.json copies the source text, which for JSON integers is the same but for "-0")
      // and a literal's text.
      if (et == element_type::INT64) {
        const int64_t v = int64_t(element);
        if (v == 0 && options_.exact_string_text) return false;
        char text[24];
        const auto end = std::to_chars(text, text + sizeof text, v).ptr;
        out.append_string(std::string_view(text, static_cast<size_t>(end - text)));
        return true;
      }
      if (et == element_type::BOOL) {
        out.append_string(bool(element) ? std::string_view("true") : std::string_view("false"));
        return true;
      }
      return false;
    case Kind::Binary:  // refused when the decoder is built
      return false;
    case Kind::Date32: {
      if (et != element_type::STRING || bad_date_pattern_) return false;
      const std::string_view s(element);
      int32_t days = 0;
      const bool ok =
          date_pattern_ ? date_pattern_->parse_date(s, days) : json_default_parse_date(s, days);
      if (!ok) return false;
      out.append_fixed<int32_t>(days);
      return true;
    }
    case Kind::TimestampUs: {
      if (type.is_ntz()) {
        if (et != element_type::STRING || !options_.timestamp_ntz_format.empty()) return false;
        int64_t micros = 0;
        if (!json_default_parse_timestamp_ntz(std::string_view(element), micros)) return false;
        out.append_fixed<int64_t>(micros);
        return true;
      }
      if (et == element_type::INT64) {
        out.append_fixed<int64_t>(json_integer_seconds_to_micros(int64_t(element)));
        return true;
      }
      if (et != element_type::STRING || bad_timestamp_pattern_) return false;
      const std::string_view s(element);
      int64_t micros = 0;
      const bool ok = timestamp_pattern_
                          ? timestamp_pattern_->parse_timestamp(s, options_.time_zone, micros)
                          : ((options_.time_zone.is_fixed() &&
                              parse_canonical_timestamp(
                                  s, options_.time_zone.fixed_offset_seconds(), micros)) ||
                             json_default_parse_timestamp(s, options_.time_zone, micros));
      if (!ok) return false;
      out.append_fixed<int64_t>(micros);
      return true;
    }
    case Kind::List:
    case Kind::Struct:
    case Kind::Map:
      return false;
  }
  return false;
}

// The tree walk (fast_path_tree.cpp) writes tape scalars through it.
template bool FastPath::scalar<FastPath::TapeScalar>(element_type, const TapeScalar&, const Type&,
                                                     ColumnBuilder&);

bool FastPath::decode(std::string_view doc, size_t readable, ColumnBuilder& row) {
  if (!enabled_) return false;
  if (!within_jackson_limits(doc)) return false;
  const int64_t slot = row.length();
  if (scan_skips_ > 0) {
    --scan_skips_;
  } else {
    if (scan(doc, readable, row)) return true;
    // scan() writes top-level scalar columns only: cut back those (a full truncate would walk
    // every builder of a wide nested schema, for every nested document).
    for (size_t i = 0; i < row.num_children(); ++i) {
      if (row.child(i).length() > slot) row.child(i).truncate(slot);
    }
  }
  simdjson::dom::element root;
  const bool padded = readable >= doc.size() + simdjson::SIMDJSON_PADDING;
  if (parser_.parse(doc.data(), doc.size(), !padded).get(root) != simdjson::SUCCESS) return false;
  const Tape tape{parser_.doc.tape.get(), parser_.doc.string_buf.get()};
  // The root value follows the root word (index 0).
  if (tape.type(1) != '{') return false;
  if (root_.out != &row) bind(root_, row);
  return object(tape, 1, root_, true);
}

namespace {

inline bool json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

inline const char* skip_space(const char* p, const char* end) {
  while (p < end && static_cast<unsigned char>(*p) <= ' ' && json_space(*p)) ++p;
  return p;
}

inline bool digit(char c) { return c >= '0' && c <= '9'; }

// The closing quote of a string whose content starts at p, or nullptr when an escape, a control
// character or a non-ASCII byte comes first (the DOM path unescapes and validates those) or
// the document ends first. Bytes up to readable_end may be loaded (padding), none used past end.
inline const char* plain_string_end(const char* p, const char* end, const char* readable_end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i space = _mm_set1_epi8(0x20);
  while (readable_end - p >= 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i quotes = _mm_cmpeq_epi8(bytes, quote);
    // Signed compare: bytes >= 0x80 are negative, so below ' ' as well.
    const __m128i stop = _mm_or_si128(_mm_or_si128(quotes, _mm_cmpeq_epi8(bytes, backslash)),
                                      _mm_cmplt_epi8(bytes, space));
    const auto hits = static_cast<unsigned>(_mm_movemask_epi8(stop));
    if (hits != 0) {
      const unsigned first = hits & (0u - hits);
      if ((first & static_cast<unsigned>(_mm_movemask_epi8(quotes))) == 0) return nullptr;
      const char* const q = p + __builtin_ctz(first);
      return q < end ? q : nullptr;
    }
    p += 16;
    if (p >= end) return nullptr;
  }
#endif
  for (; p < end; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    if (c == '"') return p;
    if (c == '\\' || c < 0x20 || c >= 0x80) return nullptr;
  }
  return nullptr;
}

// A scalar read by scan(), with the conversions scalar() applies to a DOM element.
struct Token {
  element_type type = element_type::NULL_VALUE;
  bool boolean = false;
  int64_t integer = 0;
  std::string_view text;

  explicit operator bool() const { return boolean; }
  explicit operator int64_t() const { return integer; }
  explicit operator double() const { return static_cast<double>(integer); }  // never DOUBLE
  explicit operator std::string_view() const { return text; }
};

// An integer of at most 18 digits (always an int64, as simdjson types it) at p; the end of
// its text, or nullptr for anything else (fractions, exponents, leading zeros, longer runs).
inline const char* plain_integer(const char* p, const char* end, const char* readable_end,
                                 int64_t& out) {
  const bool negative = *p == '-';
  if (negative) ++p;
  const char* const first = p;
  uint64_t v = 0;
  if (readable_end - p >= 8) {
    // Up to eight digits at once: the leading run of digits of an 8-byte load, converted by
    // multiplying pairs, then quads (the bytes after it, past end too, are masked off).
    uint64_t word;
    std::memcpy(&word, p, 8);
    const uint64_t values = word - 0x3030303030303030;
    const uint64_t not_digit = (((word & 0xF0F0F0F0F0F0F0F0) ^ 0x3030303030303030) |
                                ((values + 0x7676767676767676) & 0x8080808080808080));
    const auto run =
        std::min<ptrdiff_t>(not_digit == 0 ? 8 : __builtin_ctzll(not_digit) / 8, end - p);
    if (run > 0) {
      uint64_t digits = values << (64 - 8 * run);
      digits = digits * 10 + (digits >> 8);
      digits = (((digits & 0x000000FF000000FF) * 0x000F424000000064) +
                (((digits >> 16) & 0x000000FF000000FF) * 0x0000271000000001)) >>
               32;
      v = digits;
      p += run;
    }
  }
  while (p < end && digit(*p)) {
    v = v * 10 + static_cast<uint64_t>(*p - '0');
    ++p;
  }
  const auto digits = p - first;
  if (digits == 0 || digits > 18 || (*first == '0' && digits > 1)) return nullptr;
  if (p < end && (*p == '.' || *p == 'e' || *p == 'E')) return nullptr;
  out = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  return p;
}

}  // namespace

bool FastPath::scan(std::string_view doc, size_t readable, ColumnBuilder& row) {
  const char* p = doc.data();
  const char* const end = p + doc.size();
  const char* const readable_end = p + readable;
  const Type& type = row_type_;
  const int64_t slot = row.length();
  size_t guess = 0;
  p = skip_space(p, end);
  if (p == end || *p != '{') return false;
  p = skip_space(p + 1, end);
  if (p != end && *p == '}') {
    ++p;
  } else {
    for (;;) {
      if (p == end || *p != '"') return false;
      int index = -1;
      const char* key_end = nullptr;
      // The field expected next (guess <= n; entry n matches nothing).
      const ScanField& expected = scan_fields_[guess];
      if (expected.in_place && readable_end - p > 8 &&
          static_cast<size_t>(end - p - 1) > expected.length && p[1 + expected.length] == '"') {
        uint64_t word;
        std::memcpy(&word, p + 1, sizeof word);
        if (((word ^ expected.head) & expected.head_mask) == 0 &&
            (expected.length <= 8 ||
             arrow::equal_bytes(expected.name + 8, p + 9, expected.length - 8))) {
          index = static_cast<int>(guess);
          key_end = p + 1 + expected.length;
        }
      }
      if (key_end == nullptr) {
        key_end = plain_string_end(p + 1, end, readable_end);
        if (key_end == nullptr) return false;
        index = field_index(type, std::string_view(p + 1, static_cast<size_t>(key_end - p - 1)),
                            guess, true);
      }
      p = skip_space(key_end + 1, end);
      if (p == end || *p != ':') return false;
      p = skip_space(p + 1, end);
      if (p == end) return false;
      Token token;
      switch (*p) {
        case '"': {
          const char* const close = plain_string_end(p + 1, end, readable_end);
          if (close == nullptr) return false;
          token.type = element_type::STRING;
          token.text = std::string_view(p + 1, static_cast<size_t>(close - p - 1));
          p = close + 1;
          break;
        }
        case 't':
          if (end - p < 4 || std::memcmp(p, "true", 4) != 0) return false;
          token.type = element_type::BOOL;
          token.boolean = true;
          p += 4;
          break;
        case 'f':
          if (end - p < 5 || std::memcmp(p, "false", 5) != 0) return false;
          token.type = element_type::BOOL;
          p += 5;
          break;
        case 'n':
          if (end - p < 4 || std::memcmp(p, "null", 4) != 0) return false;
          p += 4;
          break;
        default:
          if (*p != '-' && !digit(*p)) {
            // Objects and arrays: the DOM path (and the next documents go there at once).
            if (*p == '{' || *p == '[') scan_skips_ = kScanSkips;
            return false;
          }
          p = plain_integer(p, end, readable_end, token.integer);
          if (p == nullptr) return false;
          token.type = element_type::INT64;
          break;
      }
      if (index >= 0) {
        guess = static_cast<size_t>(index) + 1;
        ColumnBuilder& child = row.child(static_cast<size_t>(index));
        if (child.length() > slot) return false;  // a repeated key
        child.pad_to(slot);
        // The common pairs written here, exactly as scalar() writes them.
        const ScanWrite write = scan_fields_[static_cast<size_t>(index)].write;
        if (token.type == element_type::NULL_VALUE) {
          child.append_null();
        } else if (write == ScanWrite::Int64 && token.type == element_type::INT64) {
          child.append_fixed<int64_t>(token.integer);
        } else if (write == ScanWrite::Utf8 && token.type == element_type::STRING) {
          child.append_string(token.text);
        } else if (write == ScanWrite::CanonicalTimestamp && token.type == element_type::STRING) {
          int64_t micros = 0;
          if (!parse_canonical_timestamp(token.text, options_.time_zone.fixed_offset_seconds(),
                                         micros) &&
              !json_default_parse_timestamp(token.text, options_.time_zone, micros)) {
            return false;
          }
          child.append_fixed<int64_t>(micros);
        } else if (!scalar(token.type, token, *type.children[static_cast<size_t>(index)], child)) {
          return false;
        }
      }
      p = skip_space(p, end);
      if (p == end) return false;
      if (*p == '}') {
        ++p;
        break;
      }
      if (*p != ',') return false;
      p = skip_space(p + 1, end);
    }
  }
  if (skip_space(p, end) != end) return false;
  // A missing field stays behind (ColumnBuilder::pad_to).
  row.finish_struct();
  return true;
}

}  // namespace sliceflow::json
