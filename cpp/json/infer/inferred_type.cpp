// Spark's type merge rules for JSON schema inference (see inferred_type.h).
#include "json/infer/inferred_type.h"

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sliceflow::json {
namespace {

constexpr int kMaxPrecision = 38;

// The code point starting at byte i of s (lenient: a bad sequence reads as its first byte).
uint32_t code_point_at(std::string_view s, size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  auto cont = [&](size_t k) -> uint32_t {
    return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) & 0x3Fu : 0u;
  };
  if (b0 < 0x80) return b0;
  if (b0 >= 0xF0) return ((b0 & 0x07u) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3);
  if (b0 >= 0xE0) return ((b0 & 0x0Fu) << 12) | (cont(1) << 6) | cont(2);
  if (b0 >= 0xC0) return ((b0 & 0x1Fu) << 6) | cont(1);
  return b0;
}

// The first UTF-16 unit of a code point (enough to order two different code points whose
// first units differ; equal first units mean two supplementary characters, ordered by code
// point).
uint32_t first_unit(uint32_t cp) { return cp < 0x10000 ? cp : 0xD800 + ((cp - 0x10000) >> 10); }

bool is_integral(InferredKind k) { return k == InferredKind::Long; }

// TypeCoercion.findTightestCommonType, as far as inference types reach.
std::optional<InferredType> tightest(const InferredType& a, const InferredType& b,
                                     bool case_sensitive) {
  if (a == b) return a;
  if (a.kind == InferredKind::Null) return b;
  if (b.kind == InferredKind::Null) return a;
  const auto ka = a.kind;
  const auto kb = b.kind;
  if ((ka == InferredKind::Long || ka == InferredKind::Double) &&
      (kb == InferredKind::Long || kb == InferredKind::Double)) {
    return InferredType::scalar(InferredKind::Double);
  }
  // A decimal wider than DECIMAL(20,0) (BIGINT's) holds every BIGINT.
  if (is_integral(ka) && kb == InferredKind::Decimal && b.precision - b.scale >= 20) return b;
  if (ka == InferredKind::Decimal && is_integral(kb) && a.precision - a.scale >= 20) return a;
  if ((ka == InferredKind::Timestamp && kb == InferredKind::TimestampNtz) ||
      (ka == InferredKind::TimestampNtz && kb == InferredKind::Timestamp)) {
    return InferredType::scalar(InferredKind::Timestamp);
  }
  if (ka == InferredKind::Array && kb == InferredKind::Array) {
    auto element = tightest(a.children[0], b.children[0], case_sensitive);
    if (!element) return std::nullopt;
    InferredType out = InferredType::scalar(InferredKind::Array);
    out.children.push_back(std::move(*element));
    return out;
  }
  if (ka == InferredKind::Struct && kb == InferredKind::Struct &&
      a.children.size() == b.children.size()) {
    // findTypeForComplex: fields paired by position, names by the resolver, a's names kept.
    InferredType out = InferredType::scalar(InferredKind::Struct);
    for (size_t i = 0; i < a.children.size(); ++i) {
      if (!same_field_name(a.names[i], b.names[i], case_sensitive)) return std::nullopt;
      auto field = tightest(a.children[i], b.children[i], case_sensitive);
      if (!field) return std::nullopt;
      out.names.push_back(a.names[i]);
      out.children.push_back(std::move(*field));
    }
    return out;
  }
  return std::nullopt;
}

void merge_decimals(InferredType& a, int precision, int scale) {
  const int s = std::max(a.scale, scale);
  const int range = std::max(a.precision - a.scale, precision - scale);
  if (range + s > kMaxPrecision) {
    a = InferredType::scalar(InferredKind::Double);
  } else {
    a = InferredType::decimal(range + s, s);
  }
}

void merge_structs(InferredType& a, const InferredType& b, bool case_sensitive) {
  InferredType out = InferredType::scalar(InferredKind::Struct);
  out.names.reserve(a.names.size() + b.names.size());
  out.children.reserve(a.names.size() + b.names.size());
  size_t i = 0;
  size_t j = 0;
  while (i < a.names.size() && j < b.names.size()) {
    const int cmp = java_compare(a.names[i], b.names[j]);
    if (cmp == 0) {
      merge_compatible(a.children[i], b.children[j], case_sensitive);
      out.names.push_back(std::move(a.names[i]));
      out.children.push_back(std::move(a.children[i]));
      ++i;
      ++j;
    } else if (cmp < 0) {
      out.names.push_back(std::move(a.names[i]));
      out.children.push_back(std::move(a.children[i]));
      ++i;
    } else {
      out.names.push_back(b.names[j]);
      out.children.push_back(b.children[j]);
      ++j;
    }
  }
  for (; i < a.names.size(); ++i) {
    out.names.push_back(std::move(a.names[i]));
    out.children.push_back(std::move(a.children[i]));
  }
  for (; j < b.names.size(); ++j) {
    out.names.push_back(b.names[j]);
    out.children.push_back(b.children[j]);
  }
  a = std::move(out);
}

void append_json_string(std::string_view s, std::string& out) {
  static const char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const auto u = static_cast<unsigned char>(c);
    if (u == 0xED && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0xA0) {
      // A lone surrogate (its 3-byte form): escaped, so that the JSON text is valid UTF-8.
      const uint32_t cp = code_point_at(s, i);
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4) out.push_back(kHex[(cp >> shift) & 15]);
      i += 2;
    } else if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (u < 0x20) {
      out += "\\u00";
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
}

}  // namespace

