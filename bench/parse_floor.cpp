// The floor of JSON parsing for the benchmarks (bench/parse_floor.py builds this file on the
// machine that runs them; it is not part of sliceflow): simdjson reads every value of every
// document once (numbers parsed, strings unescaped, objects and arrays walked) and builds
// nothing. Two ways: the DOM parser (`parse_many`, simdjson's kernel picked at run time for
// this CPU, as sliceflow's decoder picks it; the Spark and inference floors use this one) and
// the On-Demand API (compiled here with -march=native, so its kernel is inlined). Any decoder of
// the same text does at least this work; sliceflow's also applies Spark's rules and writes
// Arrow columns.
//
// simdjson reads up to SIMDJSON_PADDING bytes past its input: input closer than that to the end
// of `capacity` is copied into a padded buffer first. Returns the number of documents parsed,
// or -1 - i when document i is not valid JSON (an error of stage 1, such as an unclosed string,
// names the first document of its 1 MiB batch). The documents are objects or arrays, as the
// benchmarks' are. `*values` gets the number of values walked: the walk's result, which keeps
// the compiler from dropping it.
#include <simdjson.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace {

namespace od = simdjson::ondemand;

struct Floor {
  od::parser parser;
  int64_t values = 0;

  simdjson::error_code walk(od::value value) {
    ++values;
    od::json_type type;
    if (auto e = value.type().get(type)) return e;
    switch (type) {
      case od::json_type::object: {
        od::object object;
        if (auto e = value.get_object().get(object)) return e;
        for (auto field : object) {
          std::string_view key;
          if (auto e = field.unescaped_key().get(key)) return e;
          od::value member;
          if (auto e = field.value().get(member)) return e;
          if (auto e = walk(member)) return e;
        }
        return simdjson::SUCCESS;
      }
      case od::json_type::array: {
        od::array array;
        if (auto e = value.get_array().get(array)) return e;
        for (auto item : array) {
          od::value element;
          if (auto e = item.get(element)) return e;
          if (auto e = walk(element)) return e;
        }
        return simdjson::SUCCESS;
      }
      case od::json_type::number: {
        // An integer as the bids' BIGINT fields hold, else any number.
        int64_t integer;
        if (!value.get_int64().get(integer)) return simdjson::SUCCESS;
        double real;
        return value.get_double().get(real);
      }
      case od::json_type::string: {
        std::string_view text;
        return value.get_string().get(text);
      }
      case od::json_type::boolean: {
        bool b;
        return value.get_bool().get(b);
      }
      case od::json_type::null: {
        bool is_null;
        if (auto e = value.is_null().get(is_null)) return e;
        return is_null ? simdjson::SUCCESS : simdjson::N_ATOM_ERROR;
      }
    }
    return simdjson::INCORRECT_TYPE;
  }
};

void walk_dom(simdjson::dom::element element, int64_t& values) {
  ++values;
  if (element.is_object()) {
    for (const auto field : simdjson::dom::object(element)) walk_dom(field.value, values);
  } else if (element.is_array()) {
    for (const auto item : simdjson::dom::array(element)) walk_dom(item, values);
  }
}

}  // namespace

// What one ParseFloor keeps between calls, as a decoder keeps its parser: the parsers' buffers
// are allocated once, not per call.
struct Handle {
  Floor on_demand;
  simdjson::dom::parser dom;
};

// A copy of data[0, size) followed by SIMDJSON_PADDING zero bytes, when fewer than that may be
// read past its end; else data itself.
const char* padded_input(const char* data, int64_t size, int64_t capacity, std::string& copy) {
  if (capacity >= size + static_cast<int64_t>(simdjson::SIMDJSON_PADDING)) return data;
  copy.assign(data, static_cast<size_t>(size));
  copy.resize(static_cast<size_t>(size) + simdjson::SIMDJSON_PADDING, '\0');
  return copy.data();
}

extern "C" {

void* sf_open() { return std::make_unique<Handle>().release(); }

void sf_close(void* handle) { std::unique_ptr<Handle>(static_cast<Handle*>(handle)).reset(); }

// The documents of data[0, size), one after another (NDJSON lines, or JSON texts with nothing
// between them, as a string array's data buffer holds them), through simdjson's On-Demand
// document stream: stage 1 runs over 1 MiB batches, not once per document. `capacity` bytes may
// be read.
int64_t sf_parse_stream(void* handle, const char* data, int64_t size, int64_t capacity,
                        int64_t* values) {
  Floor& floor = static_cast<Handle*>(handle)->on_demand;
  std::string copy;
  data = padded_input(data, size, capacity, copy);
  od::document_stream stream;
  if (floor.parser.iterate_many(data, static_cast<size_t>(size), size_t{1} << 20).get(stream)) {
    return -1;
  }
  floor.values = 0;
  int64_t documents = 0;
  for (auto doc_ref : stream) {
    od::document_reference doc;
    if (std::move(doc_ref).get(doc)) return -1 - documents;
    od::value value;
    if (doc.get_value().get(value) || floor.walk(value)) return -1 - documents;
    ++documents;
  }
  if (stream.truncated_bytes() != 0) return -1 - documents;
  *values = floor.values;
  return documents;
}

// The same through simdjson's DOM parser (parse_many: stage 1 over 1 MiB batches, then each
// document's tape), its tree walked once.
int64_t sf_parse_dom_stream(void* handle, const char* data, int64_t size, int64_t capacity,
                            int64_t* values) {
  simdjson::dom::parser& parser = static_cast<Handle*>(handle)->dom;
  std::string copy;
  data = padded_input(data, size, capacity, copy);
  simdjson::dom::document_stream stream;
  if (parser.parse_many(data, static_cast<size_t>(size), size_t{1} << 20).get(stream)) return -1;
  int64_t documents = 0;
  int64_t count = 0;
  for (auto result : stream) {
    simdjson::dom::element root;
    if (result.get(root)) return -1 - documents;
    walk_dom(root, count);
    ++documents;
  }
  if (stream.truncated_bytes() != 0) return -1 - documents;
  *values = count;
  return documents;
}

#define SF_STRING(x) #x
#define SF_VERSION_STRING(x) SF_STRING(x)
const char* sf_version() { return SF_VERSION_STRING(SIMDJSON_VERSION); }

// The kernel simdjson's runtime dispatch picked for this CPU (the DOM parser's and stage 1's).
const char* sf_implementation() { return simdjson::get_active_implementation()->name().data(); }

}  // extern "C"
