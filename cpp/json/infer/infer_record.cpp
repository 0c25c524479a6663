// inferField per record and compatibleRootType into one thread's schema (see infer_record.h).
#include "json/infer/infer_record.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "json/errors.h"
#include "json/infer/infer.h"
#include "json/java_text.h"
#include "json/numbers.h"

namespace sliceflow::json {
namespace {

constexpr size_t kFastMaxDepth = 256;
// Longer records go to the Reader, which applies Jackson's limits on names (50000
// characters), numbers (maxNumberLength digits) and strings exactly.
constexpr size_t kFastMaxBytes = 1000;
constexpr int kMaxPrecision = 38;

// java.math.BigDecimal(String): its precision and scale, or false when Java refuses the text.
bool big_decimal_shape(std::string_view s, int& precision, int64_t& scale) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  int64_t significant = 0;
  bool leading = true;
  int64_t digits = 0;
  int64_t fraction = 0;
  bool in_fraction = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c >= '0' && c <= '9') {
      ++digits;
      if (in_fraction) ++fraction;
      if (c != '0') leading = false;
      if (!leading) ++significant;
    } else if (c == '.' && !in_fraction) {
      in_fraction = true;
    } else {
      break;
    }
  }
  if (digits == 0) return false;
  int64_t exponent = 0;
  if (i < s.size()) {
    if (s[i] != 'e' && s[i] != 'E') return false;
    ++i;
    bool negative = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
    if (i == s.size()) return false;
    for (; i < s.size(); ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      exponent = exponent * 10 + (s[i] - '0');
      if (exponent > std::numeric_limits<int32_t>::max()) return false;
    }
    if (negative) exponent = -exponent;
  }
  scale = fraction - exponent;
  if (scale > std::numeric_limits<int32_t>::max() || scale < std::numeric_limits<int32_t>::min()) {
    return false;
  }
  precision = significant == 0 ? 1 : static_cast<int>(std::min<int64_t>(significant, 1 << 30));
  return true;
}

int decimal_digits(uint64_t v) {
  int n = 1;
  while (v >= 10) {
    v /= 10;
    ++n;
  }
  return n;
}

// The value of a DOM element whose type was checked (get() cannot fail then).
simdjson::dom::array array_of(simdjson::dom::element e) {
  simdjson::dom::array out;
  if (e.get_array().get(out) != simdjson::SUCCESS) return {};
  return out;
}

simdjson::dom::object object_of(simdjson::dom::element e) {
  simdjson::dom::object out;
  if (e.get_object().get(out) != simdjson::SUCCESS) return {};
  return out;
}

uint64_t uint64_of(simdjson::dom::element e) {
  uint64_t out = 0;
  if (e.get_uint64().get(out) != simdjson::SUCCESS) return 0;
  return out;
}

std::string_view string_of(simdjson::dom::element e) {
  std::string_view out;
  if (e.get_string().get(out) != simdjson::SUCCESS) return {};
  return out;
}

bool blank(std::string_view doc) {
  for (const char c : doc) {
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return false;
  }
  return true;
}

template <typename Word>
inline bool same_word(const char* x, const char* y) {
  Word u;
  Word v;
  std::memcpy(&u, x, sizeof(Word));
  std::memcpy(&v, y, sizeof(Word));
  return u == v;
}

// a == b for a field name: names are short, so compared in line with a few loads that may
// overlap (the first and the last 4 or 8 bytes) rather than through a call to memcmp or a
// loop over bytes.
inline bool same_key(const std::string& a, std::string_view b) {
  const size_t n = b.size();
  if (a.size() != n) return false;
  const char* x = a.data();
  const char* y = b.data();
  if (n >= 8) {
    for (size_t i = 0; i + 8 < n; i += 8) {
      if (!same_word<uint64_t>(x + i, y + i)) return false;
    }
    return same_word<uint64_t>(x + n - 8, y + n - 8);
  }
  if (n >= 4) return same_word<uint32_t>(x, y) && same_word<uint32_t>(x + n - 4, y + n - 4);
  // 0-3 bytes: the first, middle and last (the same byte twice or thrice when n < 3).
  return n == 0 || (x[0] == y[0] && x[n / 2] == y[n / 2] && x[n - 1] == y[n - 1]);
}

