// Column builders that write Arrow buffers directly and hand them to Python through the C
// Data Interface. One builder per node of the target type; rows are appended whole, and
// truncate() takes back a partly written row (the JSON decoder's fallback relies on it). A
// writer may leave a struct's children shorter than the struct (pad_to, settle): their missing
// slots are nulls, filled in bulk; export_to() settles first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string_view>
#include <vector>

#include "arrow/byte_buffer.h"
#include "arrow/c_data.h"
#include "arrow/type.h"

namespace sliceflow::arrow {

class ColumnBuilder {
 public:
  explicit ColumnBuilder(const Type& type);

  const Type& type() const { return *type_; }
  int64_t length() const { return length_; }
  ColumnBuilder& child(size_t i) { return *children_[i]; }
  size_t num_children() const { return children_.size(); }

  void append_null();
  void append_bool(bool v) {
    const int64_t i = length_;
    set_valid();
    if ((i & 7) == 0) values_.push_back(0);
    if (v) {
      values_[static_cast<size_t>(i >> 3)] |= static_cast<uint8_t>(1u << (i & 7));
    } else {
      values_[static_cast<size_t>(i >> 3)] &= static_cast<uint8_t>(~(1u << (i & 7)));
    }
  }
  // Fixed-width values; the caller has range-checked v against the column's width.
  template <typename T>
  void append_fixed(T v) {
    set_valid();
    values_.append(v);
  }
  void append_string(std::string_view s) {
    set_valid();
    data_.append_bytes(s.data(), s.size());
    push_offset(data_.size());
  }
  // Lists and maps: append the elements to the child (map: to child(0) and child(1)), then
  // close the slot.
  void finish_list() {
    set_valid();
    push_offset(static_cast<size_t>(children_[0]->length()));
  }
  // Structs: every child must have been given exactly one value for this slot.
  void finish_struct() { set_valid(); }

  // Lazy nulls, for writers of wide nested rows where most fields of a record are missing:
  // pad_to(n) appends null slots in bulk until the length is n (nothing if it is already
  // there). A struct pads only its own slots, so its children may be shorter than it: their
  // missing slots are nulls, appended when the child is next written (its writer pads it to
  // the slot first) or by settle(). A writer that assumes children as long as their parent
  // calls settle() first; export_to() settles.
  void pad_to(int64_t n) {
    if (n > length_) append_nulls(n);
  }
  // Pads every struct's children, at every depth, to the struct's length.
  void settle();

  // Drops every slot from row n on, in this builder and its children.
  void truncate(int64_t n);

  // Moves the built column out into `out` (the builder is left empty and reusable).
  void export_to(ArrowArray* out);

  // Bytes held, for memory bounds.
  size_t memory_usage() const;

  // Reserves room for `rows` slots in total, extrapolating the bytes per slot seen so far in
  // this builder and its children (so buffers grow once instead of doubling, copying and
  // touching fresh pages at every step).
  void reserve_like(int64_t rows);

 private:
  void set_valid() {
    const int64_t i = length_++;
    if (!has_nulls_) return;  // the bitmap is only written once a null has been seen
    if ((i & 7) == 0) validity_.push_back(0);
    validity_[static_cast<size_t>(i >> 3)] |= static_cast<uint8_t>(1u << (i & 7));
  }
  void push_offset(size_t end) {
    if (end > static_cast<size_t>(std::numeric_limits<int32_t>::max())) offset_overflow();
    offsets_.append(static_cast<int32_t>(end));
  }
  [[noreturn]] static void offset_overflow();
  void append_nulls(int64_t n);  // pad_to's work, for n > length_
  int32_t last_offset() const {
    int32_t v;
    std::memcpy(&v, offsets_.data() + offsets_.size() - sizeof(int32_t), sizeof(int32_t));
    return v;
  }
  void reset();

  // What append_null writes besides the validity bit, fixed by the type.
  enum class NullFill : uint8_t { Zeros, Bit, DataOffset, ListOffset, Children };

  const Type* type_;
  NullFill null_fill_ = NullFill::Zeros;
  uint8_t null_width_ = 0;  // NullFill::Zeros: bytes of one value
  int64_t length_ = 0;
  bool has_nulls_ = false;
  std::vector<uint8_t> validity_;  // empty while has_nulls_ is false (every slot valid)
  ByteBuffer values_;              // fixed-width values, or the bool bitmap
  ByteBuffer offsets_;             // int32 offsets of utf8, list, map
  ByteBuffer data_;                // utf8 / binary bytes
  std::vector<std::unique_ptr<ColumnBuilder>> children_;
};

}  // namespace sliceflow::arrow