bool InferredType::operator==(const InferredType& other) const {
  if (kind != other.kind) return false;
  if (kind == InferredKind::Decimal) {
    return precision == other.precision && scale == other.scale;
  }
  return names == other.names && children == other.children;
}

int java_compare(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  if (i == n) {
    if (a.size() == b.size()) return 0;
    return a.size() < b.size() ? -1 : 1;
  }
  // Back up to the start of the code point holding the first difference.
  while (i > 0 && (static_cast<unsigned char>(a[i]) & 0xC0) == 0x80) --i;
  const uint32_t ca = code_point_at(a, i);
  const uint32_t cb = code_point_at(b, i);
  const uint32_t ua = first_unit(ca);
  const uint32_t ub = first_unit(cb);
  if (ua != ub) return ua < ub ? -1 : 1;
  if (ca != cb) return ca < cb ? -1 : 1;
  return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]) ? -1 : 1;
}

bool same_field_name(std::string_view a, std::string_view b, bool case_sensitive) {
  if (case_sensitive || a.size() != b.size()) return a == b;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i];
    char y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

void merge_compatible(InferredType& a, const InferredType& b, bool case_sensitive) {
  if (auto t = tightest(a, b, case_sensitive)) {
    a = std::move(*t);
    return;
  }
  const auto ka = a.kind;
  const auto kb = b.kind;
  if ((ka == InferredKind::Double && kb == InferredKind::Decimal) ||
      (ka == InferredKind::Decimal && kb == InferredKind::Double)) {
    a = InferredType::scalar(InferredKind::Double);
  } else if (ka == InferredKind::Decimal && kb == InferredKind::Decimal) {
    merge_decimals(a, b.precision, b.scale);
  } else if (ka == InferredKind::Struct && kb == InferredKind::Struct) {
    merge_structs(a, b, case_sensitive);
  } else if (ka == InferredKind::Array && kb == InferredKind::Array) {
    merge_compatible(a.children[0], b.children[0], case_sensitive);
  } else if (ka == InferredKind::Long && kb == InferredKind::Decimal) {
    a = InferredType::decimal(20, 0);
    merge_decimals(a, b.precision, b.scale);
  } else if (ka == InferredKind::Decimal && kb == InferredKind::Long) {
    merge_decimals(a, 20, 0);
  } else {
    a = InferredType::scalar(InferredKind::String);
  }
}

