// The byte strings the Top-N kernel (topn/ranker.h) works on, for a whole batch: each row's
// partition key (agg/key_codec, the bytes every operator keys its state by), its sort key
// (order/sort_key: memcmp order is Spark's ORDER BY), optionally its row identity (agg/key_codec
// over the row's columns: what a retraction is matched by) and its state bucket (the changelog
// encoder's bucket_of over the key's hash). Each comes back as an Arrow large_binary layout
// (offsets + bytes) the caller wraps without a copy per row.
// Cost: one pass per column over the batch; memory O(encoded bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "arrow/column_view.h"

namespace sliceflow::topn {

struct Encoded {
  std::vector<int64_t> offsets{0};
  std::vector<char> bytes;
};

struct EncodedRows {
  std::vector<int32_t> buckets;  // empty when buckets == 0
  Encoded keys;
  Encoded sort_keys;
  Encoded row_ids;  // empty (one offset) unless asked for
};

// `batch` (a struct view) holds, in order: `num_keys` key columns, one column per entry of
// `descending` / `nulls_first` (the order columns), then the row-identity columns (used only
// when `row_ids`). std::invalid_argument naming a column that cannot be a key / be ordered.
EncodedRows encode_rows(const arrow::ColumnView& batch, size_t num_keys,
                        const std::vector<bool>& descending, const std::vector<bool>& nulls_first,
                        bool row_ids, int32_t buckets);

}  // namespace sliceflow::topn
