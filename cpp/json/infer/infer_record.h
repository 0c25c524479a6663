// One thread's share of schema inference: JsonInferSchema.inferField for each record, merged
// into this thread's schema with compatibleRootType (see infer.h for the rules).
//
// Invariant: root() is always a struct (Spark folds from an empty struct). The simdjson path
// only checks that a record's type fits the merged schema (merging it would change nothing);
// the first record that does not fit is typed in full and merged. Reusable buffers only: a
// record that fits allocates nothing. Not thread-safe: one instance per thread.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json/datetime.h"
#include "json/infer/inferred_type.h"
#include "json/reader.h"

namespace sliceflow::json {

struct InferOptions;

class RecordInference {
 public:
  explicit RecordInference(const InferOptions& options);

  // One record (a line without its line break, or a whole multiLine document). `readable`
  // bytes may be read from doc.data(). `line` names the record in a FAILFAST error.
  void add(std::string_view doc, size_t readable, int64_t line);
  // A record simdjson has parsed: `root` is the first value of `text`, its line without the
  // line break (what the Reader reads when simdjson's reading is not Spark's).
  void add_parsed(simdjson::dom::element root, std::string_view text, int64_t line);

  InferredType& root() { return root_; }
  int64_t slow_records() const { return slow_records_; }

 private:
  // The simdjson path: true when the record was handled (fits, or typed and merged), false
  // when the Reader must decide.
  bool add_fast(std::string_view doc, size_t readable, int64_t line);
  bool add_element(simdjson::dom::element root, int64_t line);
  // The Reader's path (Jackson's reading, limits and leniency).
  void add_slow(std::string_view doc, int64_t line);
  // A scalar's type (kind, and precision and scale of a decimal), built without the
  // children and names an InferredType carries: the fits() path types every value.
  struct Scalar {
    InferredKind kind = InferredKind::Null;
    int precision = 0;
    int scale = 0;
  };
  // Whether a value's type fits `acc` (merging it would change nothing). Scalars are checked
  // in line; objects and arrays in fits_nested.
  bool fits(const InferredType& acc, simdjson::dom::element e, size_t depth);
  bool fits_nested(const InferredType& acc, simdjson::dom::element e, size_t depth);
  static bool fits_scalar(const InferredType& acc, const Scalar& rec);
  // Whether a value holds a fractional number at any depth.
  static bool has_double(simdjson::dom::element e);
  // The type of a DOM value that is not an array or object; false when only the Reader can
  // tell (prefersDecimal floats, -0).
  bool scalar_of(simdjson::dom::element e, Scalar& out) const;
  // The type of a DOM value; false when only the Reader can tell (prefersDecimal floats, -0).
  bool type_of(simdjson::dom::element e, InferredType& out);
  // inferField over the Reader's tokens, the reader standing at the value's first token.
  InferredType type_of(Reader& reader, Token token);
  InferredType string_type(std::string_view text) const;
  Scalar string_scalar(std::string_view text) const;
  InferredType float_type(std::string_view text) const;
  // compatibleRootType(root, record).
  void merge_root(const InferredType& record, int64_t line);
  void malformed(const std::string& reason, int64_t line);

  const InferOptions& options_;
  InferredType root_ = InferredType::scalar(InferredKind::Struct);
  simdjson::dom::parser parser_;
  bool simdjson_ok_ = true;
  std::optional<DateTimePattern> timestamp_pattern_;
  std::optional<DateTimePattern> timestamp_ntz_pattern_;
  bool bad_timestamp_pattern_ = false;
  bool bad_timestamp_ntz_pattern_ = false;
  std::vector<char16_t> units_;
  Reader reader_;
  // Per nesting level: which fields of the merged struct the current object has named (a
  // repeated name changes the schema, so it does not fit): a field is named when its entry
  // holds the object's stamp, a number no earlier object had (no clearing per object).
  std::vector<std::vector<uint64_t>> seen_;
  uint64_t stamp_ = 0;
  // Per nesting level and key position: the field the key named in the previous object there
  // (records mostly repeat their key order, so the sorted names are rarely searched).
  std::vector<std::vector<size_t>> guesses_;
  int64_t slow_records_ = 0;
};

}  // namespace sliceflow::json
