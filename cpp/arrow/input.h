// A read-only view of an imported Arrow string or binary array (the JSON documents).
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

#include "arrow/c_data.h"

namespace sliceflow::arrow {

class StringArrayView {
 public:
  StringArrayView(const ArrowSchema& schema, const ArrowArray& array) : array_(array) {
    if (array.release == nullptr) throw std::invalid_argument("released ArrowArray");
    const std::string format = schema.format ? schema.format : "";
    if (format == "u" || format == "z") {
      large_ = false;
    } else if (format == "U" || format == "Z") {
      large_ = true;
    } else {
      throw std::invalid_argument("JSON documents must be a string or binary array, got format '" +
                                  format + "'");
    }
    if (array.n_buffers != 3) throw std::invalid_argument("malformed string ArrowArray");
    validity_ = static_cast<const uint8_t*>(array.buffers[0]);
    offsets_ = array.buffers[1];
    data_ = static_cast<const char*>(array.buffers[2]);
    // A producer may omit the data buffer of an array of empty strings (validate.h refuses it
    // when an offset reaches past 0): the parsers must still get a non-null address.
    if (data_ == nullptr) data_ = "";
    if (array.length > 0 && offsets_ == nullptr) {
      throw std::invalid_argument("malformed string ArrowArray: no offsets");
    }
    data_end_ = data_ + (array.length > 0 ? offset_at(array.length) : 0);
  }

  int64_t size() const { return array_.length; }
  bool is_null(int64_t i) const {
    if (validity_ == nullptr || array_.null_count == 0) return false;
    const int64_t j = i + array_.offset;
    return ((validity_[j >> 3] >> (j & 7)) & 1) == 0;
  }
  std::string_view get(int64_t i) const {
    const int64_t begin = offset_at(i);
    const int64_t end = offset_at(i + 1);
    if (begin < 0 || end < begin)
      throw std::invalid_argument("malformed string ArrowArray offsets");
    return {data_ + begin, static_cast<size_t>(end - begin)};
  }
  // Bytes that may be read from the start of value i to the end of the data in use.
  size_t readable_from(const char* p) const { return static_cast<size_t>(data_end_ - p); }

 private:
  int64_t offset_at(int64_t i) const {
    const int64_t j = i + array_.offset;
    if (large_) return static_cast<const int64_t*>(offsets_)[j];
    return static_cast<const int32_t*>(offsets_)[j];
  }

  const ArrowArray& array_;
  bool large_ = false;
  const uint8_t* validity_ = nullptr;
  const void* offsets_ = nullptr;
  const char* data_ = nullptr;
  const char* data_end_ = nullptr;
};

}  // namespace sliceflow::arrow
