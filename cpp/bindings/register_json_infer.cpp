// Bindings of json::SchemaInference (cpp/json/infer/infer.h): declarations only.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "bindings/buffers.h"
#include "bindings/register.h"
#include "json/infer/infer.h"

namespace py = pybind11;

namespace sliceflow::bindings {
namespace {

// A C-contiguous buffer of one-byte items, held while the inference reads it.
class HeldBytes : public HeldBuffer {
 public:
  explicit HeldBytes(const py::buffer& data) : HeldBuffer(data, PyBUF_C_CONTIGUOUS) {
    if (!one_byte_items()) {
      throw std::invalid_argument("JSON text must be a contiguous buffer of bytes (itemsize 1)");
    }
  }
};

json::InferOptions with_settings(json::InferOptions options, bool line_batches,
                                 uint64_t sample_seed) {
  options.line_batches = line_batches;
  options.sample_seed = sample_seed;
  return options;
}

class PySchemaInference {
 public:
  PySchemaInference(const std::map<std::string, std::string>& options, bool line_batches,
                    uint64_t sample_seed)
      : inference_(with_settings(json::parse_infer_options(options), line_batches, sample_seed)) {}

  void merge(const PySchemaInference& other) {
    if (&other == this) throw std::invalid_argument("an inference cannot merge itself");
    inference_.merge(other.inference_);
  }

  void add_lines(const py::buffer& data, int64_t size, int threads) {
    HeldBytes held(data);
    const std::string_view all = held.bytes();
    const size_t used = size < 0 ? all.size() : static_cast<size_t>(size);
    if (used > all.size()) throw std::invalid_argument("size is larger than the buffer");
    py::gil_scoped_release release;
    inference_.add_lines(all.substr(0, used), all.size(), threads);
  }

  void add_document(const py::buffer& data) {
    HeldBytes held(data);
    py::gil_scoped_release release;
    inference_.add_document(held.bytes());
  }

  std::string schema_json() const { return inference_.schema_json(); }
  int64_t lines() const { return inference_.lines(); }
  int64_t schema_changes() const { return inference_.schema_changes(); }
  int64_t batched_lines() const { return inference_.batched_lines(); }

 private:
  json::SchemaInference inference_;
};

}  // namespace

void register_json_infer(py::module_& m) {
  py::class_<PySchemaInference>(m, "SchemaInference",
                                "Spark's JSON schema inference (JsonInferSchema) over NDJSON "
                                "blocks, on several threads; see sliceflow.json.infer.")
      .def(py::init<const std::map<std::string, std::string>&, bool, uint64_t>(),
           py::arg("options"), py::arg("line_batches") = true, py::arg("sample_seed") = 0,
           "line_batches=False parses each line on its own: the reference the batched "
           "parse is tested against (the schema is the same). sample_seed is mixed into "
           "samplingRatio's choice of lines (one per file, so that files numbering their "
           "lines from 1 do not all take the same ones).")
      .def("merge", &PySchemaInference::merge, py::arg("other"),
           "Add the records `other` has read after this one's (files inferred on their own "
           "threads, merged in their order).")
      .def("add_lines", &PySchemaInference::add_lines, py::arg("data"), py::arg("size") = -1,
           py::arg("threads") = 1,
           "Infer the first `size` bytes of `data` (whole lines; -1: all of it) on up to "
           "`threads` threads. Bytes past `size` are padding simdjson may read.")
      .def("add_document", &PySchemaInference::add_document, py::arg("data"),
           "Infer one record made of the whole text (multiLine).")
      .def("schema_json", &PySchemaInference::schema_json,
           "The inferred schema as Spark's StructType JSON.")
      .def_property_readonly("lines", &PySchemaInference::lines)
      .def_property_readonly("schema_changes", &PySchemaInference::schema_changes)
      .def_property_readonly("batched_lines", &PySchemaInference::batched_lines,
                             "Lines read from simdjson's batches rather than on their own.");
}

}  // namespace sliceflow::bindings
