// The bytes the bindings exchange with Python, in one place: C++ vectors and byte ranges handed
// out as `bytes` (one copy, as Python owns its bytes), and Python buffers held while C++ reads
// them (released when the holder goes, also on an exception). The capsules of Arrow data are
// capsules.h's. Cost: O(size) for a copy out; holding a buffer is O(1), unless a caller asks
// for the bytes of a non-contiguous one (one copy in C order).
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sliceflow::bindings {

// `size` bytes at `data` as a Python bytes object.
inline pybind11::bytes bytes_of(const void* data, size_t size) {
  return pybind11::bytes(static_cast<const char*>(data), size);
}

// A vector's elements, in memory order (little-endian on every supported platform), as bytes.
template <typename T>
pybind11::bytes vector_bytes(const std::vector<T>& v) {
  return bytes_of(v.data(), v.size() * sizeof(T));
}

// A Python buffer held (PyObject_GetBuffer) while C++ reads it; released on destruction.
class HeldBuffer {
 public:
  // `flags`: PyBUF_C_CONTIGUOUS (a buffer that is not C-contiguous raises BufferError here) or
  // PyBUF_FULL_RO (any layout: bytes() copies a strided, reversed or indirect one). Throws
  // pybind11::error_already_set when the object cannot give such a buffer.
  HeldBuffer(const pybind11::buffer& data, int flags) {
    if (PyObject_GetBuffer(data.ptr(), &view_, flags) != 0) throw pybind11::error_already_set();
  }
  ~HeldBuffer() { PyBuffer_Release(&view_); }
  HeldBuffer(const HeldBuffer&) = delete;
  HeldBuffer& operator=(const HeldBuffer&) = delete;

  const Py_buffer& view() const { return view_; }
  bool one_byte_items() const { return view_.itemsize == 1; }

  // The buffer's bytes in C order, as bytes(memoryview(data)) reads them: in place when
  // C-contiguous (the common case), else a copy this holder keeps.
  std::string_view bytes() {
    if (!PyBuffer_IsContiguous(&view_, 'C')) {
      copy_.resize(static_cast<size_t>(view_.len));
      if (PyBuffer_ToContiguous(copy_.data(), &view_, view_.len, 'C') != 0)
        throw pybind11::error_already_set();
      return copy_;
    }
    return {static_cast<const char*>(view_.buf), static_cast<size_t>(view_.len)};
  }

 private:
  Py_buffer view_{};
  std::string copy_;
};

}  // namespace sliceflow::bindings
