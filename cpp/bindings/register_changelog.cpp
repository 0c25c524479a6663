// sliceflow._core.changelog: declares the changelog encoder and aggregator
// (cpp/changelog/) to Python; no logic of its own.
#include <pybind11/pybind11.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "arrow/byte_buffer.h"
#include "arrow/c_data.h"
#include "arrow/type.h"
#include "bindings/buffers.h"
#include "bindings/capsules.h"
#include "bindings/register.h"
#include "changelog/aggregator.h"
#include "changelog/encoder.h"
#include "changelog/plan.h"

namespace py = pybind11;

namespace sliceflow::bindings {
namespace {

using changelog::Plan;

Plan plan_from(const py::dict& d) {
  return changelog::parse_plan(plan_fields(d, "changelog plan"));
}

// The delta schema of a plan over its encoder input schema (changelog::delta_schema).
py::capsule delta_schema(const py::dict& plan, const py::capsule& input_schema) {
  const Plan p = plan_from(plan);
  const auto input = type_from_capsule(input_schema);
  return schema_capsule(*changelog::delta_schema(p, agg::argument_types(p.aggs, *input)));
}

class PyEncoder {
 public:
  PyEncoder(const py::dict& plan, const py::capsule& input_schema, const py::capsule& delta_schema)
      : enc_(plan_from(plan), *type_from_capsule(input_schema), type_from_capsule(delta_schema)) {}

  void add(const py::capsule& schema, const py::capsule& array, const py::object& sizes) {
    const auto in =
        validated_input(schema, array, arrow::Layout::Struct, "(the changelog input batch)", sizes);
    py::gil_scoped_release release;
    enc_.add(*in.schema, *in.array);
  }
  void finish() { enc_.finish(); }
  py::object take() { return array_capsule_or_none(enc_.take()); }
  py::dict stats() const { return counters_dict(enc_.stats().named()); }

 private:
  changelog::Encoder enc_;
};

class PyAggregator {
 public:
  PyAggregator(const py::dict& plan, const py::capsule& delta_schema,
               const py::capsule& output_schema, const std::string& emit, int64_t max_output_rows)
      : agg_(plan_from(plan), type_from_capsule(delta_schema), type_from_capsule(output_schema),
             changelog::emit_from_name(emit), max_output_rows) {}

  void load(const py::bytes& blob) {
    const std::string_view view = blob;
    py::gil_scoped_release release;
    agg_.load(view);
  }
  void add(const py::capsule& schema, const py::capsule& array, const py::object& sizes) {
    const auto in =
        validated_input(schema, array, arrow::Layout::Struct, "(the changelog delta batch)", sizes);
    py::gil_scoped_release release;
    agg_.add(*in.schema, *in.array);
  }
  void end_bundle() { agg_.end_bundle(); }
  void finish() { agg_.finish(); }
  py::object take() {
    std::unique_ptr<ArrowArray> out;
    {
      py::gil_scoped_release release;
      out = agg_.take();
    }
    return array_capsule_or_none(std::move(out));
  }
  py::bytes dump() {
    arrow::ByteBuffer out;
    {
      py::gil_scoped_release release;
      agg_.dump(out);
    }
    return bytes_of(out.data(), out.size());
  }
  py::bytes dump_changes() {
    arrow::ByteBuffer out;
    {
      py::gil_scoped_release release;
      agg_.dump_changes(out);
    }
    return bytes_of(out.data(), out.size());
  }
  void apply_changes(const py::bytes& payload) {
    const std::string_view view = payload;
    py::gil_scoped_release release;
    agg_.apply_changes(view);
  }
  void reset() { agg_.reset(); }
  void reset_stats() { agg_.reset_stats(); }
  size_t changed_keys() const { return agg_.changed_keys(); }
  size_t key_slots() const { return agg_.key_slots(); }
  size_t live_keys() const { return agg_.live_keys(); }
  size_t memory_usage() const { return agg_.memory_usage(); }
  py::dict stats() const { return counters_dict(agg_.stats().named()); }

 private:
  changelog::Aggregator agg_;
};

}  // namespace

void register_changelog(py::module_& m) {
  m.def("delta_schema", &delta_schema, py::arg("plan"), py::arg("input_schema_capsule"),
        "The delta schema (an 'arrow_schema' capsule) of a plan over its encoder input schema.");
  py::class_<PyEncoder>(m, "Encoder",
                        "The local phase: input rows to signed delta rows (folded per key or not).")
      .def(py::init<const py::dict&, const py::capsule&, const py::capsule&>(), py::arg("plan"),
           py::arg("input_schema_capsule"), py::arg("delta_schema_capsule"))
      .def("add", &PyEncoder::add, py::arg("schema_capsule"), py::arg("array_capsule"),
           py::arg("buffer_sizes") = py::none(),
           "Encode (or fold) a batch of input rows (validated first: ValueError if malformed).")
      .def("finish", &PyEncoder::finish, "End of input: flush the folded rows.")
      .def("take", &PyEncoder::take,
           "The delta rows built so far (an 'arrow_array' capsule) or None.")
      .def("stats", &PyEncoder::stats);
  py::class_<PyAggregator>(m, "Aggregator",
                           "The global phase: per-key state, mini-batch bundles, net changes.")
      .def(py::init<const py::dict&, const py::capsule&, const py::capsule&, const std::string&,
                    int64_t>(),
           py::arg("plan"), py::arg("delta_schema_capsule"), py::arg("output_schema_capsule"),
           py::arg("emit") = "changelog", py::arg("max_output_rows") = 65536)
      .def("load", &PyAggregator::load, py::arg("payload"),
           "Add the keys of a state payload written by dump() (the payload of a sealed state "
           "value).")
      .def("add", &PyAggregator::add, py::arg("schema_capsule"), py::arg("array_capsule"),
           py::arg("buffer_sizes") = py::none(),
           "Apply delta rows in order (validated first: ValueError if malformed).")
      .def("end_bundle", &PyAggregator::end_bundle,
           "End the open bundle (the end of a micro-batch).")
      .def("finish", &PyAggregator::finish,
           "End of input (emit='final': queue one +I row per live key).")
      .def("take", &PyAggregator::take, "Output rows built so far (a capsule) or None.")
      .def("dump", &PyAggregator::dump,
           "The live keys' state as bytes (the payload of a state value); every key clean.")
      .def("dump_changes", &PyAggregator::dump_changes,
           "The changed keys' states since the last dump()/dump_changes() (a changes payload).")
      .def("apply_changes", &PyAggregator::apply_changes, py::arg("payload"),
           "Apply a changes payload: each key takes its new state or leaves.")
      .def("reset", &PyAggregator::reset, "Forget every key (reuse for the next bucket).")
      .def("reset_stats", &PyAggregator::reset_stats, "Zero the counters, keeping the keys.")
      .def("changed_keys", &PyAggregator::changed_keys)
      .def("key_slots", &PyAggregator::key_slots)
      .def("live_keys", &PyAggregator::live_keys)
      .def("memory_usage", &PyAggregator::memory_usage)
      .def("stats", &PyAggregator::stats);
}

}  // namespace sliceflow::bindings