std::string upper(std::string s) {
  for (char& c : s) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return s;
}

}  // namespace

RecordInference::RecordInference(const InferOptions& options)
    : options_(options), parser_(kFastMaxBytes + 64), reader_(options.json) {
  if (parser_.allocate(kFastMaxBytes + 64, kFastMaxDepth) != simdjson::SUCCESS) {
    simdjson_ok_ = false;
  }
  seen_.resize(kFastMaxDepth + 2);
  guesses_.resize(kFastMaxDepth + 2);
  std::string error;
  timestamp_pattern_ = compile_json_pattern(options.json.timestamp_format, false, error);
  bad_timestamp_pattern_ = !error.empty();
  error.clear();
  timestamp_ntz_pattern_ = compile_json_pattern(options.json.timestamp_ntz_format, true, error);
  bad_timestamp_ntz_pattern_ = !error.empty();
}

void RecordInference::add(std::string_view doc, size_t readable, int64_t line) {
  if (blank(doc)) return;  // no token: NullType, which compatibleRootType discards
  if (simdjson_ok_ && doc.size() <= kFastMaxBytes && add_fast(doc, readable, line)) return;
  add_slow(doc, line);
}

void RecordInference::add_parsed(simdjson::dom::element root, std::string_view text, int64_t line) {
  // The same choice as add() makes for the line: long lines go to the Reader.
  if (text.size() <= kFastMaxBytes && add_element(root, line)) return;
  add_slow(text, line);
}

void RecordInference::add_slow(std::string_view doc, int64_t line) {
  ++slow_records_;
  const size_t tail = decode_utf8_like_java(doc, units_);
  reader_.reset(units_.data(), units_.size(), tail);
  InferredType record;
  try {
    const Token token = reader_.next_token();
    record = type_of(reader_, token);
  } catch (const JsonError& e) {
    malformed(e.what(), line);
    return;
  }
  merge_root(record, line);
}

bool RecordInference::add_fast(std::string_view doc, size_t readable, int64_t line) {
  simdjson::dom::element root;
  const bool padded = readable >= doc.size() + simdjson::SIMDJSON_PADDING;
  if (parser_.parse(doc.data(), doc.size(), !padded).get(root) != simdjson::SUCCESS) return false;
  return add_element(root, line);
}

bool RecordInference::add_element(simdjson::dom::element root, int64_t line) {
  if (root.type() == simdjson::dom::element_type::OBJECT && fits(root_, root, 0)) return true;
  InferredType record;
  if (!type_of(root, record)) return false;
  ++slow_records_;
  merge_root(record, line);
  return true;
}

bool RecordInference::fits_scalar(const InferredType& acc, const Scalar& rec) {
  if (rec.kind == InferredKind::Null || acc.kind == InferredKind::String) return true;
  switch (acc.kind) {
    case InferredKind::Boolean:
    case InferredKind::Long:
    case InferredKind::TimestampNtz:
      return rec.kind == acc.kind;
    case InferredKind::Double:
      return rec.kind == InferredKind::Double || rec.kind == InferredKind::Long ||
             rec.kind == InferredKind::Decimal;
    case InferredKind::Decimal:
      if (rec.kind == InferredKind::Long) return acc.precision - acc.scale >= 20;
      return rec.kind == InferredKind::Decimal && rec.scale <= acc.scale &&
             rec.precision - rec.scale <= acc.precision - acc.scale;
    case InferredKind::Timestamp:
      return rec.kind == InferredKind::Timestamp || rec.kind == InferredKind::TimestampNtz;
    default:
      return false;
  }
}

