#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "arrow/column_view.h"
#include "bindings/capsules.h"
#include "bindings/register.h"
#include "topn/ranker.h"
#include "topn/row_encoder.h"

namespace py = pybind11;

namespace sliceflow::bindings {
namespace {

template <typename T>
py::bytes as_bytes(const std::vector<T>& v) {
  return py::bytes(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

py::tuple encoded(const topn::Encoded& e) {
  return py::make_tuple(as_bytes(e.offsets), as_bytes(e.bytes));
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
  return py::make_tuple(buckets > 0 ? py::object(as_bytes(rows.buckets)) : py::object(py::none()),
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
      const size_t want = plan_.retract ? 4 : 3;
      if (batch.num_children() != want) {
        throw std::invalid_argument("topn: expected " + std::to_string(want) + " columns");
      }
      topn::Rows rows;
      rows.state_rows = state_rows;
      const auto n = static_cast<size_t>(batch.length());
      const auto& key = batch.child(0);
      const auto& sort = batch.child(1);
      const auto& op = batch.child(want - 1);
      for (const auto* c : {&key, &sort}) {
        if (c->layout() != arrow::Layout::LargeString && c->layout() != arrow::Layout::String) {
          throw std::invalid_argument("topn: key columns must be binary");
        }
      }
      if (op.layout() != arrow::Layout::Int8) throw std::invalid_argument("topn: op must be int8");
      rows.keys.reserve(n);
      rows.sort_keys.reserve(n);
      rows.ops.reserve(n);
      for (size_t i = 0; i < n; ++i) {
        const auto r = static_cast<int64_t>(i);
        rows.keys.push_back(key.str(r));
        rows.sort_keys.push_back(sort.str(r));
        rows.ops.push_back(op.is_null(r) ? int8_t{0} : static_cast<int8_t>(op.i64(r)));
      }
      if (plan_.retract) {
        const auto& row = batch.child(2);
        if (row.layout() != arrow::Layout::LargeString && row.layout() != arrow::Layout::String) {
          throw std::invalid_argument("topn: row identities must be binary");
        }
        rows.row_ids.reserve(n);
        for (size_t i = 0; i < n; ++i) rows.row_ids.push_back(row.str(static_cast<int64_t>(i)));
      }
      result = topn::run(plan_, rows);
    }
    stats_ = result.stats;
    return py::make_tuple(as_bytes(result.index), as_bytes(result.op), as_bytes(result.rank),
                          as_bytes(result.keep));
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
