#include "json/decoder.h"

#include <cstring>

#include "json/errors.h"

namespace sliceflow::json {

Decoder::Decoder(std::unique_ptr<arrow::Type> row_type, Options options)
    : row_type_(std::move(row_type)),
      options_(std::move(options)),
      row_(*row_type_),
      fast_(*row_type_, options_),
      reference_(*row_type_, options_) {
  if (row_type_->kind != arrow::Kind::Struct) {
    throw std::invalid_argument("the JSON schema must be a struct (a row of fields)");
  }
}

void Decoder::decode_one(std::string_view doc, size_t readable) {
  const int64_t row_number = stats_.rows++;
  const int64_t slot = row_.length();
  if (fast_.decode(doc, readable, row_)) {
    ++stats_.fast_rows;
    return;
  }
  row_.truncate(slot);
  ++stats_.reference_rows;
  const RowOutcome outcome = reference_.convert(doc, row_, reason_);
  if (outcome == RowOutcome::Ok || outcome == RowOutcome::Empty) return;
  if (outcome == RowOutcome::Partial) {
    ++stats_.partial_rows;
  } else {
    ++stats_.malformed_rows;
  }
  if (options_.mode == Mode::FailFast) {
    row_.truncate(slot);
    throw MalformedRecord("Malformed records are detected in record parsing (mode FAILFAST): row " +
                          std::to_string(row_number) + ": " + reason_ +
                          ". To process malformed records as null result, set the option 'mode' "
                          "to 'PERMISSIVE'.");
  }
}

void Decoder::decode_array(const arrow::StringArrayView& docs) {
  const int64_t n = docs.size();
  for (int64_t i = 0; i < n; ++i) {
    if (docs.is_null(i)) {
      ++stats_.rows;
      row_.append_null();
      continue;
    }
    const std::string_view doc = docs.get(i);
    decode_one(doc, docs.readable_from(doc.data()));
  }
}

void Decoder::decode_lines(std::string_view buffer, size_t padded_size) {
  size_t pos = 0;
  while (pos < buffer.size()) {
    size_t end = pos;
    while (end < buffer.size() && buffer[end] != '\n' && buffer[end] != '\r') ++end;
    const std::string_view line = buffer.substr(pos, end - pos);
    bool blank = true;
    for (const char c : line) {
      if (c != ' ' && c != '\t') {
        blank = false;
        break;
      }
    }
    if (!blank) decode_one(line, padded_size - pos);
    pos = end;
    if (pos < buffer.size() && buffer[pos] == '\r') ++pos;
    if (pos < buffer.size() && buffer[pos] == '\n') ++pos;
  }
}

}  // namespace sliceflow::json