inline bool RecordInference::fits(const InferredType& acc, simdjson::dom::element e, size_t depth) {
  using simdjson::dom::element_type;
  const element_type et = e.type();
  if (et == element_type::OBJECT || et == element_type::ARRAY) return fits_nested(acc, e, depth);
  if (et == element_type::NULL_VALUE) return true;
  if (acc.kind == InferredKind::String) {
    // STRING absorbs every type, but Spark still types the whole value first: with
    // prefersDecimal a fractional number may fail the query (a negative scale), so such a
    // value goes to the path that types it.
    return !options_.prefers_decimal || options_.primitives_as_string || et != element_type::DOUBLE;
  }
  Scalar rec;
  if (!scalar_of(e, rec)) return false;
  return fits_scalar(acc, rec);
}

bool RecordInference::fits_nested(const InferredType& acc, simdjson::dom::element e, size_t depth) {
  using simdjson::dom::element_type;
  if (acc.kind == InferredKind::String) {
    return !options_.prefers_decimal || options_.primitives_as_string || !has_double(e);
  }
  if (e.type() == element_type::ARRAY) {
    if (acc.kind != InferredKind::Array) return false;
    for (auto item : array_of(e)) {
      if (!fits(acc.children[0], item, depth + 1)) return false;
    }
    return true;
  }
  if (acc.kind != InferredKind::Struct || depth + 1 >= seen_.size()) return false;
  std::vector<uint64_t>& seen = seen_[depth];
  std::vector<size_t>& guesses = guesses_[depth];
  if (seen.size() < acc.names.size()) seen.resize(acc.names.size(), 0);
  const uint64_t stamp = ++stamp_;
  size_t position = 0;
  for (auto field : object_of(e)) {
    const std::string_view key = field.key;
    if (guesses.size() <= position) guesses.resize(position + 1, 0);
    size_t index = guesses[position];
    if (index >= acc.names.size() || !same_key(acc.names[index], key)) {
      const auto it = std::lower_bound(
          acc.names.begin(), acc.names.end(), key,
          [](const std::string& a, std::string_view b) { return java_compare(a, b) < 0; });
      if (it == acc.names.end() || *it != key) return false;
      index = static_cast<size_t>(it - acc.names.begin());
      guesses[position] = index;
    }
    ++position;
    if (seen[index] == stamp) return false;  // a repeated name adds a field
    seen[index] = stamp;
    if (!fits(acc.children[index], field.value, depth + 1)) return false;
  }
  return true;
}

bool RecordInference::has_double(simdjson::dom::element e) {
  using simdjson::dom::element_type;
  switch (e.type()) {
    case element_type::DOUBLE:
      return true;
    case element_type::ARRAY:
      for (auto item : array_of(e)) {
        if (has_double(item)) return true;
      }
      return false;
    case element_type::OBJECT:
      for (auto field : object_of(e)) {
        if (has_double(field.value)) return true;
      }
      return false;
    default:
      return false;
  }
}

bool RecordInference::scalar_of(simdjson::dom::element e, Scalar& out) const {
  using simdjson::dom::element_type;
  const bool as_string = options_.primitives_as_string;
  switch (e.type()) {
    case element_type::NULL_VALUE:
      out.kind = InferredKind::Null;
      return true;
    case element_type::BOOL:
      out.kind = as_string ? InferredKind::String : InferredKind::Boolean;
      return true;
    case element_type::INT64:
      out.kind = as_string ? InferredKind::String : InferredKind::Long;
      return true;
    case element_type::UINT64:
      // Beyond BIGINT: Jackson's BIG_INTEGER, DECIMAL(digits, 0).
      if (as_string) {
        out.kind = InferredKind::String;
      } else {
        out.kind = InferredKind::Decimal;
        out.precision = decimal_digits(uint64_of(e));
        out.scale = 0;
      }
      return true;
    case element_type::DOUBLE: {
      if (as_string) {
        out.kind = InferredKind::String;
        return true;
      }
      double v = 0;
      if (e.get_double().get(v) != simdjson::SUCCESS) return false;
      // The number's text decides (prefersDecimal), or "-0" may be Jackson's integer zero.
      if (options_.prefers_decimal || (v == 0 && std::signbit(v))) return false;
      out.kind = InferredKind::Double;
      return true;
    }
    case element_type::STRING:
      out = string_scalar(string_of(e));
      return true;
    default:
      return false;  // arrays and objects are not scalars
  }
}

