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

template <typename T>
T item(const py::dict& d, const char* key) {
  if (!d.contains(key)) throw std::invalid_argument(std::string("window plan: missing '") + key + "'");
  return d[key].cast<T>();
}

Plan plan_from(const py::dict& d) {
  Plan plan;
  const auto kind = item<std::string>(d, "kind");
  if (kind == "tumble") {
    plan.kind = window::WindowKind::Tumble;
  } else if (kind == "hop") {
    plan.kind = window::WindowKind::Hop;
  } else if (kind == "cumulate") {
    plan.kind = window::WindowKind::Cumulate;
  } else {
    throw std::invalid_argument("window plan: unknown kind '" + kind + "'");
  }
  plan.size = item<int64_t>(d, "size");
  plan.slide = item<int64_t>(d, "slide");
  plan.offset = item<int64_t>(d, "offset");
  plan.num_keys = item<int>(d, "num_keys");
  for (const auto& a : item<py::list>(d, "aggs")) {
    const auto agg = a.cast<py::dict>();
    plan.aggs.push_back({agg::agg_fn_from_name(item<std::string>(agg, "fn")), item<int>(agg, "arg")});
  }
  if (d.contains("ansi")) plan.ansi = d["ansi"].cast<bool>();
  if (d.contains("bundle_rows")) plan.bundle_rows = d["bundle_rows"].cast<int64_t>();
  if (d.contains("bundle_bytes")) plan.bundle_bytes = d["bundle_bytes"].cast<int64_t>();
  if (d.contains("sort_partials")) plan.sort_partials = d["sort_partials"].cast<bool>();
  plan.validate();
  return plan;
}

std::unique_ptr<arrow::Type> type_of(const py::capsule& schema) {
  return arrow::type_from_schema(*capsule_pointer<ArrowSchema>(schema, "arrow_schema"));
}

// The partial schema of a plan over its local input schema (window::partial_schema).
py::capsule partial_schema(const py::dict& plan, const py::capsule& input_schema) {
  const Plan p = plan_from(plan);
  const auto input = type_of(input_schema);
  if (input->kind != arrow::Kind::Struct) throw std::invalid_argument("the window input schema must be a struct of columns");
  return schema_capsule(*window::partial_schema(p, agg::argument_types(p.aggs, *input)));
}

py::object maybe_capsule(std::unique_ptr<ArrowArray> array) {
  if (!array) return py::none();
  return array_capsule(std::move(array));
}

class PyLocal {
 public:
  PyLocal(const py::dict& plan, const py::capsule& input_schema, const py::capsule& partial_schema)
      : agg_(plan_from(plan), *type_of(input_schema), type_of(partial_schema)) {}

  bool add(const py::capsule& schema, const py::capsule& array, const py::object& sizes) {
    const auto in = validated_input(schema, array, arrow::Layout::Struct, "(the window input batch)", sizes);
    py::gil_scoped_release release;
    return agg_.add(*in.schema, *in.array);
  }
  py::object take() { return maybe_capsule(agg_.take()); }
  void set_late_floor(int64_t floor) { agg_.set_late_floor(floor); }
  py::object finish() {
    std::unique_ptr<ArrowArray> out;
    {
      py::gil_scoped_release release;
      out = agg_.finish();
    }
    return maybe_capsule(std::move(out));
  }
  py::dict stats() const {
    const auto& s = agg_.stats();
    py::dict d;
    d["rows_in"] = s.rows_in;
    d["rows_null_time"] = s.rows_null_time;
    d["rows_out_of_range"] = s.rows_out_of_range;
    d["rows_late"] = s.rows_late;
    d["late_row_windows"] = s.late_row_windows;
    d["partials_out"] = s.partials_out;
    d["bundle_flushes"] = s.bundle_flushes;
    return d;
  }

 private:
  window::LocalAggregator agg_;
};

class PyGlobal {
 public:
  PyGlobal(const py::dict& plan, const py::capsule& partial_schema, const py::capsule& output_schema,
           int64_t max_output_rows)
      : agg_(plan_from(plan), type_of(partial_schema), type_of(output_schema), max_output_rows) {}

  void add(const py::capsule& schema, const py::capsule& array, int input, const py::object& sizes) {
    const auto in = validated_input(schema, array, arrow::Layout::Struct, "(the window partial batch)", sizes);
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
    return maybe_capsule(std::move(out));
  }
  void finish() { agg_.finish(); }
  py::dict stats() const {
    const auto& s = agg_.stats();
    py::dict d;
    d["partials_in"] = s.partials_in;
    d["slices"] = s.slices;
    d["windows_fired"] = s.windows_fired;
    d["windows_out_of_range"] = s.windows_out_of_range;
    d["partials_carried"] = s.partials_carried;
    d["slices_merged"] = s.sweep.slices_merged;
    d["slices_retracted"] = s.sweep.slices_retracted;
    d["partials_combined"] = s.sweep.partials_combined;
    return d;
  }

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
