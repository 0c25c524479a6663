// Why a document could not be decoded. SyntaxError ends the whole row (Spark's
// BadRecordException); ConversionError ends one field (a partial result at the root).
#pragma once

#include <stdexcept>
#include <string>

namespace sliceflow::json {

// Spark catches both kinds as NonFatal in the same places; only where they are thrown differs.
struct JsonError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct SyntaxError : JsonError {
  using JsonError::JsonError;
};

struct ConversionError : JsonError {
  using JsonError::JsonError;
};

// Raised to Python in FAILFAST mode; names the row and the reason.
struct MalformedRecord : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace sliceflow::json
