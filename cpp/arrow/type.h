// The logical types sliceflow can build, read from an ArrowSchema (the target schema that
// Python hands over) so that C++ and pyarrow agree on one description of the output.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "arrow/c_data.h"

namespace sliceflow::arrow {

enum class Kind : uint8_t {
  Bool,
  Int8,
  Int16,
  Int32,
  Int64,
  Float32,
  Float64,
  Decimal128,
  Utf8,
  Binary,  // bytes without an encoding (sliceflow's window key column)
  Date32,
  TimestampUs,  // timezone set: an instant; empty timezone: timestamp_ntz
  List,
  Struct,
  Map,  // children[0] is the key type (utf8), children[1] the value type
};

struct Type {
  Kind kind = Kind::Utf8;
  std::string name;
  bool nullable = true;
  int precision = 0;     // Decimal128
  int scale = 0;         // Decimal128
  std::string timezone;  // TimestampUs: empty means "no time zone" (Spark's timestamp_ntz)
  std::vector<std::unique_ptr<Type>> children;

  bool is_ntz() const { return kind == Kind::TimestampUs && timezone.empty(); }
};

// Writes `type` as an ArrowSchema tree (the consumer calls out->release).
void export_schema(const Type& type, ArrowSchema* out);

// Parses an ArrowSchema tree. Throws std::invalid_argument naming the unsupported format.
std::unique_ptr<Type> type_from_schema(const ArrowSchema& schema);

}  // namespace sliceflow::arrow
