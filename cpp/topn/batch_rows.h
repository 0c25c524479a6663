// The rows of a Top-N call (topn::Rows) read from the Arrow batch the caller hands over: a
// struct of __key and __sort (binary or large_binary, the encodings of row_encoder.h), then
// __row (binary, only when the plan retracts: the row identities), then __op (int8 change kind
// codes; null: +I). The views point into the batch, which must outlive the Rows.
// Invariant: what comes back has one key, sort key, op (and identity) per row, so ranker's
// run() sees consistent lengths. Cost: O(rows), one reserve per vector, no per-row allocation.
#pragma once

#include <cstdint>

#include "arrow/column_view.h"
#include "topn/ranker.h"

namespace sliceflow::topn {

// Throws std::invalid_argument ("topn: ...") when the batch does not have the columns and
// layouts above; op codes are checked by run().
Rows rows_of_batch(const Plan& plan, const arrow::ColumnView& batch, int64_t state_rows);

}  // namespace sliceflow::topn
