// sliceflow._core.changes: declares NotAChangeKindError, the Python face of
// changes::NotAChangeKind (cpp/changes/change_kind.h), which every kernel that reads a STRING op
// column throws. A ValueError subclass whose `row` attribute is the row of the batch holding
// the value, so that Python tells it apart from other refusals without reading its text.
#include <pybind11/pybind11.h>

#include <exception>

#include "bindings/register.h"
#include "changes/change_kind.h"

namespace py = pybind11;

namespace sliceflow::bindings {

void register_changes(py::module_& m) {
  static py::exception<changes::NotAChangeKind> not_a_change_kind(m, "NotAChangeKindError",
                                                                  PyExc_ValueError);
  not_a_change_kind.doc() =
      "An op value that is not a change kind (+I, -U, +U, -D; null: +I). The message names the "
      "op column and the value; `row` is the row of the batch that holds it.";
  // The class's own value (-1: no row) declares the attribute each instance sets.
  not_a_change_kind.attr("row") = -1;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const changes::NotAChangeKind& e) {
      // Made by calling the class, so that the instance can carry the row.
      py::object error = py::reinterpret_borrow<py::object>(not_a_change_kind)(e.what());
      error.attr("row") = e.row();
      PyErr_SetObject(not_a_change_kind.ptr(), error.ptr());
    }
  });
}

}  // namespace sliceflow::bindings
