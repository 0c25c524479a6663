#include "agg/key_codec.h"

#include <stdexcept>
#include <string>

#include "arrow/int128.h"
#include "state/byte_order.h"

namespace sliceflow::agg {
namespace {

using arrow::Kind;
using arrow::Layout;

// Bytes a key column's value takes in an encoded key (a boolean takes a byte).
size_t fixed_width(Layout layout) {
  return layout == Layout::Bool ? 1 : static_cast<size_t>(arrow::value_byte_width(layout));
}

// Little-endian whatever the machine: key bytes are kept in streaming state (docs/state.md).
template <typename T>
void put(char* p, T v) {
  state::store_le(p, v);
}

template <typename T>
T get(std::string_view key, size_t& at) {
  if (at + sizeof(T) > key.size()) throw std::invalid_argument("truncated window key bytes");
  const T v = state::load_le<T>(key.data() + at);
  at += sizeof(T);
  return v;
}

}  // namespace

KeyEncoder::KeyEncoder(std::vector<const arrow::ColumnView*> columns)
    : columns_(std::move(columns)) {
  for (const auto* c : columns_) {
    if (c->layout() == Layout::List || c->layout() == Layout::Struct) {
      throw std::invalid_argument("key column '" + c->name() + "' has a nested type");
    }
  }
}

void KeyEncoder::encode(int64_t begin, int64_t end) {
  begin_ = begin;
  const auto n = static_cast<size_t>(end - begin);
  size_t fixed = 0;
  for (const auto* c : columns_) fixed += 1 + fixed_width(c->layout());
  offsets_.assign(n + 1, 0);
  for (size_t i = 0; i < n; ++i) offsets_[i + 1] = fixed;
  for (const auto* c : columns_) {
    if (c->layout() != Layout::String && c->layout() != Layout::LargeString) continue;
    for (size_t i = 0; i < n; ++i) {
      const auto row = begin + static_cast<int64_t>(i);
      if (!c->is_null(row)) offsets_[i + 1] += 4 + c->str(row).size();
    }
  }
  for (size_t i = 0; i < n; ++i) offsets_[i + 1] += offsets_[i];
  bytes_.resize(offsets_[n]);
  cursor_.assign(offsets_.begin(), offsets_.end() - 1);
  char* base = bytes_.data();
  for (const auto* c : columns_) {
    const Layout layout = c->layout();
    const size_t width = fixed_width(layout);
    for (size_t i = 0; i < n; ++i) {
      const auto row = begin + static_cast<int64_t>(i);
      char* p = base + cursor_[i];
      if (c->is_null(row)) {
        *p = 0;
        if (width != 0) std::memset(p + 1, 0, width);
        cursor_[i] += 1 + width;
        continue;
      }
      *p++ = 1;
      switch (layout) {
        case Layout::Bool:
        case Layout::Int8:
          put<int8_t>(p, static_cast<int8_t>(c->i64(row)));
          break;
        case Layout::Int16:
          put<int16_t>(p, static_cast<int16_t>(c->i64(row)));
          break;
        case Layout::Int32:
          put<int32_t>(p, static_cast<int32_t>(c->i64(row)));
          break;
        case Layout::Int64:
          put<int64_t>(p, c->i64(row));
          break;
        case Layout::Float32:
          put<float>(p, normalized_float(static_cast<float>(c->f64(row))));
          break;
        case Layout::Float64:
          put<double>(p, normalized_double(c->f64(row)));
          break;
        case Layout::Decimal128:
          put<int128>(p, c->i128(row));
          break;
        default: {
          const std::string_view s = c->str(row);
          put<uint32_t>(p, static_cast<uint32_t>(s.size()));
          if (!s.empty()) std::memcpy(p + 4, s.data(), s.size());
          cursor_[i] += 1 + 4 + s.size();
          continue;
        }
      }
      cursor_[i] += 1 + width;
    }
  }
}

void decode_key(std::string_view key, const std::vector<arrow::ColumnBuilder*>& out) {
  size_t at = 0;
  for (arrow::ColumnBuilder* b : out) {
    const Kind kind = b->type().kind;
    const auto tag = get<uint8_t>(key, at);
    const bool is_string = kind == Kind::Utf8 || kind == Kind::Binary;
    if (tag == 0) {
      b->append_null();
      if (!is_string) {
        switch (kind) {
          case Kind::Bool:
          case Kind::Int8:
            at += 1;
            break;
          case Kind::Int16:
            at += 2;
            break;
          case Kind::Int32:
          case Kind::Date32:
          case Kind::Float32:
            at += 4;
            break;
          case Kind::Decimal128:
            at += 16;
            break;
          default:
            at += 8;
            break;
        }
      }
      continue;
    }
    switch (kind) {
      case Kind::Bool:
        b->append_bool(get<int8_t>(key, at) != 0);
        break;
      case Kind::Int8:
        b->append_fixed<int8_t>(get<int8_t>(key, at));
        break;
      case Kind::Int16:
        b->append_fixed<int16_t>(get<int16_t>(key, at));
        break;
      case Kind::Int32:
      case Kind::Date32:
        b->append_fixed<int32_t>(get<int32_t>(key, at));
        break;
      case Kind::Int64:
      case Kind::TimestampUs:
        b->append_fixed<int64_t>(get<int64_t>(key, at));
        break;
      case Kind::Float32:
        b->append_fixed<float>(get<float>(key, at));
        break;
      case Kind::Float64:
        b->append_fixed<double>(get<double>(key, at));
        break;
      case Kind::Decimal128:
        b->append_fixed<int128>(get<int128>(key, at));
        break;
      case Kind::Utf8:
      case Kind::Binary: {
        const auto n = get<uint32_t>(key, at);
        if (at + n > key.size()) throw std::invalid_argument("truncated window key bytes");
        b->append_string(key.substr(at, n));
        at += n;
        break;
      }
      default:
        throw std::invalid_argument("unsupported key column type");
    }
  }
  if (at != key.size()) throw std::invalid_argument("window key bytes do not match the key types");
}

void check_key_type(Layout layout, const arrow::Type& type) {
  bool ok = false;
  switch (type.kind) {
    case Kind::Bool:
      ok = layout == Layout::Bool;
      break;
    case Kind::Int8:
      ok = layout == Layout::Int8;
      break;
    case Kind::Int16:
      ok = layout == Layout::Int16;
      break;
    case Kind::Int32:
    case Kind::Date32:
      ok = layout == Layout::Int32;
      break;
    case Kind::Int64:
    case Kind::TimestampUs:
      ok = layout == Layout::Int64;
      break;
    case Kind::Float32:
      ok = layout == Layout::Float32;
      break;
    case Kind::Float64:
      ok = layout == Layout::Float64;
      break;
    case Kind::Decimal128:
      ok = layout == Layout::Decimal128;
      break;
    case Kind::Utf8:
    case Kind::Binary:
      ok = layout == Layout::String || layout == Layout::LargeString;
      break;
    default:
      break;
  }
  if (!ok)
    throw std::invalid_argument("key column '" + type.name +
                                "': output type does not match the input");
}

}  // namespace sliceflow::agg
