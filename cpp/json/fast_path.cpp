#include "json/fast_path.h"

#include <cmath>
#include <limits>

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

}  // namespace

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
      parser_(simdjson::SIMDJSON_MAXSIZE_BYTES),
      unique_names_(names_unique(row_type)) {
  if (parser_.allocate(1 << 16, kFastMaxDepth) != simdjson::SUCCESS) enabled_ = false;
  // Options that change Spark's reading of well-formed JSON in ways this path does not model.
  if (!options.allow_non_numeric_numbers) enabled_ = false;
  if (!options.timestamp_format.empty()) {
    timestamp_pattern_ = DateTimePattern::compile(options.timestamp_format);
  }
  if (!options.date_format.empty()) {
    date_pattern_ = DateTimePattern::compile(options.date_format);
  }
}

bool FastPath::decode(std::string_view doc, size_t readable, ColumnBuilder& row) {
  if (!enabled_) return false;
  simdjson::dom::element root;
  const bool padded = readable >= doc.size() + simdjson::SIMDJSON_PADDING;
  if (parser_.parse(doc.data(), doc.size(), !padded).get(root) != simdjson::SUCCESS) return false;
  simdjson::dom::object obj;
  if (root.get_object().get(obj) != simdjson::SUCCESS) return false;
  return object(obj, row_type_, row, true);
}

bool FastPath::object(simdjson::dom::object obj, const Type& type, ColumnBuilder& out, bool is_root) {
  const int64_t slot = out.length();
  const size_t n = type.children.size();
  size_t guess = 0;  // fields mostly arrive in schema order: try the next one first
  for (const auto field : obj) {
    const std::string_view key = field.key;
    int index = -1;
    if (unique_names_ && guess < n && type.children[guess]->name == key &&
        !(is_root && static_cast<int>(guess) == options_.corrupt_column)) {
      index = static_cast<int>(guess);
    } else {
      for (size_t i = n; i-- > 0;) {
        if (is_root && static_cast<int>(i) == options_.corrupt_column) continue;
        if (type.children[i]->name == key) {
          index = static_cast<int>(i);
          break;
        }
      }
    }
    if (index < 0) continue;
    guess = static_cast<size_t>(index) + 1;
    ColumnBuilder& child = out.child(static_cast<size_t>(index));
    if (child.length() > slot) child.truncate(slot);  // a repeated key replaces the value
    if (!value(field.value, *type.children[static_cast<size_t>(index)], child)) return false;
  }
  for (size_t i = 0; i < out.num_children(); ++i) {
    if (out.child(i).length() == slot) out.child(i).append_null();
  }
  out.finish_struct();
  return true;
}

bool FastPath::value(simdjson::dom::element element, const Type& type, ColumnBuilder& out) {
  const element_type et = element.type();
  if (et == element_type::NULL_VALUE) {
    out.append_null();
    return true;
  }
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
      if (et != element_type::STRING) return false;
      out.append_string(std::string_view(element));
      return true;
    case Kind::Date32: {
      if (et != element_type::STRING) return false;
      const std::string_view s(element);
      int32_t days = 0;
      const bool ok = date_pattern_ ? date_pattern_->parse_date(s, days) : json_default_parse_date(s, days);
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
      if (et != element_type::STRING) return false;
      const std::string_view s(element);
      int64_t micros = 0;
      const bool ok = timestamp_pattern_
                          ? timestamp_pattern_->parse_timestamp(s, options_.utc_offset_seconds, micros)
                          : json_default_parse_timestamp(s, options_.utc_offset_seconds, micros);
      if (!ok) return false;
      out.append_fixed<int64_t>(micros);
      return true;
    }
    case Kind::List: {
      if (et != element_type::ARRAY) return false;
      ColumnBuilder& elements = out.child(0);
      const Type& element_type_ = *type.children[0];
      for (const auto item : simdjson::dom::array(element)) {
        if (!value(item, element_type_, elements)) return false;
      }
      out.finish_list();
      return true;
    }
    case Kind::Struct:
      if (et != element_type::OBJECT) return false;
      return object(simdjson::dom::object(element), type, out, false);
    case Kind::Map: {
      if (et != element_type::OBJECT) return false;
      ColumnBuilder& keys = out.child(0);
      ColumnBuilder& values = out.child(1);
      const Type& value_type = *type.children[1];
      for (const auto field : simdjson::dom::object(element)) {
        if (!value(field.value, value_type, values)) return false;
        keys.append_string(field.key);
      }
      out.finish_list();
      return true;
    }
  }
  return false;
}

}  // namespace sliceflow::json
