// Decodes batches of JSON documents into one Arrow struct array, a row per document.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "arrow/builder.h"
#include "arrow/input.h"
#include "arrow/type.h"
#include "json/fast_path.h"
#include "json/options.h"
#include "json/spark_converter.h"

namespace sliceflow::json {

struct DecodeStats {
  int64_t rows = 0;
  int64_t fast_rows = 0;       // decoded by the simdjson fast path
  int64_t reference_rows = 0;  // decoded by the Spark-compatible reference path
  int64_t partial_rows = 0;
  int64_t malformed_rows = 0;
};

class Decoder {
 public:
  Decoder(std::unique_ptr<arrow::Type> row_type, Options options);

  // One document per array element; a null element gives a null row.
  void decode_array(const arrow::StringArrayView& docs);
  // NDJSON: one document per line (\n, \r\n or \r; Options::line_separator if set); blank
  // lines give no row. `padded_size` is how many bytes may be read from buffer.data() (at
  // least buffer.size()).
  void decode_lines(std::string_view buffer, size_t padded_size);
  // One record: a whole file with multiLine (Options::file_records gives a row per element of
  // a top-level array). `padded_size` as for decode_lines.
  void decode_record(std::string_view record, size_t padded_size);
  // Where the record that made the last decode_lines / decode_record call throw
  // MalformedRecord starts, in bytes from the start of that call's buffer; -1 if none did.
  int64_t failed_offset() const { return failed_offset_; }

  int64_t pending_rows() const { return row_.length(); }
  size_t memory_usage() const { return row_.memory_usage(); }
  const DecodeStats& stats() const { return stats_; }
  const arrow::Type& row_type() const { return *row_type_; }

  // Moves the rows decoded so far out as a struct array.
  void finish(ArrowArray* out) { row_.export_to(out); }

 private:
  void decode_one(std::string_view doc, size_t readable);
  void decode_separated(std::string_view buffer, size_t padded_size);
  // The rest of decode_one once the fast path has declined (the row is still unwritten).
  void decode_reference(std::string_view doc);
  void maybe_reserve(int64_t start_rows, size_t consumed, size_t remaining, bool& reserved);

  std::unique_ptr<arrow::Type> row_type_;
  Options options_;
  arrow::ColumnBuilder row_;
  FastPath fast_;
  SparkConverter reference_;
  DecodeStats stats_;
  std::string reason_;
  int64_t failed_offset_ = -1;
};

}  // namespace sliceflow::json
