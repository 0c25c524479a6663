#include <pybind11/pybind11.h>

#include <cstdint>
#include <vector>

#include "arrow/type.h"
#include "bindings/capsules.h"
#include "bindings/register.h"
#include "dedup/deduplicator.h"
#include "dedup/plan.h"

namespace py = pybind11;

namespace sliceflow::bindings {
namespace {

template <typename T>
py::bytes vector_bytes(const std::vector<T>& v) {
  return py::bytes(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

class PyDeduplicator {
 public:
  explicit PyDeduplicator(const py::dict& plan)
      : dedup_(dedup::parse_plan(plan_fields(plan, "dedup plan"))) {}

  // (emit rows int64, emit ops int8, keep rows int64), each as little-endian bytes.
  py::tuple step(const py::capsule& state_schema, const py::capsule& state,
                 const py::object& state_sizes, const py::capsule& rows_schema,
                 const py::capsule& rows, const py::object& rows_sizes) {
    const auto s = validated_input(state_schema, state, arrow::Layout::Struct,
                                   "(the deduplicate state rows)", state_sizes);
    const auto r = validated_input(rows_schema, rows, arrow::Layout::Struct,
                                   "(the deduplicate input batch)", rows_sizes);
    {
      py::gil_scoped_release release;
      dedup_.step(*s.schema, *s.array, *r.schema, *r.array);
    }
    return py::make_tuple(vector_bytes(dedup_.emit_rows()), vector_bytes(dedup_.emit_ops()),
                          vector_bytes(dedup_.keep_rows()));
  }
  int64_t live_keys() const { return dedup_.live_keys(); }
  py::dict stats() const { return counters_dict(dedup_.stats().named()); }

 private:
  dedup::Deduplicator dedup_;
};

}  // namespace

void register_dedup(py::module_& m) {
  py::class_<PyDeduplicator>(m, "Deduplicator",
                             "ROW_NUMBER() = 1 per key over whole batches: row indices in, "
                             "changes and retained rows out.")
      .def(py::init<const py::dict&>(), py::arg("plan"))
      .def("step", &PyDeduplicator::step, py::arg("state_schema_capsule"),
           py::arg("state_array_capsule"), py::arg("state_buffer_sizes"),
           py::arg("rows_schema_capsule"), py::arg("rows_array_capsule"),
           py::arg("rows_buffer_sizes"),
           "One step over the retained rows and the new rows (validated first: ValueError if "
           "malformed): (emit rows: int64 bytes, emit ops: int8 bytes (0 +I, 1 -U, 2 +U, 3 -D), "
           "retained rows: int64 bytes), row c being state row c, else new row c - len(state).")
      .def("live_keys", &PyDeduplicator::live_keys, "Keys with a retained row after the step.")
      .def("stats", &PyDeduplicator::stats);
}

}  // namespace sliceflow::bindings
