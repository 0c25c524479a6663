// Spark's JacksonParser, token for token (see spark_converter.h); the Java-text helpers it
// uses are java_text.h's.
#include "json/spark_converter.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "json/errors.h"
#include "json/java_text.h"
#include "json/numbers.h"
#include "simdjson.h"

namespace sliceflow::json {

using arrow::ColumnBuilder;
using arrow::Kind;
using arrow::Type;

namespace {

const char* token_name(Token token) {
  switch (token) {
    case Token::StartObject:
      return "START_OBJECT";
    case Token::EndObject:
      return "END_OBJECT";
    case Token::StartArray:
      return "START_ARRAY";
    case Token::EndArray:
      return "END_ARRAY";
    case Token::FieldName:
      return "FIELD_NAME";
    case Token::String:
      return "VALUE_STRING";
    case Token::NumberInt:
      return "VALUE_NUMBER_INT";
    case Token::NumberFloat:
      return "VALUE_NUMBER_FLOAT";
    case Token::True:
      return "VALUE_TRUE";
    case Token::False:
      return "VALUE_FALSE";
    case Token::Null:
      return "VALUE_NULL";
    default:
      return "END_OF_INPUT";
  }
}

const char* type_name(const Type& type) {
  switch (type.kind) {
    case Kind::Bool:
      return "BOOLEAN";
    case Kind::Int8:
      return "TINYINT";
    case Kind::Int16:
      return "SMALLINT";
    case Kind::Int32:
      return "INT";
    case Kind::Int64:
      return "BIGINT";
    case Kind::Float32:
      return "FLOAT";
    case Kind::Float64:
      return "DOUBLE";
    case Kind::Decimal128:
      return "DECIMAL";
    case Kind::Utf8:
      return "STRING";
    case Kind::Binary:
      return "BINARY";
    case Kind::Date32:
      return "DATE";
    case Kind::TimestampUs:
      return type.is_ntz() ? "TIMESTAMP_NTZ" : "TIMESTAMP";
    case Kind::List:
      return "ARRAY";
    case Kind::Struct:
      return "STRUCT";
    case Kind::Map:
      return "MAP";
  }
  return "?";
}

// The integer value of a VALUE_NUMBER_INT token within [lo, hi], as Jackson's getXxxValue.
int64_t integer_in(Reader& reader, int64_t lo, int64_t hi, const char* what) {
  int64_t v = 0;
  if (!parse_int64(reader.text(), v) || v < lo || v > hi) {
    throw ConversionError("Numeric value (" + std::string(reader.text()) + ") out of range of " +
                          what);
  }
  return v;
}

// Jackson's getDoubleValue: integers via long (so -0 is 0.0) or, beyond, from their text;
// decimals from their text (Double.parseDouble).
double token_double(Reader& reader, Token token) {
  const std::string_view text = reader.text();
  int64_t v = 0;
  if (token == Token::NumberInt && parse_int64(text, v)) return static_cast<double>(v);
  return parse_double(text);
}

// Jackson's getFloatValue: integers via long (so -0 is 0.0) or, beyond, from their text;
// decimals from their text (Float.parseFloat, rounded once).
float token_float(Reader& reader, Token token) {
  const std::string_view text = reader.text();
  int64_t v = 0;
  if (token == Token::NumberInt && parse_int64(text, v)) return static_cast<float>(v);
  return parse_float(text);
}

}  // namespace

SparkConverter::SparkConverter(const Type& row_type, const Options& options)
    : row_type_(row_type), options_(options), reader_(options) {
  timestamp_pattern_ =
      compile_json_pattern(options.timestamp_format, false, timestamp_pattern_error_);
  timestamp_ntz_pattern_ =
      compile_json_pattern(options.timestamp_ntz_format, true, timestamp_ntz_pattern_error_);
  date_pattern_ = compile_json_pattern(options.date_format, false, date_pattern_error_);
}

int SparkConverter::field_index(const Type& type, const std::string* name, bool is_root) const {
  if (name == nullptr) return -1;
  // Spark's StructType.getFieldIndex keeps the last of duplicate names.
  for (size_t i = type.children.size(); i-- > 0;) {
    if (is_root && static_cast<int>(i) == options_.corrupt_column) continue;
    if (type.children[i]->name == *name) return static_cast<int>(i);
  }
  return -1;
}

void SparkConverter::failed_conversion(Reader& reader, Token token, const Type& type) {
  // Spark reads the token's text for its message, which decodes a string token first.
  if (token == Token::String && reader.text().empty()) {
    throw ConversionError(std::string("Failed to parse an empty string for data type ") +
                          type_name(type));
  }
  const std::string* name = reader.current_name();
  throw ConversionError("Cannot parse the field name " + (name ? "'" + *name + "'" : "null") +
                        " and the value " + std::string(reader.text()) +
                        " of the JSON token type " + token_name(token) +
                        " to target Spark data type " + type_name(type));
}

bool SparkConverter::convert_value(Reader& reader, const Type& type, ColumnBuilder& out) {
  Token token = reader.current();
  while (token == Token::FieldName) token = reader.next_token();
  if (token == Token::None || token == Token::Null) {
    out.append_null();
    return false;
  }
  switch (type.kind) {
    case Kind::Bool:
      if (token == Token::True || token == Token::False) {
        out.append_bool(token == Token::True);
        return false;
      }
      break;
    case Kind::Int8:
      if (token == Token::NumberInt) {
        // Jackson's getByteValue accepts -128..255 and wraps 128..255 to negative bytes.
        const int64_t v = integer_in(reader, -128, 255, "Java byte");
        out.append_fixed<int8_t>(static_cast<int8_t>(static_cast<uint8_t>(v & 0xFF)));
        return false;
      }
      break;
    case Kind::Int16:
      if (token == Token::NumberInt) {
        out.append_fixed<int16_t>(
            static_cast<int16_t>(integer_in(reader, -32768, 32767, "Java short")));
        return false;
      }
      break;
    case Kind::Int32:
      if (token == Token::NumberInt) {
        out.append_fixed<int32_t>(
            static_cast<int32_t>(integer_in(reader, std::numeric_limits<int32_t>::min(),
                                            std::numeric_limits<int32_t>::max(), "int")));
        return false;
      }
      break;
    case Kind::Int64:
      if (token == Token::NumberInt) {
        out.append_fixed<int64_t>(integer_in(reader, std::numeric_limits<int64_t>::min(),
                                             std::numeric_limits<int64_t>::max(), "long"));
        return false;
      }
      break;
    case Kind::Float32:
    case Kind::Float64: {
      double value = 0;
      if (token == Token::NumberInt || token == Token::NumberFloat) {
        if (reader.is_non_numeric()) {
          const int sign = reader.non_numeric_sign();
          value = sign == 0 ? std::numeric_limits<double>::quiet_NaN()
                            : sign * std::numeric_limits<double>::infinity();
        } else if (type.kind == Kind::Float32) {
          out.append_fixed<float>(token_float(reader, token));
          return false;
        } else {
          value = token_double(reader, token);
        }
      } else if (token == Token::String && !reader.text().empty()) {
        const std::string_view t = reader.text();
        if (options_.allow_non_numeric_numbers && t == "NaN") {
          value = std::numeric_limits<double>::quiet_NaN();
        } else if (options_.allow_non_numeric_numbers &&
                   (t == "+INF" || t == "+Infinity" || t == "Infinity")) {
          value = std::numeric_limits<double>::infinity();
        } else if (options_.allow_non_numeric_numbers && (t == "-INF" || t == "-Infinity")) {
          value = -std::numeric_limits<double>::infinity();
        } else {
          throw ConversionError("Cannot parse the string '" + std::string(t) + "' as " +
                                type_name(type));
        }
      } else {
        break;
      }
      if (type.kind == Kind::Float32) {
        out.append_fixed<float>(static_cast<float>(value));
      } else {
        out.append_fixed<double>(value);
      }
      return false;
    }
    case Kind::Decimal128: {
      int128 unscaled = 0;
      if (token == Token::NumberInt || token == Token::NumberFloat) {
        if (reader.is_non_numeric() ||
            !parse_decimal(reader.text(), type.precision, type.scale, unscaled)) {
          throw ConversionError("Decimal value " + std::string(reader.text()) +
                                " does not fit DECIMAL(" + std::to_string(type.precision) + "," +
                                std::to_string(type.scale) + ")");
        }
        out.append_fixed<int128>(unscaled);
        return false;
      }
      if (token == Token::String && !reader.text().empty()) {
        if (!java_decimal_text(reader.text(), cleaned_) ||
            !parse_decimal(cleaned_, type.precision, type.scale, unscaled)) {
          throw ConversionError("Cannot parse the string '" + std::string(reader.text()) +
                                "' as DECIMAL");
        }
        out.append_fixed<int128>(unscaled);
        return false;
      }
      break;
    }
    case Kind::Utf8:
      convert_string(reader, token, out);
      return false;
    case Kind::Date32:
      if (token == Token::String && !reader.text().empty()) {
        convert_date(reader.text(), out);
        return false;
      }
      break;
    case Kind::TimestampUs:
      if (token == Token::String && !reader.text().empty()) {
        convert_timestamp(reader.text(), type, out);
        return false;
      }
      if (token == Token::NumberInt && !type.is_ntz()) {
        const int64_t seconds = integer_in(reader, std::numeric_limits<int64_t>::min(),
                                           std::numeric_limits<int64_t>::max(), "long");
        out.append_fixed<int64_t>(json_integer_seconds_to_micros(seconds));
        return false;
      }
      break;
    case Kind::List:
      if (token == Token::StartArray) return convert_array(reader, type, out);
      break;
    case Kind::Struct:
      if (token == Token::StartObject) return convert_object(reader, type, out, false);
      break;
    case Kind::Map:
      if (token == Token::StartObject) return convert_map(reader, type, out);
      break;
    case Kind::Binary:  // refused when the decoder is built
      break;
  }
  failed_conversion(reader, token, type);
}

void SparkConverter::convert_string(Reader& reader, Token token, ColumnBuilder& out) {
  if (token == Token::String) {
    out.append_string(java_utf8(reader.text(), copy_buffer_));
    return;
  }
  if (options_.exact_string_text) {
    // read.json parses the record's bytes and takes the value's bytes from its first to just
    // past its last (skipChildren for a container): the source text, white space and all.
    const size_t begin = reader.value_begin();
    reader.skip_children();
    copy_buffer_.clear();
    const char16_t* units = units_.data() + skipped_;
    for (size_t i = begin; i < reader.position(); ++i) {
      uint32_t cp = units[i];
      if (cp >= 0xD800 && cp <= 0xDBFF && i + 1 < reader.position() && units[i + 1] >= 0xDC00 &&
          units[i + 1] <= 0xDFFF) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (units[++i] - 0xDC00u);
      }
      append_code_point(copy_buffer_, cp);
    }
    out.append_string(java_utf8(copy_buffer_, cleaned_));
    return;
  }
  // from_json reads through a java.io.Reader, so Spark re-writes the value with Jackson's
  // generator instead of copying its bytes.
  copy_buffer_.clear();
  copy_structure(reader, token, copy_buffer_);
  out.append_string(copy_buffer_);
}

