// sliceflow._core.topn: declares the Top-N row encoder (topn/row_encoder.h) and ranker
// (topn/ranker.h, reading its rows with topn/batch_rows.h) to Python; no logic of its own.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <vector>

#include "arrow/column_view.h"
#include "bindings/buffers.h"
#include "bindings/capsules.h"
#include "bindings/register.h"
#include "topn/batch_rows.h"
#include "topn/ranker.h"
#include "topn/row_encoder.h"

namespace py = pybind11;

namespace sliceflow::bindings {
namespace {

py::tuple encoded(const topn::Encoded& e) {
  return py::make_tuple(vector_bytes(e.offsets), vector_bytes(e.bytes));
}

// (buckets int32 bytes or None, (key offsets, key bytes), (sort offsets, sort bytes),
//  (row offsets, row bytes) or None).
py::tuple encode(const py::capsule& schema, const py::capsule& array, size_t num_keys,
                 const std::vector<bool>& descending, const std::vector<bool>& nulls_first,
                 bool row_ids, int32_t buckets, const py::object& sizes) {
  const auto in =
      validated_input(schema, array, arrow::Layout::Struct, "(the topn input batch)", sizes);
  topn::EncodedRows rows;
  {
    py::gil_scoped_release release;
    const arrow::ColumnView batch(*in.schema, *in.array);
    rows = topn::encode_rows(batch, num_keys, descending, nulls_first, row_ids, buckets);
  }
  return py::make_tuple(
      buckets > 0 ? py::object(vector_bytes(rows.buckets)) : py::object(py::none()),
      encoded(rows.keys), encoded(rows.sort_keys),
      row_ids ? py::object(encoded(rows.row_ids)) : py::object(py::none()));
}

class PyRanker {
 public:
  explicit PyRanker(const py::dict& plan)
      : plan_(topn::parse_plan(plan_fields(plan, "topn plan"))) {}

  // The call's rows: a struct of __key, __sort (large_binary), [__row (large_binary)], __op
  // (int8); rows [0, state_rows) are retained rows. Returns (index int64, op int8, rank int32,
  // keep int64) as bytes.
  py::tuple add(const py::capsule& schema, const py::capsule& array, int64_t state_rows,
                const py::object& sizes) {
    const auto in = validated_input(schema, array, arrow::Layout::Struct, "(the topn rows)", sizes);
    topn::Result result;
    {
      py::gil_scoped_release release;
      const arrow::ColumnView batch(*in.schema, *in.array);
      result = topn::run(plan_, topn::rows_of_batch(plan_, batch, state_rows));
    }
    stats_ = result.stats;
    return py::make_tuple(vector_bytes(result.index), vector_bytes(result.op),
                          vector_bytes(result.rank), vector_bytes(result.keep));
  }

  py::dict stats() const { return counters_dict(stats_.named()); }

 private:
  topn::Plan plan_;
  topn::Stats stats_;
};

}  // namespace

void register_topn(py::module_& m) {
  m.def("encode", &encode, py::arg("schema_capsule"), py::arg("array_capsule"), py::arg("num_keys"),
        py::arg("descending"), py::arg("nulls_first"), py::arg("row_ids"), py::arg("buckets"),
        py::arg("buffer_sizes") = py::none(),
        "Encode a batch (key columns, order columns, row-identity columns) into partition keys, "
        "sort keys, row identities and buckets: (buckets int32 bytes or None, (offsets, bytes) "
        "x2, (offsets, bytes) or None), offsets int64.");
  py::class_<PyRanker>(m, "Ranker", "Top-N per key over encoded rows: take-indices, ops, ranks.")
      .def(py::init<const py::dict&>(), py::arg("plan"))
      .def("add", &PyRanker::add, py::arg("schema_capsule"), py::arg("array_capsule"),
           py::arg("state_rows"), py::arg("buffer_sizes") = py::none(),
           "Rank a call's rows (retained rows first): (index int64, op int8, rank int32, keep "
           "int64) as bytes.")
      .def("stats", &PyRanker::stats, "The counters of the last call.");
}

}  // namespace sliceflow::bindings
