#include "arrow/type.h"

#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace sliceflow::arrow {
namespace {

[[noreturn]] void unsupported(const ArrowSchema& schema) {
  std::string name = schema.name ? schema.name : "";
  throw std::invalid_argument("sliceflow does not support Arrow type format '" +
                              std::string(schema.format ? schema.format : "") +
                              "' (field '" + name + "')");
}

void parse_decimal(const ArrowSchema& schema, Type& type) {
  // "d:precision,scale[,bitwidth]"; only 128-bit decimals hold Spark's DecimalType.
  const char* p = schema.format + 2;
  char* end = nullptr;
  long precision = std::strtol(p, &end, 10);
  if (end == p || *end != ',') unsupported(schema);
  p = end + 1;
  long scale = std::strtol(p, &end, 10);
  if (end == p) unsupported(schema);
  if (*end == ',') {
    if (std::strcmp(end + 1, "128") != 0) unsupported(schema);
  } else if (*end != '\0') {
    unsupported(schema);
  }
  if (precision < 1 || precision > 38 || scale < 0 || scale > precision) unsupported(schema);
  type.precision = static_cast<int>(precision);
  type.scale = static_cast<int>(scale);
}

}  // namespace

std::unique_ptr<Type> type_from_schema(const ArrowSchema& schema) {
  if (schema.format == nullptr || schema.release == nullptr) {
    throw std::invalid_argument("released or empty ArrowSchema");
  }
  if (schema.dictionary != nullptr) unsupported(schema);
  auto type = std::make_unique<Type>();
  type->name = schema.name ? schema.name : "";
  type->nullable = (schema.flags & ARROW_FLAG_NULLABLE) != 0;
  const std::string format = schema.format;
  auto expect_children = [&](int64_t n) {
    if (schema.n_children != n) unsupported(schema);
  };
  if (format == "b") {
    type->kind = Kind::Bool;
  } else if (format == "c") {
    type->kind = Kind::Int8;
  } else if (format == "s") {
    type->kind = Kind::Int16;
  } else if (format == "i") {
    type->kind = Kind::Int32;
  } else if (format == "l") {
    type->kind = Kind::Int64;
  } else if (format == "f") {
    type->kind = Kind::Float32;
  } else if (format == "g") {
    type->kind = Kind::Float64;
  } else if (format.rfind("d:", 0) == 0) {
    type->kind = Kind::Decimal128;
    parse_decimal(schema, *type);
  } else if (format == "u") {
    type->kind = Kind::Utf8;
  } else if (format == "z") {
    type->kind = Kind::Binary;
  } else if (format == "tdD") {
    type->kind = Kind::Date32;
  } else if (format.rfind("tsu:", 0) == 0) {
    type->kind = Kind::TimestampUs;
    type->timezone = format.substr(4);
  } else if (format == "+l") {
    type->kind = Kind::List;
    expect_children(1);
  } else if (format == "+s") {
    type->kind = Kind::Struct;
  } else if (format == "+m") {
    type->kind = Kind::Map;
    expect_children(1);
    const ArrowSchema& entries = *schema.children[0];
    if (std::strcmp(entries.format, "+s") != 0 || entries.n_children != 2) unsupported(schema);
    auto key = type_from_schema(*entries.children[0]);
    if (key->kind != Kind::Utf8) unsupported(schema);
    type->children.push_back(std::move(key));
    type->children.push_back(type_from_schema(*entries.children[1]));
    return type;
  } else {
    unsupported(schema);
  }
  for (int64_t i = 0; i < schema.n_children; ++i) {
    type->children.push_back(type_from_schema(*schema.children[i]));
  }
  return type;
}

}  // namespace sliceflow::arrow