void SparkConverter::copy_scalar(Reader& reader, Token token, std::string& out) {
  switch (token) {
    case Token::String:
      append_quoted(reader.text(), out);
      return;
    case Token::NumberInt:
      canonical_integer(reader.text(), out);
      return;
    case Token::NumberFloat: {
      // Jackson writes the double value; it quotes NaN and the infinities.
      double value = 0;
      if (reader.is_non_numeric()) {
        const int sign = reader.non_numeric_sign();
        value = sign == 0 ? std::numeric_limits<double>::quiet_NaN()
                          : sign * std::numeric_limits<double>::infinity();
      } else {
        value = parse_double(reader.text());
      }
      if (std::isnan(value)) {
        out += "\"NaN\"";
      } else if (std::isinf(value)) {
        out += value > 0 ? "\"Infinity\"" : "\"-Infinity\"";
      } else {
        format_java_double(value, out);
      }
      return;
    }
    case Token::True:
      out += "true";
      return;
    case Token::False:
      out += "false";
      return;
    case Token::Null:
      out += "null";
      return;
    default:
      throw ConversionError("Unexpected token while copying a JSON value");
  }
}

void SparkConverter::copy_structure(Reader& reader, Token token, std::string& out) {
  constexpr uint8_t kObject = 1;
  constexpr uint8_t kHasEntry = 2;
  if (token == Token::EndObject || token == Token::EndArray) {
    // The generator has no open container to close.
    throw ConversionError("Current context not Array/Object but Root");
  }
  if (token != Token::StartObject && token != Token::StartArray) {
    copy_scalar(reader, token, out);
    return;
  }
  generator_stack_.clear();
  generator_stack_.push_back(token == Token::StartObject ? kObject : 0);
  out.push_back(token == Token::StartObject ? '{' : '[');
  for (Token t = reader.next_token(); t != Token::None; t = reader.next_token()) {
    uint8_t& top = generator_stack_.back();
    const auto separate_value = [&] {
      if ((top & kObject) == 0) {
        if ((top & kHasEntry) != 0) out.push_back(',');
        top |= kHasEntry;
      }
    };
    switch (t) {
      case Token::FieldName:
        if ((top & kHasEntry) != 0) out.push_back(',');
        top |= kHasEntry;
        append_quoted(reader.text(), out);
        out.push_back(':');
        break;
      case Token::StartObject:
      case Token::StartArray:
        separate_value();
        out.push_back(t == Token::StartObject ? '{' : '[');
        generator_stack_.push_back(t == Token::StartObject ? kObject : 0);
        break;
      case Token::EndObject:
      case Token::EndArray:
        out.push_back(t == Token::EndObject ? '}' : ']');
        generator_stack_.pop_back();
        if (generator_stack_.empty()) return;
        break;
      default:
        separate_value();
        copy_scalar(reader, t, out);
        break;
    }
  }
  // The input ended without closing: the generator closes what is open when it is closed.
  while (!generator_stack_.empty()) {
    out.push_back((generator_stack_.back() & kObject) != 0 ? '}' : ']');
    generator_stack_.pop_back();
  }
}