bool RecordInference::type_of(simdjson::dom::element e, InferredType& out) {
  using simdjson::dom::element_type;
  switch (e.type()) {
    case element_type::ARRAY: {
      out = InferredType::scalar(InferredKind::Array);
      InferredType element = InferredType::scalar(InferredKind::Null);
      for (auto item : array_of(e)) {
        InferredType t;
        if (!type_of(item, t)) return false;
        merge_compatible(element, t, options_.case_sensitive);
      }
      out.children.push_back(std::move(element));
      return true;
    }
    case element_type::OBJECT: {
      out = InferredType::scalar(InferredKind::Struct);
      for (auto field : object_of(e)) {
        InferredType t;
        if (!type_of(field.value, t)) return false;
        out.names.emplace_back(field.key);
        out.children.push_back(std::move(t));
      }
      sort_fields(out);
      return true;
    }
    default: {
      Scalar scalar;
      if (!scalar_of(e, scalar)) return false;
      out = scalar.kind == InferredKind::Decimal
                ? InferredType::decimal(scalar.precision, scalar.scale)
                : InferredType::scalar(scalar.kind);
      return true;
    }
  }
}

InferredType RecordInference::type_of(Reader& reader, Token token) {
  const bool as_string = options_.primitives_as_string;
  switch (token) {
    case Token::None:
    case Token::Null:
      return InferredType::scalar(InferredKind::Null);
    case Token::FieldName:
      return type_of(reader, reader.next_token());
    case Token::String:
      return string_type(reader.text());
    case Token::StartObject: {
      InferredType out = InferredType::scalar(InferredKind::Struct);
      for (Token t = reader.next_token(); t != Token::None && t != Token::EndObject;
           t = reader.next_token()) {
        const std::string* name = reader.current_name();
        std::string key = name != nullptr ? *name : std::string();
        InferredType child = type_of(reader, t);
        out.names.push_back(std::move(key));
        out.children.push_back(std::move(child));
      }
      sort_fields(out);
      return out;
    }
    case Token::StartArray: {
      InferredType out = InferredType::scalar(InferredKind::Array);
      InferredType element = InferredType::scalar(InferredKind::Null);
      for (Token t = reader.next_token(); t != Token::None && t != Token::EndArray;
           t = reader.next_token()) {
        merge_compatible(element, type_of(reader, t), options_.case_sensitive);
      }
      out.children.push_back(std::move(element));
      return out;
    }
    case Token::NumberInt: {
      if (as_string) return InferredType::scalar(InferredKind::String);
      const std::string_view text = reader.text();
      int64_t value = 0;
      if (parse_int64(text, value)) return InferredType::scalar(InferredKind::Long);
      const int digits = static_cast<int>(text.size()) - (text[0] == '-' || text[0] == '+');
      if (digits <= kMaxPrecision) return InferredType::decimal(digits, 0);
      return InferredType::scalar(InferredKind::Double);
    }
    case Token::NumberFloat:
      if (as_string) return InferredType::scalar(InferredKind::String);
      if (!options_.prefers_decimal) return InferredType::scalar(InferredKind::Double);
      // getDecimalValue of NaN / Infinity fails the record.
      if (reader.is_non_numeric()) throw SyntaxError("non-numeric value has no decimal type");
      return float_type(reader.text());
    case Token::True:
    case Token::False:
      return InferredType::scalar(as_string ? InferredKind::String : InferredKind::Boolean);
    default:
      throw SyntaxError("unexpected token");
  }
}

InferredType RecordInference::float_type(std::string_view text) const {
  int precision = 0;
  int64_t scale = 0;
  if (!big_decimal_shape(text, precision, scale)) {
    throw SyntaxError("number text is not a decimal");
  }
  const int64_t width = std::max<int64_t>(precision, scale);
  if (width > kMaxPrecision) return InferredType::scalar(InferredKind::Double);
  if (scale < 0) {
    // DecimalType(max(precision, scale), scale) fails the query for a negative scale.
    throw std::invalid_argument("[NEGATIVE_SCALE_DISALLOWED] Negative scale is not allowed: '" +
                                std::to_string(scale) + "' (the JSON number " + std::string(text) +
                                " with prefersDecimal=true; Spark fails the query the same way)");
  }
  return InferredType::decimal(static_cast<int>(width), static_cast<int>(scale));
}

