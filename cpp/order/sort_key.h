// Spark's ordering of rows as bytes: a sort key per row that compares with memcmp (shorter is
// smaller on a common prefix) exactly as Spark's `ORDER BY` compares the row's order columns.
//
// Invariants (what makes the keys memcmp-able), per order column, in order:
//  * a marker byte: 0x00 for a null that sorts first, 0x02 for a null that sorts last, 0x01 for
//    a value (then the value's bytes); a null has no value bytes, so two nulls are equal;
//  * integers (bool, byte..bigint, date, timestamp) big-endian with the sign bit flipped;
//  * float/double with Spark's order: -0.0 equals 0.0, every NaN is equal and above +inf
//    (normalised first, then the IEEE bits: sign bit flipped for a positive, all bits inverted
//    for a negative value), big-endian;
//  * decimals: the unscaled 128-bit integer (one scale per column), big-endian, sign flipped;
//  * strings and binary: unsigned byte order (Spark's UTF8_BINARY), each 0x00 byte written as
//    0x00 0xFF and the value closed by 0x00 0x00, so a prefix sorts first;
//  * descending: the value bytes inverted (the marker is not: where nulls go is its own choice).
// Lists, structs and maps are refused (Spark cannot order a map; nested orders are not
// supported here). Cost: one pass per row over its order columns, amortised O(key bytes); the
// keys of a whole batch live in one byte vector (no per-row allocation). Shared by every
// operator that orders rows (topn/, and later deduplicate by event time, ...).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "arrow/column_view.h"

namespace sliceflow::order {

// One order column: the column, its direction and where its nulls go.
struct SortColumn {
  const arrow::ColumnView* column = nullptr;
  bool descending = false;
  bool nulls_first = true;  // Spark's default: nulls first ascending, last descending
};

// Throws std::invalid_argument naming the column unless its layout can be ordered.
void check_orderable(const arrow::ColumnView& column);

class SortKeyEncoder {
 public:
  // Checks every column (check_orderable) and that they have the same length.
  explicit SortKeyEncoder(std::vector<SortColumn> columns);

  // Encodes every row; row i's key is key(i) until the next encode().
  void encode();
  int64_t rows() const { return rows_; }
  std::string_view key(int64_t row) const {
    const auto i = static_cast<size_t>(row);
    return {bytes_.data() + offsets_[i], static_cast<size_t>(offsets_[i + 1] - offsets_[i])};
  }
  // All keys back to back, and rows()+1 offsets into them (an Arrow large_binary layout).
  const std::vector<char>& bytes() const { return bytes_; }
  const std::vector<int64_t>& offsets() const { return offsets_; }

 private:
  void append_value(const SortColumn& c, int64_t row);

  std::vector<SortColumn> columns_;
  int64_t rows_ = 0;
  std::vector<char> bytes_;
  std::vector<int64_t> offsets_;
};

}  // namespace sliceflow::order
