// sliceflow._core.hash: declares spark_hash, Spark's hash() of each row of a record batch
// (cpp/hash/spark_hash.h), the value a Spark plan's `hash(c1, ..., cn)` gives the same row.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <vector>

#include "arrow/column_view.h"
#include "bindings/buffers.h"
#include "bindings/capsules.h"
#include "bindings/register.h"
#include "hash/spark_hash.h"

namespace py = pybind11;

namespace sliceflow::bindings {
namespace {

// hash(every column of the batch) per row, as little-endian int32 bytes.
py::bytes spark_hash(const py::capsule& schema_capsule, const py::capsule& array_capsule,
                     const py::object& sizes, int32_t seed) {
  const auto input =
      validated_input(schema_capsule, array_capsule, arrow::Layout::Struct, "hash input", sizes);
  const arrow::ColumnView batch(*input.schema, *input.array);
  std::vector<const arrow::ColumnView*> columns;
  for (size_t i = 0; i < batch.num_children(); ++i) columns.push_back(&batch.child(i));
  std::vector<int32_t> out(static_cast<size_t>(batch.length()));
  {
    py::gil_scoped_release release;
    hash::spark_hash(columns, batch.length(), out.data(), seed);
  }
  return vector_bytes(out);
}

}  // namespace

void register_hash(py::module_& m) {
  m.def("spark_hash", &spark_hash, py::arg("schema_capsule"), py::arg("array_capsule"),
        py::arg("buffer_sizes") = py::none(), py::arg("seed") = hash::kSparkSeed,
        "Spark's hash() (Murmur3, seed 42) of each row's columns of a record batch given as a "
        "struct array's capsules, as little-endian int32 bytes (cpp/hash/spark_hash.h).");
}

}  // namespace sliceflow::bindings
