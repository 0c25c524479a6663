// Reading a Top-N call's rows from its Arrow batch (see batch_rows.h).
#include "topn/batch_rows.h"

#include <stdexcept>
#include <string>

#include "changes/change_kind.h"

namespace sliceflow::topn {
namespace {

bool is_binary(const arrow::ColumnView& c) {
  return c.layout() == arrow::Layout::LargeString || c.layout() == arrow::Layout::String;
}

}  // namespace

Rows rows_of_batch(const Plan& plan, const arrow::ColumnView& batch, int64_t state_rows) {
  const size_t want = plan.retract ? 4 : 3;
  if (batch.num_children() != want) {
    throw std::invalid_argument("topn: expected " + std::to_string(want) + " columns");
  }
  Rows rows;
  rows.state_rows = state_rows;
  const auto n = static_cast<size_t>(batch.length());
  const auto& key = batch.child(0);
  const auto& sort = batch.child(1);
  const auto& op = batch.child(want - 1);
  if (!is_binary(key) || !is_binary(sort)) {
    throw std::invalid_argument("topn: key columns must be binary");
  }
  if (op.layout() != arrow::Layout::Int8) throw std::invalid_argument("topn: op must be int8");
  rows.keys.reserve(n);
  rows.sort_keys.reserve(n);
  rows.ops.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const auto r = static_cast<int64_t>(i);
    rows.keys.push_back(key.str(r));
    rows.sort_keys.push_back(sort.str(r));
    rows.ops.push_back(op.is_null(r) ? changes::code(changes::ChangeKind::Insert)
                                     : static_cast<int8_t>(op.i64(r)));
  }
  if (plan.retract) {
    const auto& row = batch.child(2);
    if (!is_binary(row)) throw std::invalid_argument("topn: row identities must be binary");
    rows.row_ids.reserve(n);
    for (size_t i = 0; i < n; ++i) rows.row_ids.push_back(row.str(static_cast<int64_t>(i)));
  }
  return rows;
}

}  // namespace sliceflow::topn
