#include <pybind11/pybind11.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "arrow/byte_buffer.h"
#include "arrow/c_data.h"
#include "arrow/type.h"
#include "bindings/capsules.h"
#include "bindings/register.h"
#include "changelog/aggregator.h"
#include "changelog/encoder.h"
#include "changelog/plan.h"

namespace py = pybind11;

namespace sliceflow::bindings {
namespace {

using changelog::Plan;

template <typename T>
T item(const py::dict& d, const char* key) {
  if (!d.contains(key)) throw std::invalid_argument(std::string("changelog plan: missing '") + key + "'");
  return d[key].cast<T>();
}

Plan plan_from(const py::dict& d) {
  Plan plan;
  plan.num_keys = item<int>(d, "num_keys");
  plan.op_column = item<int>(d, "op_column");
  for (const auto& a : item<py::list>(d, "aggs")) {
    const auto agg = a.cast<py::dict>();
    plan.aggs.push_back({agg::agg_fn_from_name(item<std::string>(agg, "fn")), item<int>(agg, "arg")});
  }
  plan.mini_batch = item<bool>(d, "mini_batch");
  plan.fold = item<bool>(d, "fold");
  plan.fold_rows = item<int64_t>(d, "fold_rows");
  plan.bundle_rows = item<int64_t>(d, "bundle_rows");
  plan.buckets = item<int32_t>(d, "buckets");
  plan.ansi = item<bool>(d, "ansi");
  plan.validate();
  return plan;
}

std::unique_ptr<arrow::Type> type_of(const py::capsule& schema) {
  return arrow::type_from_schema(*capsule_pointer<ArrowSchema>(schema, "arrow_schema"));
}

// The delta schema of a plan over its encoder input schema (changelog::delta_schema).
py::capsule delta_schema(const py::dict& plan, const py::capsule& input_schema) {
  const Plan p = plan_from(plan);
  const auto input = type_of(input_schema);
  if (input->kind != arrow::Kind::Struct) throw std::invalid_argument("the changelog input schema must be a struct of columns");
  return schema_capsule(*changelog::delta_schema(p, agg::argument_types(p.aggs, *input)));
}

py::object maybe_capsule(std::unique_ptr<ArrowArray> array) {
  if (!array) return py::none();
  return array_capsule(std::move(array));
}

class PyEncoder {
 public:
  PyEncoder(const py::dict& plan, const py::capsule& input_schema, const py::capsule& delta_schema)
      : enc_(plan_from(plan), *type_of(input_schema), type_of(delta_schema)) {}

  void add(const py::capsule& schema, const py::capsule& array, const py::object& sizes) {
    const auto in = validated_input(schema, array, arrow::Layout::Struct, "(the changelog input batch)", sizes);
    py::gil_scoped_release release;
    enc_.add(*in.schema, *in.array);
  }
  void finish() { enc_.finish(); }
  py::object take() { return maybe_capsule(enc_.take()); }
  py::dict stats() const {
    const auto& s = enc_.stats();
    py::dict d;
    d["rows_in"] = s.rows_in;
    d["retractions_in"] = s.retractions_in;
    d["deltas_out"] = s.deltas_out;
    d["fold_flushes"] = s.flushes;
    return d;
  }

 private:
  changelog::Encoder enc_;
};

changelog::Emit emit_from(const std::string& emit) {
  if (emit == "changelog") return changelog::Emit::Changelog;
  if (emit == "final") return changelog::Emit::Final;
  throw std::invalid_argument("emit must be 'changelog' or 'final', not '" + emit + "'");
}

class PyAggregator {
 public:
  PyAggregator(const py::dict& plan, const py::capsule& delta_schema, const py::capsule& output_schema,
               const std::string& emit, int64_t max_output_rows)
      : agg_(plan_from(plan), type_of(delta_schema), type_of(output_schema), emit_from(emit), max_output_rows) {}