void SparkConverter::convert_date(std::string_view text, ColumnBuilder& out) {
  if (!date_pattern_error_.empty()) throw ConversionError(date_pattern_error_);
  int32_t days = 0;
  if (date_pattern_) {
    // A user-given pattern disables Spark's fallback parsers.
    if (!date_pattern_->parse_date(text, days)) {
      throw ConversionError("Text '" + std::string(text) + "' could not be parsed as a DATE");
    }
    out.append_fixed<int32_t>(days);
    return;
  }
  if (json_default_parse_date(text, days)) {
    out.append_fixed<int32_t>(days);
    return;
  }
  throw ConversionError("Text '" + std::string(text) + "' could not be parsed as a DATE");
}

void SparkConverter::convert_timestamp(std::string_view text, const Type& type,
                                       ColumnBuilder& out) {
  const std::string& pattern_error =
      type.is_ntz() ? timestamp_ntz_pattern_error_ : timestamp_pattern_error_;
  if (!pattern_error.empty()) throw ConversionError(pattern_error);
  int64_t micros = 0;
  bool ok = false;
  if (type.is_ntz()) {
    ok = timestamp_ntz_pattern_ ? timestamp_ntz_pattern_->parse_timestamp_ntz(text, micros)
                                : json_default_parse_timestamp_ntz(text, micros);
  } else if (timestamp_pattern_) {
    ok = timestamp_pattern_->parse_timestamp(text, options_.time_zone, micros);
  } else {
    ok = json_default_parse_timestamp(text, options_.time_zone, micros);
  }
  if (!ok) {
    throw ConversionError("Text '" + std::string(text) + "' could not be parsed as a " +
                          type_name(type));
  }
  out.append_fixed<int64_t>(micros);
}

