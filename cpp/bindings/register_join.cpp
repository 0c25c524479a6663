// sliceflow._core.join: declares the regular join kernel (cpp/join/) to Python; no logic of its
// own.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "arrow/type.h"
#include "bindings/buffers.h"
#include "bindings/capsules.h"
#include "bindings/register.h"
#include "join/joiner.h"
#include "join/plan.h"

namespace py = pybind11;

namespace sliceflow::bindings {
namespace {

// One batch as (schema capsule, array capsule, buffer sizes), validated as a struct array.
ValidatedInput batch(const py::tuple& parts, const std::string& what) {
  if (parts.size() != 3) {
    throw py::value_error("join: " + what + " must be (schema capsule, array capsule, sizes)");
  }
  return validated_input(parts[0].cast<py::capsule>(), parts[1].cast<py::capsule>(),
                         arrow::Layout::Struct, "(" + what + ")", parts[2]);
}

class PyJoiner {
 public:
  explicit PyJoiner(const py::dict& plan)
      : joiner_(join::parse_plan(plan_fields(plan, "join plan"))) {}

  // (emit left, emit right: int64 bytes, emit ops: int8 bytes, keep left, keep right: int64).
  py::tuple step(const py::tuple& left_state, const py::tuple& right_state,
                 const py::tuple& left_rows, const py::tuple& right_rows, const py::bytes& order) {
    const auto ls = batch(left_state, "the join's left state rows");
    const auto rs = batch(right_state, "the join's right state rows");
    const auto lr = batch(left_rows, "the join's left rows");
    const auto rr = batch(right_rows, "the join's right rows");
    const std::string_view sides(order);
    {
      const ArrowSchema* state_schema[2] = {ls.schema, rs.schema};
      const ArrowArray* state[2] = {ls.array, rs.array};
      const ArrowSchema* rows_schema[2] = {lr.schema, rr.schema};
      const ArrowArray* rows[2] = {lr.array, rr.array};
      py::gil_scoped_release release;
      joiner_.step(state_schema, state, rows_schema, rows,
                   reinterpret_cast<const int8_t*>(sides.data()),
                   static_cast<int64_t>(sides.size()));
    }
    return py::make_tuple(vector_bytes(joiner_.emit_left()), vector_bytes(joiner_.emit_right()),
                          vector_bytes(joiner_.emit_ops()), vector_bytes(joiner_.keep_rows(0)),
                          vector_bytes(joiner_.keep_rows(1)));
  }
  int64_t live_keys() const { return joiner_.live_keys(); }
  py::dict stats() const { return counters_dict(joiner_.stats().named()); }

 private:
  join::Joiner joiner_;
};

}  // namespace

void register_join(py::module_& m) {
  py::class_<PyJoiner>(m, "Joiner",
                       "The regular equi-join of two changelogs over whole batches: row indices "
                       "in, changes and each side's live rows out.")
      .def(py::init<const py::dict&>(), py::arg("plan"))
      .def("step", &PyJoiner::step, py::arg("left_state"), py::arg("right_state"),
           py::arg("left_rows"), py::arg("right_rows"), py::arg("order"),
           "One step. Each batch is (schema capsule, array capsule, buffer sizes) of a struct "
           "array (validated first: ValueError if malformed); order holds one byte per new row "
           "in arrival order, 0 left or 1 right. Returns (emit left, emit right: int64 bytes, "
           "-1 for a null-padded side; emit ops: int8 bytes (0 +I, 1 -U, 2 +U, 3 -D); live "
           "left rows, live right rows: int64 bytes), row c of a side being its state row c, "
           "else its new row c - len(state).")
      .def("live_keys", &PyJoiner::live_keys, "Keys with a live row on either side after the step.")
      .def("stats", &PyJoiner::stats);
}

}  // namespace sliceflow::bindings