void sort_fields(InferredType& st) {
  const size_t n = st.names.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return java_compare(st.names[x], st.names[y]) < 0; });
  std::vector<std::string> names;
  std::vector<InferredType> children;
  names.reserve(n);
  children.reserve(n);
  for (const size_t k : order) {
    names.push_back(std::move(st.names[k]));
    children.push_back(std::move(st.children[k]));
  }
  st.names = std::move(names);
  st.children = std::move(children);
}

void add_corrupt_field(InferredType& st, const std::string& name) {
  if (std::find(st.names.begin(), st.names.end(), name) != st.names.end()) return;
  st.names.push_back(name);
  st.children.push_back(InferredType::scalar(InferredKind::String));
  sort_fields(st);
}

bool canonicalize(InferredType& t, bool drop_all_null) {
  switch (t.kind) {
    case InferredKind::Array:
      return canonicalize(t.children[0], drop_all_null);
    case InferredKind::Struct: {
      size_t kept = 0;
      for (size_t i = 0; i < t.names.size(); ++i) {
        if (t.names[i].empty() || !canonicalize(t.children[i], drop_all_null)) continue;
        if (kept != i) {
          t.names[kept] = std::move(t.names[i]);
          t.children[kept] = std::move(t.children[i]);
        }
        ++kept;
      }
      t.names.resize(kept);
      t.children.resize(kept);
      return kept > 0;  // SPARK-8093: empty structs are dropped
    }
    case InferredKind::Null:
      if (drop_all_null) return false;
      t = InferredType::scalar(InferredKind::String);
      return true;
    default:
      return true;
  }
}

namespace {

// A scalar kind's name in Spark's JSON form and in its simple form (nullptr: not a scalar, or
// a decimal, whose name carries its precision and scale).
std::pair<const char*, const char*> scalar_names(InferredKind kind) {
  switch (kind) {
    case InferredKind::Null:
      return {"void", "void"};
    case InferredKind::Boolean:
      return {"boolean", "boolean"};
    case InferredKind::Long:
      return {"long", "bigint"};
    case InferredKind::Double:
      return {"double", "double"};
    case InferredKind::String:
      return {"string", "string"};
    case InferredKind::Timestamp:
      return {"timestamp", "timestamp"};
    case InferredKind::TimestampNtz:
      return {"timestamp_ntz", "timestamp_ntz"};
    default:
      return {nullptr, nullptr};
  }
}

std::string decimal_name(const InferredType& t) {
  return "decimal(" + std::to_string(t.precision) + "," + std::to_string(t.scale) + ")";
}

}  // namespace

void append_spark_json(const InferredType& t, std::string& out) {
  if (const char* name = scalar_names(t.kind).first) {
    out += std::string("\"") + name + "\"";
  } else if (t.kind == InferredKind::Decimal) {
    out += "\"" + decimal_name(t) + "\"";
  } else if (t.kind == InferredKind::Array) {
    out += "{\"type\":\"array\",\"elementType\":";
    append_spark_json(t.children[0], out);
    out += ",\"containsNull\":true}";
  } else {
    out += "{\"type\":\"struct\",\"fields\":[";
    for (size_t i = 0; i < t.names.size(); ++i) {
      if (i > 0) out.push_back(',');
      out += "{\"name\":";
      append_json_string(t.names[i], out);
      out += ",\"type\":";
      append_spark_json(t.children[i], out);
      out += ",\"nullable\":true,\"metadata\":{}}";
    }
    out += "]}";
  }
}

std::string simple_string(const InferredType& t) {
  if (const char* name = scalar_names(t.kind).second) return name;
  if (t.kind == InferredKind::Decimal) return decimal_name(t);
  if (t.kind == InferredKind::Array) return "array<" + simple_string(t.children[0]) + ">";
  std::string out = "struct<";
  for (size_t i = 0; i < t.names.size(); ++i) {
    if (i > 0) out.push_back(',');
    out += t.names[i] + ":" + simple_string(t.children[i]);
  }
  return out + ">";
}

}  // namespace sliceflow::json
