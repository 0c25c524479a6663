// What the kernel bindings exchange with Python, in one place: Arrow PyCapsules (the C Data
// Interface as Python objects) in and out, the optional buffer sizes of an input array, plan
// dicts read into agg::PlanFields (the core parses them), and counters as dicts. The binding
// files only declare classes and functions over these. Cost: O(1) per call but for the plan
// dict (O(fields), at construction) and the validation of an input array (arrow/validate.h).
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "agg/plan_fields.h"
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

// The type an 'arrow_schema' capsule describes.
inline std::unique_ptr<arrow::Type> type_from_capsule(const pybind11::capsule& schema) {
  return arrow::type_from_schema(*capsule_pointer<ArrowSchema>(schema, "arrow_schema"));
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
inline ValidatedInput validated_input(const pybind11::capsule& schema,
                                      const pybind11::capsule& array, arrow::Layout expected,
                                      const std::string& what, const pybind11::object& sizes) {
  auto* s = capsule_pointer<ArrowSchema>(schema, "arrow_schema");
  auto* a = capsule_pointer<ArrowArray>(array, "arrow_array");
  arrow::validate_array(*s, *a, expected, what, buffer_sizes(sizes));
  return {s, a};
}

// The destructor of a capsule that owns a C Data Interface struct (T: ArrowArray, ArrowSchema).
template <typename T>
void release_capsule(PyObject* capsule, const char* name) {
  auto* p = static_cast<T*>(PyCapsule_GetPointer(capsule, name));
  if (p == nullptr) {
    PyErr_Clear();
    return;
  }
  std::unique_ptr<T> owner(p);
  if (owner->release != nullptr) owner->release(owner.get());
}

inline void release_array_capsule(PyObject* capsule) {
  release_capsule<ArrowArray>(capsule, "arrow_array");
}
inline void release_schema_capsule(PyObject* capsule) {
  release_capsule<ArrowSchema>(capsule, "arrow_schema");
}

// Hands `owned` to Python as a capsule named `name` (pyarrow takes it over on import).
template <typename T>
pybind11::capsule owning_capsule(std::unique_ptr<T> owned, const char* name,
                                 PyCapsule_Destructor release) {
  PyObject* capsule = PyCapsule_New(owned.get(), name, release);
  if (capsule == nullptr) {
    owned->release(owned.get());
    throw pybind11::error_already_set();
  }
  owned.release();
  return pybind11::reinterpret_steal<pybind11::capsule>(capsule);
}

// Hands an exported array to Python; pyarrow takes it over on import.
inline pybind11::capsule array_capsule(std::unique_ptr<ArrowArray> array) {
  return owning_capsule(std::move(array), "arrow_array", release_array_capsule);
}

// An exported array, or None for no array.
inline pybind11::object array_capsule_or_none(std::unique_ptr<ArrowArray> array) {
  if (!array) return pybind11::none();
  return array_capsule(std::move(array));
}

// `type` exported as an 'arrow_schema' capsule (pyarrow: pa.schema / pa.field of an object whose
// __arrow_c_schema__ returns it).
inline pybind11::capsule schema_capsule(const arrow::Type& type) {
  auto schema = std::make_unique<ArrowSchema>();
  arrow::export_schema(type, schema.get());
  return owning_capsule(std::move(schema), "arrow_schema", release_schema_capsule);
}

// A plan dict from sliceflow.window.plan / changelog_plan as agg::PlanFields: bool, int and str
// values, and "aggs", a list of {"fn": str, "arg": int}. `who` names the plan in messages.
inline agg::PlanFields plan_fields(const pybind11::dict& d, const char* who) {
  namespace py = pybind11;
  agg::PlanFields out(who);
  auto bad = [&](const std::string& key) {
    return std::invalid_argument(std::string(who) + ": '" + key +
                                 "' has a value of an unexpected type");
  };
  for (const auto& [k, v] : d) {
    const auto key = k.cast<std::string>();
    if (key == "aggs") {
      if (!py::isinstance<py::list>(v)) throw bad(key);
      agg::PlanFields::AggNames aggs;
      for (const auto& a : v.cast<py::list>()) {
        if (!py::isinstance<py::dict>(a)) throw bad(key);
        const auto agg = a.cast<py::dict>();
        if (!agg.contains("fn") || !agg.contains("arg")) throw bad(key);
        aggs.emplace_back(agg["fn"].cast<std::string>(), agg["arg"].cast<int64_t>());
      }
      out.set_aggs(std::move(aggs));
    } else if (py::isinstance<py::bool_>(v)) {
      out.set_bool(key, v.cast<bool>());
    } else if (py::isinstance<py::int_>(v)) {
      out.set_int(key, v.cast<int64_t>());
    } else if (py::isinstance<py::str>(v)) {
      out.set_string(key, v.cast<std::string>());
    } else {
      throw bad(key);
    }
  }
  return out;
}

// Counters (a kernel's stats().named()) as a dict.
inline pybind11::dict counters_dict(const std::vector<std::pair<const char*, int64_t>>& named) {
  pybind11::dict d;
  for (const auto& [name, value] : named) d[name] = value;
  return d;
}

}  // namespace sliceflow::bindings
