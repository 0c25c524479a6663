// Arrow PyCapsules (the C Data Interface as Python objects) in and out of the bindings.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "arrow/c_data.h"
#include "arrow/type.h"
#include "arrow/validate.h"

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

// The optional `buffer_sizes` argument of the entry points that take an array capsule: the
// sizes of the array's buffers in pre-order (pyarrow's Array.buffers(), -1 for None), so that
// validation can bound offsets by the data they index. None: sizes unknown.
inline arrow::BufferSizes buffer_sizes(const pybind11::object& sizes) {
  arrow::BufferSizes out;
  if (sizes.is_none()) return out;
  for (const pybind11::handle item : sizes) out.push_back(item.cast<int64_t>());
  return out;
}

// The schema and array of a capsule pair, validated (arrow/validate.h) as `expected` at the top.
struct ValidatedInput {
  ArrowSchema* schema;
  ArrowArray* array;
};
inline ValidatedInput validated_input(const pybind11::capsule& schema, const pybind11::capsule& array,
                                      arrow::Layout expected, const std::string& what,
                                      const pybind11::object& sizes) {
  auto* s = capsule_pointer<ArrowSchema>(schema, "arrow_schema");
  auto* a = capsule_pointer<ArrowArray>(array, "arrow_array");
  arrow::validate_array(*s, *a, expected, what, buffer_sizes(sizes));
  return {s, a};
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

inline void release_schema_capsule(PyObject* capsule) {
  auto* schema = static_cast<ArrowSchema*>(PyCapsule_GetPointer(capsule, "arrow_schema"));
  if (schema == nullptr) {
    PyErr_Clear();
    return;
  }
  std::unique_ptr<ArrowSchema> owner(schema);
  if (owner->release != nullptr) owner->release(owner.get());
}

// `type` exported as an 'arrow_schema' capsule (pyarrow: pa.schema / pa.field of an object whose
// __arrow_c_schema__ returns it).
inline pybind11::capsule schema_capsule(const arrow::Type& type) {
  auto schema = std::make_unique<ArrowSchema>();
  arrow::export_schema(type, schema.get());
  PyObject* capsule = PyCapsule_New(schema.get(), "arrow_schema", release_schema_capsule);
  if (capsule == nullptr) {
    schema->release(schema.get());
    throw pybind11::error_already_set();
  }
  schema.release();
  return pybind11::reinterpret_steal<pybind11::capsule>(capsule);
}

}  // namespace sliceflow::bindings
