#include "arrow/builder.h"

#include <cstring>
#include <limits>
#include <stdexcept>

namespace sliceflow::arrow {
namespace {

size_t fixed_width(Kind kind) {
  switch (kind) {
    case Kind::Int8:
      return 1;
    case Kind::Int16:
      return 2;
    case Kind::Int32:
    case Kind::Float32:
    case Kind::Date32:
      return 4;
    case Kind::Int64:
    case Kind::Float64:
    case Kind::TimestampUs:
      return 8;
    case Kind::Decimal128:
      return 16;
    default:
      return 0;
  }
}

bool has_offsets(Kind kind) {
  return kind == Kind::Utf8 || kind == Kind::Binary || kind == Kind::List || kind == Kind::Map;
}

int64_t count_nulls(const std::vector<uint8_t>& validity, int64_t length) {
  int64_t valid = 0;
  const int64_t full = length >> 3;
  // Eight bytes a count: without -mpopcnt each count is a call into libgcc.
  int64_t byte = 0;
  for (; byte + 8 <= full; byte += 8) {
    uint64_t word;
    std::memcpy(&word, validity.data() + byte, sizeof word);
    valid += __builtin_popcountll(word);
  }
  for (; byte < full; ++byte) valid += __builtin_popcount(validity[static_cast<size_t>(byte)]);
  for (int64_t i = full << 3; i < length; ++i) {
    valid += (validity[static_cast<size_t>(i >> 3)] >> (i & 7)) & 1;
  }
  return length - valid;
}

// Owns everything an exported ArrowArray points to; freed by the consumer's release call.
struct ExportedArray {
  std::vector<uint8_t> validity;
  ByteBuffer values;
  ByteBuffer offsets;
  ByteBuffer data;
  std::vector<const void*> buffers;
  std::vector<ArrowArray> child_arrays;
  std::vector<ArrowArray*> child_pointers;
  // A map's entries struct sits between the map and its key/value children.
  std::unique_ptr<ExportedArray> entries_owner;
};

void release_exported(ArrowArray* array) {
  if (array == nullptr || array->release == nullptr) return;
  std::unique_ptr<ExportedArray> owner(static_cast<ExportedArray*>(array->private_data));
  for (ArrowArray& child : owner->child_arrays) {
    if (child.release != nullptr) child.release(&child);
  }
  array->release = nullptr;
  array->private_data = nullptr;
}

void fill_array(ArrowArray* out, std::unique_ptr<ExportedArray> owner, int64_t length,
                int64_t null_count) {
  out->length = length;
  out->null_count = null_count;
  out->offset = 0;
  out->n_buffers = static_cast<int64_t>(owner->buffers.size());
  out->buffers = owner->buffers.data();
  out->n_children = static_cast<int64_t>(owner->child_arrays.size());
  owner->child_pointers.clear();
  for (ArrowArray& child : owner->child_arrays) owner->child_pointers.push_back(&child);
  out->children = owner->child_pointers.empty() ? nullptr : owner->child_pointers.data();
  out->dictionary = nullptr;
  out->release = release_exported;
  out->private_data = owner.release();
}

}  // namespace

ColumnBuilder::ColumnBuilder(const Type& type) : type_(&type) {
  switch (type.kind) {
    case Kind::Bool:
      null_fill_ = NullFill::Bit;
      break;
    case Kind::Utf8:
    case Kind::Binary:
      null_fill_ = NullFill::DataOffset;
      break;
    case Kind::List:
    case Kind::Map:
      null_fill_ = NullFill::ListOffset;
      break;
    case Kind::Struct:
      null_fill_ = NullFill::Children;
      break;
    default:
      null_fill_ = NullFill::Zeros;
      null_width_ = static_cast<uint8_t>(fixed_width(type.kind));
      break;
  }
  for (const auto& child : type.children) {
    children_.push_back(std::make_unique<ColumnBuilder>(*child));
  }
  reset();
}

void ColumnBuilder::reset() {
  length_ = 0;
  has_nulls_ = false;
  validity_.clear();
  values_.clear();
  offsets_.clear();
  data_.clear();
  if (has_offsets(type_->kind)) offsets_.append(int32_t{0});
}

void ColumnBuilder::offset_overflow() {
  throw std::length_error(
      "sliceflow: a decoded batch exceeds 2 GiB in one column; "
      "decode smaller batches");
}

void ColumnBuilder::append_null() {
  const int64_t i = length_++;
  if (!has_nulls_) {
    // First null: write the bitmap for the valid slots before it.
    has_nulls_ = true;
    validity_.assign(static_cast<size_t>(i >> 3) + 1, 0xFF);
    validity_.back() = static_cast<uint8_t>((1u << (i & 7)) - 1);
  } else if ((i & 7) == 0) {
    validity_.push_back(0);  // the slot's bit starts clear
  } else {
    validity_[static_cast<size_t>(i >> 3)] &= static_cast<uint8_t>(~(1u << (i & 7)));
  }
  // The slot's value: anything will do (it is null), but buffers keep one per slot. A struct
  // of a wide schema gives a null to every column below it, so this is the common case of a
  // missing field and is kept to one branch per builder.
  switch (null_fill_) {
    case NullFill::Zeros:
      if (null_width_ == 8) {
        values_.append(uint64_t{0});
      } else {
        values_.resize(values_.size() + null_width_, 0);
      }
      break;
    case NullFill::Bit:
      if ((i & 7) == 0) values_.push_back(0);
      break;
    case NullFill::DataOffset:
      offsets_.append(static_cast<int32_t>(data_.size()));
      break;
    case NullFill::ListOffset:
      offsets_.append(last_offset());
      break;
    case NullFill::Children:
      for (auto& child : children_) child->append_null();
      break;
  }
}

void ColumnBuilder::append_nulls(int64_t n) {
  const int64_t i = length_;
  const auto count = static_cast<size_t>(n - i);
  // Validity: bits [i, n) clear (bits past the length may be left set by truncate()).
  if (!has_nulls_) {
    has_nulls_ = true;
    validity_.assign(static_cast<size_t>((i + 7) >> 3), 0xFF);
    if ((i & 7) != 0) validity_.back() = static_cast<uint8_t>((1u << (i & 7)) - 1);
  } else if ((i & 7) != 0) {
    validity_[static_cast<size_t>(i >> 3)] &= static_cast<uint8_t>((1u << (i & 7)) - 1);
  }
  const auto validity_bytes = static_cast<size_t>((n + 7) >> 3);
  if (validity_bytes > validity_.size()) validity_.resize(validity_bytes, 0);
  length_ = n;
  switch (null_fill_) {
    case NullFill::Zeros:
      if (null_width_ == 8 && count <= 4) {
        // A record or a few without the field (a wide schema's common gap): no memset call.
        for (size_t k = 0; k < count; ++k) values_.append(uint64_t{0});
      } else {
        values_.resize(values_.size() + count * null_width_, 0);
      }
      break;
    case NullFill::Bit:
      values_.resize(static_cast<size_t>((n + 7) >> 3), 0);
      break;
    case NullFill::DataOffset:
    case NullFill::ListOffset: {
      const int32_t end =
          null_fill_ == NullFill::DataOffset ? static_cast<int32_t>(data_.size()) : last_offset();
      const size_t at = offsets_.size();
      offsets_.resize(at + count * sizeof(int32_t));
      for (size_t k = 0; k < count; ++k) {
        std::memcpy(offsets_.data() + at + k * sizeof(int32_t), &end, sizeof(int32_t));
      }
      break;
    }
    case NullFill::Children:
      break;
  }
}

void ColumnBuilder::settle() {
  for (auto& child : children_) {
    if (null_fill_ == NullFill::Children) child->pad_to(length_);
    child->settle();
  }
}

void ColumnBuilder::truncate(int64_t n) {
  // Children may hold values of a slot that was never finished: they are cut back even when
  // this builder itself has no more than n slots.
  if (n < length_) {
    length_ = n;
    if (has_nulls_) validity_.resize(static_cast<size_t>((n + 7) >> 3));
    const size_t width = fixed_width(type_->kind);
    if (width != 0) values_.resize(static_cast<size_t>(n) * width);
    if (type_->kind == Kind::Bool) values_.resize(static_cast<size_t>((n + 7) >> 3));
    if (has_offsets(type_->kind)) offsets_.resize((static_cast<size_t>(n) + 1) * sizeof(int32_t));
    if (type_->kind == Kind::Utf8 || type_->kind == Kind::Binary)
      data_.resize(static_cast<size_t>(last_offset()));
  }
  switch (type_->kind) {
    case Kind::Utf8:
    case Kind::Binary:
      data_.resize(static_cast<size_t>(last_offset()));
      break;
    case Kind::List:
    case Kind::Map:
      for (auto& child : children_) child->truncate(last_offset());
      break;
    case Kind::Struct:
      for (auto& child : children_) child->truncate(length_);
      break;
    default:
      break;
  }
}

size_t ColumnBuilder::memory_usage() const {
  size_t total = validity_.capacity() + values_.capacity() + offsets_.capacity() + data_.capacity();
  for (const auto& child : children_) total += child->memory_usage();
  return total;
}

void ColumnBuilder::reserve_like(int64_t rows) {
  if (length_ <= 0 || rows <= length_) return;
  const double scale = static_cast<double>(rows) / static_cast<double>(length_);
  auto grow = [scale](auto& v) {
    const auto want = static_cast<size_t>(static_cast<double>(v.size()) * scale * 1.05) + 16;
    if (want > v.capacity()) v.reserve(want);
  };
  grow(validity_);
  grow(values_);
  grow(offsets_);
  grow(data_);
  if (type_->kind == Kind::Struct) {
    for (auto& child : children_) child->reserve_like(rows);
  } else {
    // Elements of lists and maps: the same number of elements per slot.
    for (auto& child : children_) {
      child->reserve_like(static_cast<int64_t>(static_cast<double>(child->length()) * scale));
    }
  }
}

void ColumnBuilder::export_to(ArrowArray* out) {
  settle();
  auto owner = std::make_unique<ExportedArray>();
  const int64_t length = length_;
  const int64_t null_count = has_nulls_ ? count_nulls(validity_, length_) : 0;
  owner->validity = std::move(validity_);
  owner->values = std::move(values_);
  owner->offsets = std::move(offsets_);
  owner->data = std::move(data_);
  const void* validity = null_count == 0 ? nullptr : owner->validity.data();
  owner->buffers.push_back(validity);
  switch (type_->kind) {
    case Kind::Utf8:
    case Kind::Binary:
      owner->buffers.push_back(owner->offsets.data());
      owner->buffers.push_back(owner->data.data());
      break;
    case Kind::List:
      owner->buffers.push_back(owner->offsets.data());
      owner->child_arrays.resize(1);
      children_[0]->export_to(&owner->child_arrays[0]);
      break;
    case Kind::Map: {
      owner->buffers.push_back(owner->offsets.data());
      // The entries struct: no validity of its own, keys and values as children.
      auto entries = std::make_unique<ExportedArray>();
      entries->buffers.push_back(nullptr);
      entries->child_arrays.resize(2);
      children_[0]->export_to(&entries->child_arrays[0]);
      children_[1]->export_to(&entries->child_arrays[1]);
      const int64_t entry_count = entries->child_arrays[0].length;
      owner->child_arrays.resize(1);
      fill_array(&owner->child_arrays[0], std::move(entries), entry_count, 0);
      break;
    }
    case Kind::Struct:
      owner->child_arrays.resize(children_.size());
      for (size_t i = 0; i < children_.size(); ++i) {
        children_[i]->export_to(&owner->child_arrays[i]);
      }
      break;
    default:
      owner->buffers.push_back(owner->values.data());
      break;
  }
  fill_array(out, std::move(owner), length, null_count);
  reset();
}

}  // namespace sliceflow::arrow
