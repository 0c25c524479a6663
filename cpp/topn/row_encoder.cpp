#include "topn/row_encoder.h"

#include <stdexcept>
#include <string_view>

#include "agg/key_codec.h"
#include "changelog/encoder.h"
#include "order/sort_key.h"

namespace sliceflow::topn {
namespace {

void copy_keys(const agg::KeyEncoder& enc, int64_t rows, Encoded& out) {
  out.offsets.assign(1, 0);
  out.offsets.reserve(static_cast<size_t>(rows) + 1);
  out.bytes.clear();
  for (int64_t i = 0; i < rows; ++i) {
    const std::string_view k = enc.key(i);
    out.bytes.insert(out.bytes.end(), k.begin(), k.end());
    out.offsets.push_back(static_cast<int64_t>(out.bytes.size()));
  }
}

}  // namespace

EncodedRows encode_rows(const arrow::ColumnView& batch, size_t num_keys,
                        const std::vector<bool>& descending, const std::vector<bool>& nulls_first,
                        bool row_ids, int32_t buckets) {
  const size_t num_order = descending.size();
  if (nulls_first.size() != num_order) {
    throw std::invalid_argument("topn: one null order per order column");
  }
  if (num_keys + num_order > batch.num_children()) {
    throw std::invalid_argument("topn: the batch has fewer columns than keys and order columns");
  }
  if (buckets < 0) throw std::invalid_argument("topn: buckets must not be negative");
  const int64_t rows = batch.length();
  EncodedRows out;

  std::vector<const arrow::ColumnView*> keys;
  for (size_t i = 0; i < num_keys; ++i) keys.push_back(&batch.child(i));
  agg::KeyEncoder key_enc(keys);
  key_enc.encode(0, rows);
  copy_keys(key_enc, rows, out.keys);
  if (buckets > 0) {
    out.buckets.reserve(static_cast<size_t>(rows));
    for (int64_t i = 0; i < rows; ++i) {
      out.buckets.push_back(changelog::bucket_of(agg::hash_bytes(key_enc.key(i)), buckets));
    }
  }

  std::vector<order::SortColumn> order_columns;
  for (size_t i = 0; i < num_order; ++i) {
    order_columns.push_back({&batch.child(num_keys + i), descending[i], nulls_first[i]});
  }
  order::SortKeyEncoder sort_enc(std::move(order_columns));
  sort_enc.encode();
  out.sort_keys.offsets = sort_enc.offsets();
  if (num_order == 0) out.sort_keys.offsets.assign(static_cast<size_t>(rows) + 1, 0);
  out.sort_keys.bytes = sort_enc.bytes();

  if (row_ids) {
    std::vector<const arrow::ColumnView*> row_columns;
    for (size_t i = num_keys + num_order; i < batch.num_children(); ++i) {
      row_columns.push_back(&batch.child(i));
    }
    agg::KeyEncoder row_enc(row_columns);
    row_enc.encode(0, rows);
    copy_keys(row_enc, rows, out.row_ids);
  }
  return out;
}

}  // namespace sliceflow::topn
