// The byte format of a key's state in the changelog payload of a sealed state value
// (docs/state.md, "changelog_agg payload"): fixed-width values little-endian whatever the
// machine (state/byte_order.h), strings as a u32 length and their bytes. The reader checks
// every length, so a damaged or forged payload gives a clear error, never a read past its end.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "arrow/byte_buffer.h"
#include "state/byte_order.h"

namespace sliceflow::changelog {

class StateWriter {
 public:
  explicit StateWriter(arrow::ByteBuffer& out) : out_(out) {}
  template <typename T>
  void put(T v) {
    char bytes[sizeof(T)];
    state::store_le(bytes, v);
    out_.append_bytes(bytes, sizeof(T));
  }
  void put_bytes(std::string_view s) {
    put<uint32_t>(static_cast<uint32_t>(s.size()));
    out_.append_bytes(s.data(), s.size());
  }

 private:
  arrow::ByteBuffer& out_;
};

class StateReader {
 public:
  explicit StateReader(std::string_view in) : in_(in) {}
  template <typename T>
  T get() {
    need(sizeof(T));
    const T v = state::load_le<T>(in_.data() + at_);
    at_ += sizeof(T);
    return v;
  }
  std::string_view get_bytes() {
    const auto n = get<uint32_t>();
    need(n);
    const std::string_view s = in_.substr(at_, n);
    at_ += n;
    return s;
  }
  bool done() const { return at_ == in_.size(); }

 private:
  void need(size_t n) const {
    if (in_.size() - at_ < n) {
      throw std::invalid_argument("changelog_agg state: the key states are cut short or damaged");
    }
  }
  std::string_view in_;
  size_t at_ = 0;
};

}  // namespace sliceflow::changelog
