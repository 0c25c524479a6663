// Read-only, typed views of imported Arrow arrays (the window kernel's inputs: record batches
// arrive as struct arrays). Values are read in place; nothing is copied.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "arrow/c_data.h"
#include "arrow/int128.h"

namespace sliceflow::arrow {

// How the values of a column are laid out.
enum class Layout : uint8_t {
  Bool,
  Int8,
  Int16,
  Int32,  // int32 and date32
  Int64,  // int64 and timestamp[us]
  Float32,
  Float64,
  Decimal128,
  String,       // utf8 and binary (32-bit offsets)
  LargeString,  // large_utf8 and large_binary
  List,
  Struct,
};

// Bytes per value of a fixed-width layout; 0 for bit-packed booleans and the variable-width
// and nested layouts.
constexpr int64_t value_byte_width(Layout layout) {
  switch (layout) {
    case Layout::Int8:
      return 1;
    case Layout::Int16:
      return 2;
    case Layout::Int32:
    case Layout::Float32:
      return 4;
    case Layout::Int64:
    case Layout::Float64:
      return 8;
    case Layout::Decimal128:
      return 16;
    default:
      return 0;
  }
}

class ColumnView {
 public:
  // Checks the format and the buffers it needs; throws std::invalid_argument otherwise.
  // `parent_offset` is the offset of an enclosing struct, which applies to its children too.
  ColumnView(const ArrowSchema& schema, const ArrowArray& array, int64_t parent_offset = 0);

  Layout layout() const { return layout_; }
  const std::string& format() const { return format_; }
  const std::string& name() const { return name_; }
  int64_t length() const { return length_; }
  bool may_have_nulls() const { return validity_ != nullptr && null_count_ != 0; }
  bool is_null(int64_t i) const {
    if (!may_have_nulls()) return false;
    const int64_t j = i + offset_;
    return ((validity_[j >> 3] >> (j & 7)) & 1) == 0;
  }

  // Integer-like layouts (Bool, Int8..Int64): the value widened to int64.
  int64_t i64(int64_t i) const {
    const int64_t j = i + offset_;
    switch (layout_) {
      case Layout::Bool:
        return (static_cast<const uint8_t*>(values_)[j >> 3] >> (j & 7)) & 1;
      case Layout::Int8:
        return static_cast<const int8_t*>(values_)[j];
      case Layout::Int16:
        return static_cast<const int16_t*>(values_)[j];
      case Layout::Int32:
        return static_cast<const int32_t*>(values_)[j];
      default:
        return static_cast<const int64_t*>(values_)[j];
    }
  }
  // Layout::Int64: the values, row 0 first (for loops that would switch on the layout per row).
  const int64_t* int64_values() const { return static_cast<const int64_t*>(values_) + offset_; }
  double f64(int64_t i) const {
    const int64_t j = i + offset_;
    if (layout_ == Layout::Float32) return static_cast<const float*>(values_)[j];
    return static_cast<const double*>(values_)[j];
  }
  int128 i128(int64_t i) const {
    int128 v;
    std::memcpy(&v, static_cast<const char*>(values_) + 16 * (i + offset_), sizeof(v));
    return v;
  }
  std::string_view str(int64_t i) const {
    const int64_t j = i + offset_;
    int64_t begin, end;
    if (layout_ == Layout::LargeString) {
      begin = static_cast<const int64_t*>(offsets_)[j];
      end = static_cast<const int64_t*>(offsets_)[j + 1];
    } else {
      begin = static_cast<const int32_t*>(offsets_)[j];
      end = static_cast<const int32_t*>(offsets_)[j + 1];
    }
    return {data_ + begin, static_cast<size_t>(end - begin)};
  }
  // List: the child element range of slot i.
  int64_t list_begin(int64_t i) const { return static_cast<const int32_t*>(offsets_)[i + offset_]; }
  int64_t list_end(int64_t i) const {
    return static_cast<const int32_t*>(offsets_)[i + offset_ + 1];
  }

  size_t num_children() const { return children_.size(); }
  const ColumnView& child(size_t i) const { return *children_[i]; }

 private:
  Layout layout_ = Layout::Int64;
  std::string format_;
  std::string name_;
  int64_t length_ = 0;
  int64_t offset_ = 0;
  int64_t null_count_ = 0;
  const uint8_t* validity_ = nullptr;
  const void* values_ = nullptr;
  const void* offsets_ = nullptr;
  const char* data_ = nullptr;
  std::vector<std::unique_ptr<ColumnView>> children_;
};

// The layout an Arrow format string has, or throws std::invalid_argument naming the field.
Layout layout_of(const std::string& format, const std::string& field);

}  // namespace sliceflow::arrow
