// The change kinds of a changelog (Flink's RowKind), written once for every kernel that reads
// or emits them: +I insert, -U update before, +U update after, -D delete. Their codes (the
// int8 op columns that travel between Python and the kernels: 0..3, in this order), their
// names (the STRING op columns users write), parsing such a value, and the one check of a
// STRING op column with its error, which the changelog encoder and the deduplicator share.
// Invariant: a code is in [0, 3]; a null STRING op is an insert. Cost: O(1) per value; the
// check allocates only to build its error.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "arrow/column_view.h"

namespace sliceflow::changes {

enum class ChangeKind : int8_t { Insert = 0, UpdateBefore = 1, UpdateAfter = 2, Delete = 3 };

// "+I", "-U", "+U" or "-D".
constexpr const char* name(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::Insert:
      return "+I";
    case ChangeKind::UpdateBefore:
      return "-U";
    case ChangeKind::UpdateAfter:
      return "+U";
    case ChangeKind::Delete:
      return "-D";
  }
  return "?";
}

constexpr int8_t code(ChangeKind kind) { return static_cast<int8_t>(kind); }

// Whether a code (an int8 op value) names a change kind.
constexpr bool is_code(int64_t code) { return code >= 0 && code <= 3; }

// -U and -D take a row back; +I and +U add one.
constexpr bool retracts(ChangeKind kind) {
  return kind == ChangeKind::UpdateBefore || kind == ChangeKind::Delete;
}

// The change kind a STRING op value names ("+I", "-U", "+U", "-D", exactly); false for any
// other text.
bool parse(std::string_view text, ChangeKind& out);

// An op value that is not a change kind. The message names the op column and shows the value
// (at most 40 characters); row() is the row of the batch that holds it, so that a caller can
// show that row in the user's terms. The bindings raise it in Python as a ValueError subclass
// (sliceflow._core.changes.NotAChangeKindError) with the row as an attribute.
class NotAChangeKind : public std::invalid_argument {
 public:
  NotAChangeKind(const std::string& column, std::string_view value, int64_t row);
  int64_t row() const { return row_; }

 private:
  int64_t row_;
};

// Whether `op` is a column a STRING op value can be read from (utf8 or large_utf8); the
// caller names its kernel in the error for any other column.
bool is_op_column(const arrow::ColumnView& op);

// The change kind of row r of a STRING op column (null: +I); throws NotAChangeKind naming the
// column for any other value.
ChangeKind at(const arrow::ColumnView& op, int64_t r);

}  // namespace sliceflow::changes
