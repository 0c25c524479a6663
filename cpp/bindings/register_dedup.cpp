// sliceflow._core.dedup: declares the deduplicator and the append-only FirstSeen kernel
// (cpp/dedup/) to Python; no logic of its own.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <vector>

#include "arrow/type.h"
#include "bindings/buffers.h"
#include "bindings/capsules.h"
#include "bindings/register.h"
#include "dedup/deduplicator.h"
#include "dedup/first_seen.h"
#include "dedup/plan.h"

namespace py = pybind11;

namespace sliceflow::bindings {
namespace {

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

class PyFirstSeen {
 public:
  PyFirstSeen(int32_t num_keys, bool timed, int64_t delay_us)
      : kernel_(num_keys, timed, delay_us) {}

  void load(const py::bytes& payload) {
    const std::string_view view(payload);
    py::gil_scoped_release release;
    kernel_.load(view);
  }
  void load_rows(const py::capsule& schema, const py::capsule& array, const py::object& sizes) {
    const auto s = validated_input(schema, array, arrow::Layout::Struct,
                                   "(the deduplicate state rows)", sizes);
    py::gil_scoped_release release;
    kernel_.load_rows(*s.schema, *s.array);
  }
  py::bytes step(const py::capsule& schema, const py::capsule& array, const py::object& sizes,
                 int64_t watermark_ms) {
    const auto r = validated_input(schema, array, arrow::Layout::Struct,
                                   "(the deduplicate input batch)", sizes);
    {
      py::gil_scoped_release release;
      kernel_.step(*r.schema, *r.array, watermark_ms);
    }
    return vector_bytes(kernel_.emit_rows());
  }
  py::bytes candidates(const py::capsule& schema, const py::capsule& array,
                       const py::object& sizes) {
    const auto r = validated_input(schema, array, arrow::Layout::Struct,
                                   "(the deduplicate input batch)", sizes);
    const std::vector<int64_t>* rows = nullptr;
    {
      py::gil_scoped_release release;
      rows = &kernel_.candidates(*r.schema, *r.array);
    }
    return vector_bytes(*rows);
  }
  py::bytes payload() const { return py::bytes(kernel_.payload()); }
  int64_t live_keys() const { return kernel_.live_keys(); }
  size_t memory_usage() const { return kernel_.memory_usage(); }
  py::object previous_watermark() const {
    const int64_t w = kernel_.previous_watermark();
    if (w == dedup::FirstSeen::kNoWatermark) return py::none();
    return py::int_(w);
  }
  py::dict stats() const { return counters_dict(kernel_.stats().named()); }

 private:
  dedup::FirstSeen kernel_;
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
  py::class_<PyFirstSeen>(m, "FirstSeen",
                          "The append-only deduplicate of a stream (keep='first' in arrival "
                          "order): one entry per key (its key bytes and, with a watermark, its "
                          "expiry), the first row of each key emitted once.")
      .def(py::init<int32_t, bool, int64_t>(), py::arg("num_keys"), py::arg("timed"),
           py::arg("delay_us"))
      .def_static(
          "payload_version",
          [](const py::bytes& section) {
            return dedup::FirstSeen::payload_version(std::string_view(section));
          },
          py::arg("section"),
          "The layout of a stored section: 2 ('SFDF' payload) or 1 (an Arrow IPC message); "
          "ValueError otherwise.")
      .def("load", &PyFirstSeen::load, py::arg("payload"),
           "Starts a bucket from its stored payload (b'': no state); ValueError if damaged.")
      .def("load_rows", &PyFirstSeen::load_rows, py::arg("schema_capsule"),
           py::arg("array_capsule"), py::arg("buffer_sizes"),
           "Starts a bucket from the earlier layout: the key columns (and the first row's time).")
      .def("step", &PyFirstSeen::step, py::arg("schema_capsule"), py::arg("array_capsule"),
           py::arg("buffer_sizes"), py::arg("watermark_ms"),
           "One micro-batch (the key columns, then the time column when timed): the rows to "
           "emit as int64 bytes (ascending).")
      .def("candidates", &PyFirstSeen::candidates, py::arg("schema_capsule"),
           py::arg("array_capsule"), py::arg("buffer_sizes"),
           "The rows of a batch (the step's columns) that can be emitted whatever the state and "
           "watermark, as int64 bytes (ascending): the local reduction before the shuffle.")
      .def("payload", &PyFirstSeen::payload, "The bucket's payload after the last step.")
      .def("live_keys", &PyFirstSeen::live_keys, "Entries after the last step.")
      .def("memory_usage", &PyFirstSeen::memory_usage, "Bytes the loaded state holds.")
      .def("previous_watermark", &PyFirstSeen::previous_watermark,
           "The watermark (ms) the loaded state last ran at; None if unknown.")
      .def("stats", &PyFirstSeen::stats);
}

}  // namespace sliceflow::bindings
