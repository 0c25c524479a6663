// sliceflow._core.state: declares the state format of state/format.h to Python (sealing and
// opening the values streaming operators keep in Spark's state store); no logic of its own.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <string_view>
#include <vector>

#include "bindings/buffers.h"
#include "bindings/register.h"
#include "state/format.h"

namespace py = pybind11;

namespace sliceflow::bindings {
namespace {

std::vector<std::string_view> views(const std::vector<py::bytes>& sections) {
  std::vector<std::string_view> out;
  out.reserve(sections.size());
  for (const py::bytes& s : sections) out.emplace_back(s);
  return out;
}

std::vector<py::bytes> to_bytes(const std::vector<std::string_view>& sections) {
  std::vector<py::bytes> out;
  out.reserve(sections.size());
  for (const std::string_view s : sections) out.push_back(bytes_of(s.data(), s.size()));
  return out;
}

py::bytes seal(const std::string& op, const state::Identity& identity,
               const std::vector<py::bytes>& sections) {
  const state::Operator kind = state::operator_from_name(op);
  const auto parts = views(sections);
  const size_t size = state::sealed_size(identity, parts);
  py::bytes out(nullptr, size);  // written in place: no copy of the payload
  char* data = PyBytes_AS_STRING(out.ptr());
  {
    py::gil_scoped_release release;
    state::seal_into(data, kind, identity, parts);
  }
  return out;
}

std::vector<py::bytes> open(const std::string& op, const state::Identity& identity,
                            const py::bytes& value, size_t sections,
                            const std::vector<std::string>& later_fields) {
  const state::Operator kind = state::operator_from_name(op);
  const std::string_view view = value;
  std::vector<std::string_view> parts;
  {
    py::gil_scoped_release release;
    parts = state::open(view, kind, identity, sections, later_fields);
  }
  return to_bytes(parts);
}

py::dict inspect(const py::bytes& value) {
  const state::Opened got = state::read(value, "sliceflow");
  py::dict d;
  d["operator"] = state::operator_name(got.op);
  d["format_version"] = got.version;
  d["identity"] = got.identity;
  d["sections"] = to_bytes(got.sections);
  return d;
}

}  // namespace

void register_state(py::module_& m) {
  m.attr("FORMAT_VERSION") = state::kFormatVersion;
  m.def("seal", &seal, py::arg("operator"), py::arg("identity"), py::arg("sections"),
        "One state value: the header (format version, operator, plan identity, lengths, checksum) "
        "and the "
        "sections, little-endian (docs/state.md).");
  m.def("open", &open, py::arg("operator"), py::arg("identity"), py::arg("value"),
        py::arg("sections"), py::arg("later_fields") = std::vector<std::string>{},
        "The sections of a state value written by seal(); ValueError naming what is wrong when the "
        "value is damaged, of another operator or format version, or of another plan identity "
        "(naming the fields that changed). A value that lacks a field named in later_fields "
        "(written before the field was added) is judged on the fields it has.");
  m.def(
      "inspect", &inspect, py::arg("value"),
      "A state value taken apart without judging its identity (for tools and tests): operator, "
      "format_version, identity ((name, value) pairs) and sections; ValueError if it is damaged.");
}

}  // namespace sliceflow::bindings
