// libFuzzer harness for JSON schema inference: every input is inferred as NDJSON lines (on one
// and on two threads; on one, parsed in batches and line by line, which must agree) and as one
// multiLine document, with the options picked by the first
// byte (prefersDecimal, primitivesAsString, inferTimestamp, dropFieldIfAllNull, the parse
// mode, the lenient Jackson flags, case sensitivity), and the schema is rendered. The only
// exceptions allowed out are the ones Spark's inference raises too (FAILFAST's malformed
// record, prefersDecimal's negative scale).
// Built by scripts/sanitize.sh with clang -fsanitize=fuzzer,address,undefined.
#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

#include "json/errors.h"
#include "json/infer/infer.h"

namespace {

std::map<std::string, std::string> options_for(uint8_t bits) {
  auto flag = [&](int bit) { return (bits >> bit) & 1 ? "true" : "false"; };
  std::map<std::string, std::string> options = {
      {"prefersDecimal", flag(0)},
      {"primitivesAsString", flag(1)},
      {"inferTimestamp", flag(2)},
      {"dropFieldIfAllNull", flag(3)},
      {"allowComments", flag(4)},
      {"allowUnquotedFieldNames", flag(4)},
      {"allowNumericLeadingZeros", flag(4)},
      {"allowSingleQuotes", flag(5)},
      {"caseSensitive", flag(5)},
      {"timeZone", "UTC"},
  };
  static const char* const kModes[] = {"PERMISSIVE", "DROPMALFORMED", "FAILFAST", "PERMISSIVE"};
  options["mode"] = kModes[(bits >> 6) & 3];
  if ((bits & 0x0C) == 0x0C) options["timestampType"] = "TIMESTAMP_NTZ";
  return options;
}

// The schema, or the error Spark's inference raises too (FAILFAST's malformed record,
// prefersDecimal's negative scale). `text` is followed by padding simdjson may read.
std::string run(const std::map<std::string, std::string>& options, std::string_view text,
                size_t readable, bool lines, int threads, bool batches) {
  sliceflow::json::InferOptions parsed = sliceflow::json::parse_infer_options(options);
  parsed.line_batches = batches;
  sliceflow::json::SchemaInference inference(parsed);
  try {
    if (lines) {
      inference.add_lines(text, readable, threads);
    } else {
      inference.add_document(text);
    }
  } catch (const sliceflow::json::MalformedRecord& e) {
    return std::string("malformed: ") + e.what();  // FAILFAST
  } catch (const std::invalid_argument& e) {
    return std::string("invalid: ") + e.what();
  }
  const std::string schema = inference.schema_json();
  if (schema.empty() || schema[0] != '{') __builtin_trap();
  return schema;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto options = options_for(data[0]);
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  // Lines parsed in batches (which need padding after the text) against each line on its
  // own: the same schema or the same error, always.
  std::string padded = text;
  padded.append(64, ' ');
  const std::string_view lines(padded.data(), text.size());
  const std::string batched = run(options, lines, padded.size(), true, 1, true);
  if (batched != run(options, lines, padded.size(), true, 1, false)) __builtin_trap();
  run(options, text, text.size(), true, 2, true);
  run(options, text, text.size(), false, 1, true);
  return 0;
}
