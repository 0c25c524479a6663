#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "arrow/c_data.h"
#include "arrow/type.h"
#include "bindings/capsules.h"
#include "bindings/register.h"
#include "window/global_aggregator.h"
#include "window/local_aggregator.h"
#include "window/plan.h"

namespace py = pybind11;

namespace sliceflow::bindings {
namespace {

using window::Plan;

Plan plan_from(const py::dict& d) { return window::parse_plan(plan_fields(d, "window plan")); }

// The partial schema of a plan over its local input schema (window::partial_schema).
py::capsule partial_schema(const py::dict& plan, const py::capsule& input_schema) {
  const Plan p = plan_from(plan);
  const auto input = type_from_capsule(input_schema);
  return schema_capsule(*window::partial_schema(p, agg::argument_types(p.aggs, *input)));
}

class PyLocal {
 public:
  PyLocal(const py::dict& plan, const py::capsule& input_schema, const py::capsule& partial_schema)
      : agg_(plan_from(plan), *type_from_capsule(input_schema), type_from_capsule(partial_schema)) {
  }

  bool add(const py::capsule& schema, const py::capsule& array, const py::object& sizes) {
    const auto in =
        validated_input(schema, array, arrow::Layout::Struct, "(the window input batch)", sizes);
    py::gil_scoped_release release;
    return agg_.add(*in.schema, *in.array);
  }
  py::object take() { return array_capsule_or_none(agg_.take()); }
  void set_late_floor(int64_t floor) { agg_.set_late_floor(floor); }
  py::object finish() {
    std::unique_ptr<ArrowArray> out;
    {
      py::gil_scoped_release release;
      out = agg_.finish();
    }
    return array_capsule_or_none(std::move(out));
  }
  py::dict stats() const { return counters_dict(agg_.stats().named()); }

 private:
  window::LocalAggregator agg_;
};

class PyGlobal {
 public:
  PyGlobal(const py::dict& plan, const py::capsule& partial_schema,
           const py::capsule& output_schema, int64_t max_output_rows)
      : agg_(plan_from(plan), type_from_capsule(partial_schema), type_from_capsule(output_schema),
             max_output_rows) {}

  void add(const py::capsule& schema, const py::capsule& array, int input,
           const py::object& sizes) {
    const auto in =
        validated_input(schema, array, arrow::Layout::Struct, "(the window partial batch)", sizes);
    agg_.add(*in.schema, in.array, input);
  }
  void set_bounds(int64_t floor, int64_t limit) { agg_.set_bounds(floor, limit); }
  py::object take_carry() { return array_capsule(agg_.take_carry()); }
  py::object pull() {
    std::unique_ptr<ArrowArray> out;
    {
      py::gil_scoped_release release;
      out = agg_.pull();
    }
    return array_capsule_or_none(std::move(out));
  }
  void finish() { agg_.finish(); }
  py::dict stats() const { return counters_dict(agg_.stats().named()); }

 private:
  window::GlobalAggregator agg_;
};

}  // namespace

void register_window(py::module_& m) {
  m.def("partial_schema", &partial_schema, py::arg("plan"), py::arg("input_schema_capsule"),
        "The partial schema (an 'arrow_schema' capsule) of a plan over its local input schema.");
  py::class_<PyLocal>(m, "LocalAggregator",
                      "The local phase: folds input batches into (key, slice) partial rows.")
      .def(py::init<const py::dict&, const py::capsule&, const py::capsule&>(), py::arg("plan"),
           py::arg("input_schema_capsule"), py::arg("partial_schema_capsule"))
      .def("add", &PyLocal::add, py::arg("schema_capsule"), py::arg("array_capsule"),
           py::arg("buffer_sizes") = py::none(),
           "Fold a batch (validated first: ValueError if malformed); True when a flushed partial "
           "batch is ready for take().")
      .def("take", &PyLocal::take, "The flushed partial batch (an 'arrow_array' capsule) or None.")
      .def("finish", &PyLocal::finish, "Flush what is left: a capsule or None.")
      .def("set_late_floor", &PyLocal::set_late_floor, py::arg("floor_us"),
           "Streaming: rows do not count in windows ending at or before floor_us.")
      .def("stats", &PyLocal::stats);
  py::class_<PyGlobal>(m, "GlobalAggregator",
                       "The global phase: sweeps sorted partial rows and fires windows.")
      .def(py::init<const py::dict&, const py::capsule&, const py::capsule&, int64_t>(),
           py::arg("plan"), py::arg("partial_schema_capsule"), py::arg("output_schema_capsule"),
           py::arg("max_output_rows") = 65536)
      .def("add", &PyGlobal::add, py::arg("schema_capsule"), py::arg("array_capsule"),
           py::arg("input") = 0, py::arg("buffer_sizes") = py::none(),
           "Queue partial rows sorted by (__key, __slice); the array is moved in. Input 1: a "
           "second sorted run, merged with input 0 (streaming).")
      .def("set_bounds", &PyGlobal::set_bounds, py::arg("floor_us"), py::arg("limit_us"),
           "Streaming: fire windows ending in (floor_us, limit_us] only; carry the rest.")
      .def("take_carry", &PyGlobal::take_carry,
           "Row numbers (into input 0, then input 1) of the partial rows still needed: an "
           "int64 'arrow_array' capsule.")
      .def("pull", &PyGlobal::pull, "Up to max_output_rows finished windows (a capsule) or None.")
      .def("finish", &PyGlobal::finish, "End of input: the last key's windows become pullable.")
      .def("stats", &PyGlobal::stats);
}

}  // namespace sliceflow::bindings
