// libFuzzer harness for the JSON decoder: every input is decoded as one document and as
// NDJSON, against a schema with every supported type, with the lenient options on and off,
// or (bit 1 of the first byte) against a whole-document ARRAY<STRUCT> or MAP schema.
// Built by scripts/sanitize.sh with clang -fsanitize=fuzzer,address,undefined.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "arrow/builder.h"
#include "arrow/type.h"
#include "json/decoder.h"
#include "json/options.h"

namespace {

using sliceflow::arrow::Kind;
using sliceflow::arrow::Type;

std::unique_ptr<Type> leaf(const char* name, Kind kind) {
  auto t = std::make_unique<Type>();
  t->name = name;
  t->kind = kind;
  return t;
}

std::unique_ptr<Type> row_type() {
  auto row = leaf("", Kind::Struct);
  for (auto [name, kind] : {std::pair{"b", Kind::Bool},
                            {"t", Kind::Int8},
                            {"s", Kind::Int16},
                            {"i", Kind::Int32},
                            {"l", Kind::Int64},
                            {"f", Kind::Float32},
                            {"d", Kind::Float64},
                            {"str", Kind::Utf8},
                            {"dt", Kind::Date32}}) {
    row->children.push_back(leaf(name, kind));
  }
  auto dec = leaf("dec", Kind::Decimal128);
  dec->precision = 20;
  dec->scale = 4;
  row->children.push_back(std::move(dec));
  auto ts = leaf("ts", Kind::TimestampUs);
  ts->timezone = "UTC";
  row->children.push_back(std::move(ts));
  row->children.push_back(leaf("ntz", Kind::TimestampUs));
  auto list = leaf("arr", Kind::List);
  auto inner = leaf("item", Kind::Struct);
  inner->children.push_back(leaf("x", Kind::Int64));
  inner->children.push_back(leaf("y", Kind::Utf8));
  list->children.push_back(std::move(inner));
  row->children.push_back(std::move(list));
  auto map = leaf("m", Kind::Map);
  map->children.push_back(leaf("key", Kind::Utf8));
  auto values = leaf("value", Kind::List);
  values->children.push_back(leaf("item", Kind::Float64));
  map->children.push_back(std::move(values));
  row->children.push_back(std::move(map));
  // Structs in structs: a record that lacks one leaves its columns behind (ColumnBuilder::pad_to).
  auto object = leaf("o", Kind::Struct);
  auto inner_object = leaf("p", Kind::Struct);
  inner_object->children.push_back(leaf("q", Kind::Int64));
  inner_object->children.push_back(leaf("r", Kind::Utf8));
  object->children.push_back(std::move(inner_object));
  object->children.push_back(leaf("s", Kind::Bool));
  row->children.push_back(std::move(object));
  row->children.push_back(leaf("_corrupt_record", Kind::Utf8));
  return row;
}

// Traps unless every struct's children are as long as the struct and every list's elements
// as many as its last offset says.
void check_lengths(const Type& type, const ArrowArray& array) {
  if (type.kind == Kind::Struct) {
    for (int64_t i = 0; i < array.n_children; ++i) {
      if (array.children[i]->length != array.length + array.offset) __builtin_trap();
      check_lengths(*type.children[static_cast<size_t>(i)], *array.children[i]);
    }
  } else if (type.kind == Kind::List) {
    const auto* offsets = static_cast<const int32_t*>(array.buffers[1]);
    if (array.children[0]->length != offsets[array.offset + array.length]) __builtin_trap();
    check_lengths(*type.children[0], *array.children[0]);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  auto type = row_type();
  // The options go through the parser the binding uses, in their textual form.
  std::map<std::string, std::string> options{
      {"corrupt_column_index", std::to_string(type->children.size() - 1)}};
  const char* lenient = (data[0] & 1) != 0 ? "true" : "false";
  for (const char* name : {"allowComments", "allowUnquotedFieldNames", "allowNumericLeadingZeros",
                           "allowBackslashEscapingAnyCharacter", "allowUnquotedControlChars"}) {
    options[name] = lenient;
  }
  if ((data[0] & 2) != 0) {
    // from_json with an ARRAY or MAP schema: one field holding the whole document's value.
    const size_t pick = (data[0] & 4) != 0 ? type->children.size() - 3   // m: MAP
                                           : type->children.size() - 4;  // arr: ARRAY<STRUCT>
    auto root = leaf("", Kind::Struct);
    root->children.push_back(std::move(type->children[pick]));
    type = std::move(root);
    options.erase("corrupt_column_index");
    options["root_value"] = "true";
  }
  const bool file_records = (data[0] & 8) != 0 && options.count("root_value") == 0;
  if (file_records) {
    // spark.read.json's records: source text for STRING fields, BOMs, arrays of rows, a
    // custom separator, dropped bad records.
    options["file_records"] = "true";
    options["exact_string_text"] = "true";
    options["skip_byte_order_mark"] = "true";
    if ((data[0] & 16) != 0) options["lineSep"] = (data[0] & 32) != 0 ? ";" : "}\n{";
    if ((data[0] & 64) != 0) options["mode"] = "DROPMALFORMED";
  }
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const Type& decoded = *type;
  sliceflow::json::Decoder decoder(std::move(type), sliceflow::json::parse_options(options));
  if (file_records && (data[0] & 128) != 0) {
    decoder.decode_record(text, text.size());  // a multiLine file
  } else {
    decoder.decode_lines(text, text.size());
  }
  ArrowArray out{};
  decoder.finish(&out);
  check_lengths(decoded, out);
  out.release(&out);
  return 0;
}
