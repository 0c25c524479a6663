// Spark's JSON schema inference (JsonInferSchema.infer) over blocks of NDJSON text, in
// parallel: the schema spark.read.json infers for the same lines and options.
//
// Each record is read as inferField reads it: the first JSON value of the line only (text
// after it is never looked at), objects to structs with their fields sorted by name, integers
// to BIGINT (DECIMAL(digits, 0) beyond BIGINT, DOUBLE beyond 38 digits), other numbers to
// DOUBLE (or DECIMAL with prefersDecimal), empty strings to NULL, strings to STRING (or
// DECIMAL / TIMESTAMP with prefersDecimal / inferTimestamp), arrays to the merge of their
// elements. Records merge with compatibleRootType: a record that is not an object (or an
// array of objects) adds the corrupt-record column in PERMISSIVE mode, is dropped in
// DROPMALFORMED and fails in FAILFAST; a record Jackson cannot parse does the same (in
// PERMISSIVE it counts as {corrupt: STRING}).
//
// Well-formed lines are parsed by simdjson, a batch of lines at a time (infer_lines.h), and
// each record is checked against the schema merged so far without building its type (no
// allocation when the schema does not change); a line simdjson refuses, or whose reading
// depends on Jackson's leniency or limits, goes through the Jackson-compatible Reader. The
// two give the same type for every line both accept.
//
// add_lines splits a block at line ends into a few parts per thread, which the threads take
// as they come free; the k-th part of every block is merged into the k-th partial schema
// (so the result does not depend on timing), and schema_json() merges those in order (Spark
// merges its partitions' schemas the same way; the rules are associative and commutative for
// everything but the order of case-insensitively equal names, where Spark's own result
// depends on its partitioning).
// Cost: simdjson's parse of the text plus a walk of each record's values; memory: the merged
// schemas and a batch parser per thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "json/infer/inferred_type.h"
#include "json/options.h"

namespace sliceflow::json {

enum class InferMode : uint8_t { Permissive, DropMalformed, FailFast };

struct InferOptions {
  Options json;  // Jackson's flags and limits, time zone and datetime formats
  InferMode mode = InferMode::Permissive;
  std::string corrupt_column = "_corrupt_record";
  bool prefers_decimal = false;
  bool primitives_as_string = false;
  bool drop_field_if_all_null = false;
  bool infer_timestamp = false;
  // spark.sql.timestampType is TIMESTAMP_NTZ: strings without a zone infer as TIMESTAMP_NTZ.
  bool timestamp_ntz_default = false;
  bool case_sensitive = false;  // spark.sql.caseSensitive
  // samplingRatio: above 0.99 every line is read (as in Spark); below, each line is read when
  // a hash of its line number (counted over every block) falls under the ratio. Spark draws
  // per-partition random numbers instead, so the sampled lines are not the same ones.
  double sampling_ratio = 1.0;
  // Mixed into the sample's hash: inferences of different files (each numbering its lines
  // from 1) take different lines. Not a Spark option.
  uint64_t sample_seed = 0;
  // Lines parsed a batch at a time (infer_lines.h); false parses each line on its own, the
  // reference the batches are tested against. Not a Spark option.
  bool line_batches = true;
};

// From the textual option map: Spark's option names (prefersDecimal, primitivesAsString,
// dropFieldIfAllNull, inferTimestamp, samplingRatio, mode incl. DROPMALFORMED,
// columnNameOfCorruptRecord)
// plus "timestampType" and "caseSensitive" (session settings), and every option
// parse_options reads. Throws std::invalid_argument naming a bad option value.
InferOptions parse_infer_options(const std::map<std::string, std::string>& options);

class LineBatch;
class RecordInference;

class SchemaInference {
 public:
  explicit SchemaInference(InferOptions options);
  ~SchemaInference();
  SchemaInference(const SchemaInference&) = delete;
  SchemaInference& operator=(const SchemaInference&) = delete;

  // Infers every line of `block` (\n, \r\n or \r ends a line; the block holds whole lines) on
  // up to `threads` threads. `readable` is how many bytes may be read from block.data() (at
  // least block.size(); simdjson reads up to SIMDJSON_PADDING past a line when it can).
  // FAILFAST: throws MalformedRecord naming the line (1-based, counted over every block
  // given so far) and the reason; the schema is then undefined.
  void add_lines(std::string_view block, size_t readable, int threads);
  // One record made of the whole text (multiLine: a file is one JSON value).
  void add_document(std::string_view doc);
  // Adds the records `other` has read after this one's (the schema is the one of this one's
  // lines followed by other's; its line count adds to lines()). Each file of a list can be
  // inferred on its own thread, and the results merged in the list's order.
  void merge(const SchemaInference& other);

  // The inferred schema in Spark's JSON form (StructType.json()), canonicalized.
  std::string schema_json() const;
  int64_t lines() const { return lines_; }
  // Records whose type did not fit the schema merged so far (the slow path), for tests.
  int64_t schema_changes() const;
  // Lines read from simdjson's batches rather than on their own (infer_lines.h), for tests.
  int64_t batched_lines() const;

 private:
  InferOptions options_;
  // The partial schema of every part so far, in order: each worker's, then what merge() took.
  InferredType root() const;

  std::vector<std::unique_ptr<RecordInference>> workers_;
  // Schemas merged from other inferences, after the workers' (merge()).
  std::vector<InferredType> merged_;
  // One per thread: the batch parser (a few MiB) is the thread's, not the part's.
  std::vector<std::unique_ptr<LineBatch>> batches_;
  int64_t lines_ = 0;
};

}  // namespace sliceflow::json
