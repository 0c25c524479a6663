#include <pybind11/pybind11.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "agg/agg_fn.h"
#include "agg/state_schema.h"
#include "arrow/c_data.h"
#include "arrow/type.h"
#include "bindings/capsules.h"
#include "bindings/register.h"

namespace py = pybind11;

namespace sliceflow::bindings {
namespace {

// Spark's result type of aggregate `name` over an argument of the type in `arg` (an
// 'arrow_schema' capsule; None for count(*)), as a one-column schema (pyarrow 14 imports
// schemas, not bare types, from the PyCapsule protocol). TypeError for a type the function
// does not take (including one the kernels cannot read at all), ValueError for an unknown
// function.
py::capsule result_type(const std::string& name, const py::object& arg) {
  agg::AggFn fn;
  try {
    fn = agg::agg_fn_from_name(name);
  } catch (const std::invalid_argument&) {
    throw py::value_error("unknown aggregate '" + name + "'");
  }
  std::unique_ptr<arrow::Type> type;
  if (!arg.is_none() && fn != agg::AggFn::Count) {
    const auto* schema = capsule_pointer<ArrowSchema>(arg.cast<py::capsule>(), "arrow_schema");
    try {
      type = arrow::type_from_schema(*schema);
    } catch (const std::invalid_argument&) {
      throw py::type_error(agg::unsupported_argument_message(fn));
    }
  }
  try {
    std::vector<std::unique_ptr<arrow::Type>> result;
    result.push_back(agg::result_type(fn, type.get(), "result"));
    return schema_capsule(*agg::struct_of(std::move(result)));
  } catch (const agg::UnsupportedArgument& e) {
    throw py::type_error(e.what());
  }
}

}  // namespace

void register_agg(py::module_& m) {
  m.def("result_type", &result_type, py::arg("fn"), py::arg("arg_schema_capsule"),
        "Spark's result type of an aggregate over an argument type (cpp/agg/state_schema.h), as an "
        "'arrow_schema' capsule of a one-column schema.");
}

}  // namespace sliceflow::bindings