void SparkConverter::restore_value(size_t begin, int depth, const Type& type, ColumnBuilder& out) {
  Reader reader(options_);
  reader.reset_at_value(units_.data() + skipped_, units_.size() - skipped_, reader_tail(), begin,
                        depth);
  const int64_t before = out.length();
  try {
    reader.next_token();
    convert_value(reader, type, out);
  } catch (const JsonError&) {
    // It converted before, so it converts again; keep the slot filled regardless.
    out.truncate(before);
    out.append_null();
  }
}

bool SparkConverter::convert_object(Reader& reader, const Type& type, ColumnBuilder& out,
                                    bool is_root) {
  const int64_t slot = out.length();
  const size_t n = type.children.size();
  const size_t base = value_begins_.size();
  value_begins_.resize(base + n);
  struct Pop {
    std::vector<size_t>& v;
    size_t size;
    ~Pop() { v.resize(size); }
  } pop{value_begins_, base};
  bool bad = false;
  // Spark: while (nextUntil(parser, END_OBJECT)) { getFieldIndex(currentName) ... }; errors
  // of nextToken and skipChildren leave the object, conversion errors only fail the field.
  for (Token t = reader.next_token(); t != Token::None && t != Token::EndObject;
       t = reader.next_token()) {
    const int index = field_index(type, reader.current_name(), is_root);
    if (index < 0) {
      reader.skip_children();
      continue;
    }
    const size_t i = static_cast<size_t>(index);
    ColumnBuilder& child = out.child(i);
    const bool had_value = child.length() > slot;
    const size_t begin = reader.value_begin();
    const int depth = reader.depth();
    child.truncate(slot);
    try {
      if (convert_value(reader, *type.children[i], child)) {
        if (first_error_.empty()) first_error_ = "a nested value could not be converted";
        bad = true;
      }
      value_begins_[base + i] = begin;
    } catch (const JsonError& e) {
      // row.update() is not reached: an earlier value of a repeated key stays.
      child.truncate(slot);
      if (had_value) restore_value(value_begins_[base + i], depth, *type.children[i], child);
      if (first_error_.empty()) first_error_ = e.what();
      bad = true;
      reader.skip_children();
    }
  }
  for (size_t i = 0; i < out.num_children(); ++i) {
    if (out.child(i).length() == slot) out.child(i).append_null();
  }
  out.finish_struct();
  return bad;
}

