// A growable byte buffer for fixed-width Arrow values. Unlike std::vector<uint8_t>, appending a
// value is an inlined capacity check and a memcpy: no zero-filling resize call per value, which
// is the hottest operation of every column builder.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include "memory/buffer_pool.h"

namespace sliceflow::arrow {

// Copies n bytes; keys and small strings (up to 16 bytes) inline, without a libc call.
inline void copy_bytes(uint8_t* d, const void* src, size_t n) {
  const auto* p = static_cast<const uint8_t*>(src);
  if (n > 16) {
    std::memcpy(d, p, n);
  } else if (n >= 8) {
    uint64_t a, b;
    std::memcpy(&a, p, 8);
    std::memcpy(&b, p + n - 8, 8);
    std::memcpy(d, &a, 8);
    std::memcpy(d + n - 8, &b, 8);
  } else if (n >= 4) {
    uint32_t a, b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + n - 4, 4);
    std::memcpy(d, &a, 4);
    std::memcpy(d + n - 4, &b, 4);
  } else {
    for (size_t i = 0; i < n; ++i) d[i] = p[i];
  }
}

// Byte equality; short keys inline, without a libc call.
inline bool equal_bytes(const char* a, const char* b, size_t n) {
  if (n > 16) return std::memcmp(a, b, n) == 0;
  if (n >= 8) {
    uint64_t x0, x1, y0, y1;
    std::memcpy(&x0, a, 8);
    std::memcpy(&y0, b, 8);
    std::memcpy(&x1, a + n - 8, 8);
    std::memcpy(&y1, b + n - 8, 8);
    return ((x0 ^ y0) | (x1 ^ y1)) == 0;
  }
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

class ByteBuffer {
 public:
  ByteBuffer() = default;
  ByteBuffer(ByteBuffer&& o) noexcept : data_(o.data_), size_(o.size_), capacity_(o.capacity_) {
    o.data_ = nullptr;
    o.size_ = o.capacity_ = 0;
  }
  ByteBuffer& operator=(ByteBuffer&& o) noexcept {
    if (this != &o) {
      memory::buffer_pool::give(data_, capacity_);
      data_ = o.data_;
      size_ = o.size_;
      capacity_ = o.capacity_;
      o.data_ = nullptr;
      o.size_ = o.capacity_ = 0;
    }
    return *this;
  }
  ByteBuffer(const ByteBuffer&) = delete;
  ByteBuffer& operator=(const ByteBuffer&) = delete;
  ~ByteBuffer() { memory::buffer_pool::give(data_, capacity_); }

  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  uint8_t& operator[](size_t i) { return data_[i]; }
  uint8_t& back() { return data_[size_ - 1]; }

  template <typename T>
  void append(const T& v) {
    if (capacity_ - size_ < sizeof(T)) grow(size_ + sizeof(T));
    std::memcpy(data_ + size_, &v, sizeof(T));
    size_ += sizeof(T);
  }
  void append_bytes(const void* p, size_t n) {
    if (capacity_ - size_ < n) grow(size_ + n);
    copy_bytes(data_ + size_, p, n);
    size_ += n;
  }
  void push_back(uint8_t b) { append(b); }
  void resize(size_t n, uint8_t fill = 0) {
    if (n > capacity_) grow(n);
    if (n > size_) std::memset(data_ + size_, fill, n - size_);
    size_ = n;
  }
  void reserve(size_t n) {
    if (n > capacity_) reallocate(n);
  }
  void clear() { size_ = 0; }

 private:
  void grow(size_t need) { reallocate(std::max({need, capacity_ * 2, size_t{64}})); }
  // Large buffers come from (and go back to) buffer_pool; a pooled buffer keeps its pages.
  void reallocate(size_t capacity) {
    capacity = memory::buffer_pool::round_up(capacity);
    if (uint8_t* cached = memory::buffer_pool::take(capacity)) {
      if (size_ > 0) std::memcpy(cached, data_, size_);
      memory::buffer_pool::give(data_, capacity_);
      data_ = cached;
    } else {
      auto* p = static_cast<uint8_t*>(std::realloc(data_, capacity));
      if (p == nullptr) throw std::bad_alloc();
      data_ = p;
    }
    capacity_ = capacity;
  }

  uint8_t* data_ = nullptr;  // malloc'd; freed or pooled by memory::buffer_pool::give
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace sliceflow::arrow
