// The types Spark's JSON schema inference works with (JsonInferSchema) and its rules for
// merging two of them: TypeCoercion.findTightestCommonType first, then JsonInferSchema's
// compatibleType (LONG + DOUBLE = DOUBLE, DECIMAL widening to at most 38 digits, STRUCTs merged
// field by field, anything else STRING), compatibleRootType for whole records (a record that
// is not an object adds the corrupt-record column), and canonicalizeType (NULL becomes STRING
// or is dropped, empty structs and fields with empty names are dropped).
//
// Invariants: a Struct's fields are sorted by name in Java's String.compareTo order (UTF-16
// code units), as inferField sorts them; names may repeat (Spark keeps both, and the caller
// reports the duplicate). Array has exactly one element type. Every field and element is
// nullable, as everything inference produces is.
// Cost: merges are linear in the size of the two types; nothing here parses JSON.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sliceflow::json {

enum class InferredKind : uint8_t {
  Null,
  Boolean,
  Long,
  Double,
  Decimal,
  String,
  Timestamp,
  TimestampNtz,
  Array,
  Struct,
};

struct InferredType {
  InferredKind kind = InferredKind::Null;
  int precision = 0;                   // Decimal only
  int scale = 0;                       // Decimal only
  std::vector<InferredType> children;  // Array: the element type; Struct: the field types
  std::vector<std::string> names;      // Struct: the field names, sorted, parallel to children

  static InferredType scalar(InferredKind kind) {
    InferredType t;
    t.kind = kind;
    return t;
  }
  static InferredType decimal(int precision, int scale) {
    InferredType t;
    t.kind = InferredKind::Decimal;
    t.precision = precision;
    t.scale = scale;
    return t;
  }
  bool operator==(const InferredType& other) const;
  bool operator!=(const InferredType& other) const { return !(*this == other); }
};

// Java's String.compareTo on UTF-8 text (lone surrogates in their 3-byte form): UTF-16 code
// unit order, which differs from byte order only between U+E000..U+FFFF and supplementary
// characters.
int java_compare(std::string_view a, std::string_view b);

// Spark's resolver for field names: exact when case_sensitive, else equalsIgnoreCase (ASCII
// letters fold; other characters must match exactly).
bool same_field_name(std::string_view a, std::string_view b, bool case_sensitive);

// JsonInferSchema.compatibleType(a, b): the result replaces `a`.
void merge_compatible(InferredType& a, const InferredType& b, bool case_sensitive);

// Sorts a struct's fields by name (stable, as java.util.Arrays.sort on objects).
void sort_fields(InferredType& st);

// Adds a STRING field `name` to the struct when it has no field of that name (the
// PERMISSIVE branch of compatibleRootType's withCorruptField).
void add_corrupt_field(InferredType& st, const std::string& name);

// canonicalizeType: false when the type vanishes (NULL with drop_all_null, an empty struct or
// an array of one); NULL otherwise becomes STRING.
bool canonicalize(InferredType& t, bool drop_all_null);

// Spark's JSON form of a type (DataType.json): {"type":"struct","fields":[...]}, "long",
// "decimal(10,2)", ...
void append_spark_json(const InferredType& t, std::string& out);

// Spark's simple type name: "bigint", "decimal(10,2)", "struct<...>" (for error messages).
std::string simple_string(const InferredType& t);

}  // namespace sliceflow::json
