// Parsing STRING op values and the error for one that is not a change kind (change_kind.h).
#include "changes/change_kind.h"

namespace sliceflow::changes {
namespace {

std::string not_a_change_kind_message(const std::string& column, std::string_view value) {
  return "op column '" + column + "' holds '" + std::string(value.substr(0, 40)) +
         (value.size() > 40 ? "…" : "") +
         "', which is not a change kind: expected +I, -U, +U or -D (null: +I)";
}

}  // namespace

bool parse(std::string_view text, ChangeKind& out) {
  if (text.size() != 2) return false;
  const char sign = text[0];
  const char kind = text[1];
  if (sign == '+' && kind == 'I') {
    out = ChangeKind::Insert;
  } else if (sign == '-' && kind == 'U') {
    out = ChangeKind::UpdateBefore;
  } else if (sign == '+' && kind == 'U') {
    out = ChangeKind::UpdateAfter;
  } else if (sign == '-' && kind == 'D') {
    out = ChangeKind::Delete;
  } else {
    return false;
  }
  return true;
}

NotAChangeKind::NotAChangeKind(const std::string& column, std::string_view value, int64_t row)
    : std::invalid_argument(not_a_change_kind_message(column, value)), row_(row) {}

bool is_op_column(const arrow::ColumnView& op) {
  return op.layout() == arrow::Layout::String || op.layout() == arrow::Layout::LargeString;
}

ChangeKind at(const arrow::ColumnView& op, int64_t r) {
  if (op.is_null(r)) return ChangeKind::Insert;
  const std::string_view text = op.str(r);
  ChangeKind kind = ChangeKind::Insert;
  if (!parse(text, kind)) throw NotAChangeKind(op.name(), text, r);
  return kind;
}

}  // namespace sliceflow::changes
