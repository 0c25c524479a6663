// Spark's JacksonParser, token for token: how from_json turns a JSON document into a row of
// the target schema, including partial results, the corrupt-record column and the places
// where Spark's control flow lets a failed value desynchronise the token stream.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "arrow/builder.h"
#include "arrow/type.h"
#include "json/datetime.h"
#include "json/options.h"
#include "json/reader.h"

namespace sliceflow::json {

enum class RowOutcome : uint8_t {
  Ok,         // every field converted
  Partial,    // some fields failed: the others are kept, the corrupt column holds the text
  Malformed,  // the document is bad: all fields null, the corrupt column holds the text
  Empty,      // no JSON value at all: the row itself is null
};

class SparkConverter {
 public:
  SparkConverter(const arrow::Type& row_type, const Options& options);

  // Appends exactly one slot to `row`, a struct builder of `row_type`. `reason` receives the
  // first error of a Partial or Malformed row. With Options::file_records it appends a slot
  // per row of the record instead: none for Empty, one per element of a top-level array (a
  // Partial outcome then covers every one of them).
  RowOutcome convert(std::string_view doc, arrow::ColumnBuilder& row, std::string& reason);
  // The text of the document last given to convert(), as the corrupt record column shows it
  // (valid UTF-8). Valid until the next call.
  std::string_view record_text(std::string_view doc);

 private:
  // convert() of a document-wide ARRAY or MAP (Options::root_value), at its first token.
  RowOutcome convert_root_value(Reader& reader, Token token, arrow::ColumnBuilder& row);
  // A top-level array of a file record (Options::file_records): a row per element object.
  // Throws when an element is not an object; returns whether any row is partial.
  bool convert_root_array(Reader& reader, arrow::ColumnBuilder& row);
  // Spark's value converters, entered with the reader at the value's token (or its field
  // name). They append one slot to `out` and return whether it holds a partial result
  // (Spark's PartialValueException), or throw with nothing appended that must be kept.
  bool convert_value(Reader& reader, const arrow::Type& type, arrow::ColumnBuilder& out);
  bool convert_object(Reader& reader, const arrow::Type& type, arrow::ColumnBuilder& out,
                      bool is_root);
  bool convert_array(Reader& reader, const arrow::Type& type, arrow::ColumnBuilder& out);
  bool convert_map(Reader& reader, const arrow::Type& type, arrow::ColumnBuilder& out);
  void convert_string(Reader& reader, Token token, arrow::ColumnBuilder& out);
  void convert_date(std::string_view text, arrow::ColumnBuilder& out);
  void convert_timestamp(std::string_view text, const arrow::Type& type, arrow::ColumnBuilder& out);
  [[noreturn]] void failed_conversion(Reader& reader, Token token, const arrow::Type& type);
  // Jackson's JsonGenerator.copyCurrentStructure into a UTF-8 buffer.
  void copy_structure(Reader& reader, Token token, std::string& out);
  void copy_scalar(Reader& reader, Token token, std::string& out);
  // Converts again the value that started at unit `begin`, `depth` levels deep: restores a
  // struct field after a later duplicate key failed (Spark keeps the earlier value).
  void restore_value(size_t begin, int depth, const arrow::Type& type, arrow::ColumnBuilder& out);
  int field_index(const arrow::Type& type, const std::string* name, bool is_root) const;
  // decode_utf8_like_java's tail index in the units the reader reads (after skipped_).
  size_t reader_tail() const { return tail_ == SIZE_MAX ? SIZE_MAX : tail_ - skipped_; }

  const arrow::Type& row_type_;
  const Options& options_;
  std::optional<DateTimePattern> timestamp_pattern_;
  std::optional<DateTimePattern> timestamp_ntz_pattern_;
  std::optional<DateTimePattern> date_pattern_;
  // Set when Spark would refuse the pattern value by value (each string a conversion error).
  std::string timestamp_pattern_error_;
  std::string timestamp_ntz_pattern_error_;
  std::string date_pattern_error_;
  std::vector<char16_t> units_;  // the document as Jackson reads it
  size_t tail_ = 0;
  size_t skipped_ = 0;  // units before what the reader reads (a skipped BOM)
  Reader reader_;
  std::string first_error_;
  std::string copy_buffer_;
  std::string cleaned_;
  std::vector<std::string> map_keys_;  // one reusable key per map nesting level
  size_t map_depth_ = 0;
  std::vector<size_t> value_begins_;  // per open struct: where each field's value started
  // copy_structure: per open container, bit 0 = object, bit 1 = has an entry.
  std::vector<uint8_t> generator_stack_;
};

}  // namespace sliceflow::json
