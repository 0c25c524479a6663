// Arrow PyCapsules (the C Data Interface as Python objects) in and out of the bindings.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "arrow/c_data.h"

namespace sliceflow::bindings {

template <typename T>
T* capsule_pointer(const pybind11::capsule& capsule, const char* name) {
  void* p = PyCapsule_GetPointer(capsule.ptr(), name);
  if (p == nullptr) {
    PyErr_Clear();
    throw std::invalid_argument(std::string("expected an Arrow PyCapsule named '") + name + "'");
  }
  return static_cast<T*>(p);
}

inline void release_array_capsule(PyObject* capsule) {
  auto* array = static_cast<ArrowArray*>(PyCapsule_GetPointer(capsule, "arrow_array"));
  if (array == nullptr) {
    PyErr_Clear();
    return;
  }
  std::unique_ptr<ArrowArray> owner(array);
  if (owner->release != nullptr) owner->release(owner.get());
}

// Hands an exported array to Python; pyarrow takes it over on import.
inline pybind11::capsule array_capsule(std::unique_ptr<ArrowArray> array) {
  PyObject* capsule = PyCapsule_New(array.get(), "arrow_array", release_array_capsule);
  if (capsule == nullptr) throw pybind11::error_already_set();
  array.release();
  return pybind11::reinterpret_steal<pybind11::capsule>(capsule);
}

}  // namespace sliceflow::bindings