bool SparkConverter::convert_array(Reader& reader, const Type& type, ColumnBuilder& out) {
  ColumnBuilder& elements = out.child(0);
  const Type& element_type = *type.children[0];
  bool partial = false;
  for (Token t = reader.next_token(); t != Token::None && t != Token::EndArray;
       t = reader.next_token()) {
    // Only partial values are caught here; any other failure leaves the array unread.
    if (convert_value(reader, element_type, elements)) partial = true;
  }
  out.finish_list();
  return partial;
}

bool SparkConverter::convert_map(Reader& reader, const Type& type, ColumnBuilder& out) {
  ColumnBuilder& keys = out.child(0);
  ColumnBuilder& values = out.child(1);
  const Type& value_type = *type.children[1];
  if (map_keys_.size() <= map_depth_) map_keys_.resize(map_depth_ + 1);
  ++map_depth_;
  struct DepthGuard {
    size_t& depth;
    ~DepthGuard() { --depth; }
  } guard{map_depth_};
  bool partial = false;
  bool bad = false;
  std::string bad_reason;
  for (Token t = reader.next_token(); t != Token::None && t != Token::EndObject;
       t = reader.next_token()) {
    std::string& key = map_keys_[map_depth_ - 1];
    const std::string* name = reader.current_name();
    key.assign(name ? *name : std::string());
    const int64_t before = values.length();
    try {
      if (convert_value(reader, value_type, values)) partial = true;
      keys.append_string(java_utf8(map_keys_[map_depth_ - 1], copy_buffer_));
    } catch (const JsonError& e) {
      values.truncate(before);
      if (!bad) bad_reason = e.what();
      bad = true;
      reader.skip_children();
    }
  }
  out.finish_list();
  // A value that failed outright invalidates the whole map, once its brace is consumed.
  if (bad) throw ConversionError(bad_reason);
  return partial;
}

RowOutcome SparkConverter::convert_root_value(Reader& reader, Token token, ColumnBuilder& row) {
  // Spark's root converter of an ARRAY or MAP schema: null gives a null result; an array (an
  // ARRAY schema) or an object (a MAP schema, or one struct of an ARRAY<STRUCT> schema) is
  // converted; anything else fails the document.
  const Type& type = *row_type_.children[0];
  ColumnBuilder& value = row.child(0);
  if (token == Token::Null) {
    row.append_null();
    return RowOutcome::Empty;
  }
  bool partial = false;
  if (type.kind == Kind::List && token == Token::StartArray) {
    partial = convert_array(reader, type, value);
  } else if (type.kind == Kind::List && token == Token::StartObject &&
             type.children[0]->kind == Kind::Struct) {
    // A single JSON object read as an array of one struct.
    partial = convert_object(reader, *type.children[0], value.child(0), false);
    value.finish_list();
  } else if (type.kind == Kind::Map && token == Token::StartObject) {
    partial = convert_map(reader, type, value);
  } else {
    failed_conversion(reader, token, type);
  }
  row.finish_struct();
  if (partial && first_error_.empty()) first_error_ = "a nested value could not be converted";
  return partial ? RowOutcome::Partial : RowOutcome::Ok;
}

