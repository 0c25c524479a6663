// sliceflow._core.json: declares the JSON decoder (cpp/json/decoder.h) and its
// MalformedRecordError to Python; no logic of its own.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "arrow/c_data.h"
#include "arrow/input.h"
#include "arrow/type.h"
#include "bindings/buffers.h"
#include "bindings/capsules.h"
#include "bindings/register.h"
#include "json/decoder.h"
#include "json/errors.h"
#include "json/options.h"

namespace py = pybind11;

namespace sliceflow::bindings {
namespace {

class PyDecoder {
 public:
  PyDecoder(const py::capsule& schema, const std::map<std::string, std::string>& options)
      : decoder_(arrow::type_from_schema(*capsule_pointer<ArrowSchema>(schema, "arrow_schema")),
                 json::parse_options(options)) {}

  void decode_array(const py::capsule& schema, const py::capsule& array, const py::object& sizes) {
    const auto in = validated_input(schema, array, arrow::Layout::String, "(the documents)", sizes);
    const arrow::StringArrayView view(*in.schema, *in.array);
    py::gil_scoped_release release;
    decoder_.decode_array(view);
  }

  // Any buffer of one-byte items, read in C order as bytes(memoryview(data)) would: strided,
  // reversed or indirect (suboffsets) views are copied into one contiguous buffer first;
  // C-contiguous ones (the common case) are read in place.
  void decode_lines(const py::buffer& data) { with_bytes(data, false); }
  void decode_record(const py::buffer& data) { with_bytes(data, true); }

  int64_t pending_rows() const { return decoder_.pending_rows(); }
  int64_t failed_offset() const { return decoder_.failed_offset(); }

 private:
  void with_bytes(const py::buffer& data, bool one_record) {
    HeldBuffer held(data, PyBUF_FULL_RO);
    if (!held.one_byte_items()) {
      const Py_buffer& view = held.view();
      throw std::invalid_argument(
          std::string("NDJSON input must be a buffer of bytes (itemsize 1); got format '") +
          (view.format ? view.format : "B") + "' with itemsize " + std::to_string(view.itemsize) +
          " (pass bytes, bytearray or a memoryview cast to 'B')");
    }
    const std::string_view buffer = held.bytes();
    py::gil_scoped_release release;
    if (one_record) {
      decoder_.decode_record(buffer, buffer.size());
    } else {
      decoder_.decode_lines(buffer, buffer.size());
    }
  }

 public:
  py::capsule finish() {
    auto array = std::make_unique<ArrowArray>();
    decoder_.finish(array.get());
    return array_capsule(std::move(array));
  }

  size_t memory_usage() const { return decoder_.memory_usage(); }

  py::dict stats() const {
    const json::DecodeStats& s = decoder_.stats();
    py::dict d;
    d["rows"] = s.rows;
    d["fast_rows"] = s.fast_rows;
    d["reference_rows"] = s.reference_rows;
    d["partial_rows"] = s.partial_rows;
    d["malformed_rows"] = s.malformed_rows;
    return d;
  }

 private:
  json::Decoder decoder_;
};

}  // namespace

void register_json(py::module_& m) {
  static py::exception<json::MalformedRecord> malformed(m, "MalformedRecordError",
                                                        PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const json::MalformedRecord& e) {
      py::set_error(malformed, e.what());
    }
  });

  py::class_<PyDecoder>(m, "Decoder",
                        "Decodes JSON documents into rows of a target Arrow schema, as Spark's "
                        "from_json does. Rows accumulate until finish().")
      .def(py::init<const py::capsule&, const std::map<std::string, std::string>&>(),
           py::arg("schema_capsule"), py::arg("options"))
      .def("decode_array", &PyDecoder::decode_array, py::arg("schema_capsule"),
           py::arg("array_capsule"), py::arg("buffer_sizes") = py::none(),
           "Decode each element of a string/binary array. The array is validated first "
           "(ValueError if malformed); buffer_sizes (pyarrow's Array.buffers() sizes, -1 for "
           "None) lets offsets be checked against the data buffer.")
      .def("decode_lines", &PyDecoder::decode_lines, py::arg("data"),
           "Decode NDJSON text, one document per line; blank lines are skipped. Any buffer of "
           "one-byte items (non-contiguous views are copied first).")
      .def("decode_record", &PyDecoder::decode_record, py::arg("data"),
           "Decode one record, e.g. a whole multiLine file (with the file_records option a "
           "top-level array gives a row per element). Any buffer of one-byte items.")
      .def_property_readonly("failed_offset", &PyDecoder::failed_offset,
                             "Byte offset, in the buffer of the last decode_lines / "
                             "decode_record call, of the record that raised "
                             "MalformedRecordError; -1 if none.")
      .def("finish", &PyDecoder::finish, "Export the decoded rows as an 'arrow_array' capsule.")
      .def_property_readonly("pending_rows", &PyDecoder::pending_rows)
      .def_property_readonly("memory_usage", &PyDecoder::memory_usage)
      .def_property_readonly("stats", &PyDecoder::stats);
}

}  // namespace sliceflow::bindings