InferredType RecordInference::string_type(std::string_view text) const {
  const Scalar scalar = string_scalar(text);
  return scalar.kind == InferredKind::Decimal
             ? InferredType::decimal(scalar.precision, scalar.scale)
             : InferredType::scalar(scalar.kind);
}

RecordInference::Scalar RecordInference::string_scalar(std::string_view text) const {
  // Empty strings count as null until every record is merged.
  if (text.empty()) return {InferredKind::Null};
  // Only prefersDecimal and inferTimestamp look into a string's text.
  if (!options_.prefers_decimal && !options_.infer_timestamp) return {InferredKind::String};
  if (options_.prefers_decimal) {
    std::string cleaned;
    cleaned.reserve(text.size());
    for (const char c : text) {
      if (c != ',') cleaned.push_back(c);
    }
    int precision = 0;
    int64_t scale = 0;
    // DecimalType(precision, scale) refuses a negative scale, a scale above the precision
    // and more than 38 digits: then the string stays a string.
    if (big_decimal_shape(cleaned, precision, scale) && scale >= 0 && scale <= precision &&
        precision <= kMaxPrecision) {
      return {InferredKind::Decimal, precision, static_cast<int>(scale)};
    }
  }
  if (options_.infer_timestamp) {
    int64_t micros = 0;
    if (options_.timestamp_ntz_default && !bad_timestamp_ntz_pattern_) {
      const bool ntz = timestamp_ntz_pattern_
                           ? timestamp_ntz_pattern_->parse_timestamp_ntz(text, false, micros)
                           : string_to_timestamp_ntz(text, false, micros);
      if (ntz) return {InferredKind::TimestampNtz};
    }
    if (!bad_timestamp_pattern_) {
      const bool ltz =
          timestamp_pattern_
              ? timestamp_pattern_->parse_timestamp(text, options_.json.time_zone, micros)
              : cast_string_to_timestamp(text, options_.json.time_zone, micros);
      if (ltz) return {InferredKind::Timestamp};
    }
  }
  return {InferredKind::String};
}

void RecordInference::merge_root(const InferredType& record, int64_t line) {
  switch (record.kind) {
    case InferredKind::Array:
      merge_root(record.children[0], line);  // a top-level array holds records
      return;
    case InferredKind::Null:
      return;
    case InferredKind::Struct:
      merge_compatible(root_, record, options_.case_sensitive);
      return;
    default:
      switch (options_.mode) {
        case InferMode::Permissive:
          add_corrupt_field(root_, options_.corrupt_column);
          return;
        case InferMode::DropMalformed:
          return;
        case InferMode::FailFast:
          throw MalformedRecord(
              "[INVALID_JSON_RECORD_TYPE] Detected an invalid type of a JSON record while "
              "inferring a common schema in the mode FAILFAST. Expected a STRUCT type, but "
              "found \"" +
              upper(simple_string(record)) + "\" (line " + std::to_string(line) + ")");
      }
  }
}

void RecordInference::malformed(const std::string& reason, int64_t line) {
  switch (options_.mode) {
    case InferMode::Permissive: {
      InferredType record = InferredType::scalar(InferredKind::Struct);
      record.names.push_back(options_.corrupt_column);
      record.children.push_back(InferredType::scalar(InferredKind::String));
      merge_compatible(root_, record, options_.case_sensitive);
      return;
    }
    case InferMode::DropMalformed:
      return;
    case InferMode::FailFast:
      throw MalformedRecord(
          "[MALFORMED_RECORD_IN_PARSING] Malformed records are detected in schema inference "
          "(line " +
          std::to_string(line) + ": " + reason +
          "). Parse Mode: FAILFAST. To process malformed records as null result, try setting "
          "the option 'mode' as 'PERMISSIVE'.");
  }
}

}  // namespace sliceflow::json