  void load(const py::bytes& blob) {
    const std::string_view view = blob;
    py::gil_scoped_release release;
    agg_.load(view);
  }
  void add(const py::capsule& schema, const py::capsule& array, const py::object& sizes) {
    const auto in = validated_input(schema, array, arrow::Layout::Struct, "(the changelog delta batch)", sizes);
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
    return maybe_capsule(std::move(out));
  }
  py::bytes dump() {
    arrow::ByteBuffer out;
    {
      py::gil_scoped_release release;
      agg_.dump(out);
    }
    return py::bytes(reinterpret_cast<const char*>(out.data()), out.size());
  }
  void reset() { agg_.reset(); }
  size_t live_keys() const { return agg_.live_keys(); }
  size_t memory_usage() const { return agg_.memory_usage(); }
  py::dict stats() const {
    const auto& s = agg_.stats();
    py::dict d;
    d["deltas_in"] = s.rows_in;
    d["retractions_ignored"] = s.retractions_ignored;
    d["state_reads"] = s.state_reads;
    d["state_writes"] = s.state_writes;
    d["inserts"] = s.inserts;
    d["update_befores"] = s.update_befores;
    d["update_afters"] = s.update_afters;
    d["deletes"] = s.deletes;
    d["bundles"] = s.bundles;
    d["keys_loaded"] = s.keys_loaded;
    d["state_bytes_loaded"] = s.state_bytes_loaded;
    d["state_bytes_dumped"] = s.state_bytes_dumped;
    return d;
  }

 private:
  changelog::Aggregator agg_;
};

}  // namespace

void register_changelog(py::module_& m) {
  m.def("delta_schema", &delta_schema, py::arg("plan"), py::arg("input_schema_capsule"),
        "The delta schema (an 'arrow_schema' capsule) of a plan over its encoder input schema.");
  py::class_<PyEncoder>(m, "Encoder", "The local phase: input rows to signed delta rows (folded per key or not).")
      .def(py::init<const py::dict&, const py::capsule&, const py::capsule&>(), py::arg("plan"),
           py::arg("input_schema_capsule"), py::arg("delta_schema_capsule"))
      .def("add", &PyEncoder::add, py::arg("schema_capsule"), py::arg("array_capsule"),
           py::arg("buffer_sizes") = py::none(),
           "Encode (or fold) a batch of input rows (validated first: ValueError if malformed).")
      .def("finish", &PyEncoder::finish, "End of input: flush the folded rows.")
      .def("take", &PyEncoder::take, "The delta rows built so far (an 'arrow_array' capsule) or None.")
      .def("stats", &PyEncoder::stats);
  py::class_<PyAggregator>(m, "Aggregator",
                           "The global phase: per-key state, mini-batch bundles, net changes.")
      .def(py::init<const py::dict&, const py::capsule&, const py::capsule&, const std::string&, int64_t>(),
           py::arg("plan"), py::arg("delta_schema_capsule"), py::arg("output_schema_capsule"),
           py::arg("emit") = "changelog", py::arg("max_output_rows") = 65536)
      .def("load", &PyAggregator::load, py::arg("payload"),
           "Add the keys of a state payload written by dump() (the payload of a sealed state value).")
      .def("add", &PyAggregator::add, py::arg("schema_capsule"), py::arg("array_capsule"),
           py::arg("buffer_sizes") = py::none(),
           "Apply delta rows in order (validated first: ValueError if malformed).")
      .def("end_bundle", &PyAggregator::end_bundle, "End the open bundle (the end of a micro-batch).")
      .def("finish", &PyAggregator::finish, "End of input (emit='final': queue one +I row per live key).")
      .def("take", &PyAggregator::take, "Output rows built so far (a capsule) or None.")
      .def("dump", &PyAggregator::dump, "The live keys' state as bytes (the payload of a state value).")
      .def("reset", &PyAggregator::reset, "Forget every key (reuse for the next bucket).")
      .def("live_keys", &PyAggregator::live_keys)
      .def("memory_usage", &PyAggregator::memory_usage)
      .def("stats", &PyAggregator::stats);
}

}  // namespace sliceflow::bindings
