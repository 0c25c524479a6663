#include <pybind11/pybind11.h>

#include "bindings/register.h"

PYBIND11_MODULE(_core, m) {
  m.doc() = "sliceflow's C++ kernels";
  auto json = m.def_submodule("json", "simdjson -> Arrow decoding with Spark's from_json semantics");
  sliceflow::bindings::register_json(json);
}