bool SparkConverter::convert_root_array(Reader& reader, ColumnBuilder& row) {
  // Spark's root converter of a struct schema takes each element of a top-level array as a
  // row; an element that is not an object (null included) fails the whole record.
  bool partial = false;
  for (Token t = reader.next_token(); t != Token::None && t != Token::EndArray;
       t = reader.next_token()) {
    if (t == Token::Null) throw ConversionError("Root converter returned null");
    if (t != Token::StartObject) failed_conversion(reader, t, row_type_);
    if (convert_object(reader, row_type_, row, true)) partial = true;
  }
  if (partial && first_error_.empty()) first_error_ = "a nested value could not be converted";
  return partial;
}

std::string_view SparkConverter::record_text(std::string_view doc) {
  return corrupt_record_text(doc, units_, copy_buffer_);
}

RowOutcome SparkConverter::convert(std::string_view doc, ColumnBuilder& row, std::string& reason) {
  const int64_t slot = row.length();
  first_error_.clear();
  map_depth_ = 0;
  value_begins_.clear();
  tail_ = decode_utf8_like_java(doc, units_);
  // read.json's parser skips a byte order mark at the start of a record, when it can read 4
  // bytes (Jackson's encoding detection looks at 4): a lone BOM is a malformed record.
  skipped_ =
      options_.skip_byte_order_mark && doc.size() >= 4 && !units_.empty() && units_[0] == 0xFEFF
          ? 1
          : 0;
  Reader& reader = reader_;
  reader.reset(units_.data() + skipped_, units_.size() - skipped_, reader_tail());
  try {
    // A parser over bytes (read.json) stops at the first byte that is not UTF-8, where one
    // over characters reads U+FFFD. Where it stops decides what Spark keeps of the record;
    // sliceflow fails the whole record (docs/json-semantics.md).
    if (options_.exact_string_text && !simdjson::validate_utf8(doc.data(), doc.size())) {
      throw SyntaxError("Invalid UTF-8 in the record");
    }
    const Token token = reader.next_token();
    if (token == Token::None) {
      if (!options_.file_records) row.append_null();
      return RowOutcome::Empty;
    }
    if (options_.root_value) {
      const RowOutcome outcome = convert_root_value(reader, token, row);
      if (outcome == RowOutcome::Partial) reason = first_error_;
      return outcome;
    }
    if (token == Token::StartObject) {
      if (!convert_object(reader, row_type_, row, true)) return RowOutcome::Ok;
      reason = first_error_;
      if (options_.corrupt_column >= 0) {
        ColumnBuilder& corrupt = row.child(static_cast<size_t>(options_.corrupt_column));
        corrupt.truncate(slot);
        corrupt.append_string(corrupt_record_text(doc, units_, copy_buffer_));
      }
      return RowOutcome::Partial;
    }
    if (token == Token::Null) throw ConversionError("Root converter returned null");
    if (token == Token::StartArray && options_.file_records) {
      if (!convert_root_array(reader, row)) {
        return row.length() == slot ? RowOutcome::Empty : RowOutcome::Ok;
      }
      reason = first_error_;
      if (options_.corrupt_column >= 0) {
        // Every row of the array carries the whole record.
        ColumnBuilder& corrupt = row.child(static_cast<size_t>(options_.corrupt_column));
        const std::string_view text = corrupt_record_text(doc, units_, copy_buffer_);
        corrupt.truncate(slot);
        for (int64_t r = slot; r < row.length(); ++r) corrupt.append_string(text);
      }
      return RowOutcome::Partial;
    }
    if (token == Token::StartArray) {
      throw ConversionError("Parsing JSON arrays as structs is forbidden");
    }
    failed_conversion(reader, token, row_type_);
  } catch (const JsonError& e) {
    reason = e.what();
  }
  row.truncate(slot);
  for (size_t i = 0; i < row.num_children(); ++i) {
    if (static_cast<int>(i) == options_.corrupt_column) {
      row.child(i).append_string(corrupt_record_text(doc, units_, copy_buffer_));
    } else {
      row.child(i).append_null();
    }
  }
  row.finish_struct();
  return RowOutcome::Malformed;
}

}  // namespace sliceflow::json
