#include "arrow/type.h"

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace sliceflow::arrow {
namespace {

[[noreturn]] void unsupported(const ArrowSchema& schema) {
  std::string name = schema.name ? schema.name : "";
  throw std::invalid_argument("sliceflow does not support Arrow type format '" +
                              std::string(schema.format ? schema.format : "") + "' (field '" +
                              name + "')");
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

struct ExportedSchema {
  std::string format;
  std::string name;
  std::vector<ArrowSchema> children;
  std::vector<ArrowSchema*> child_pointers;
};

void release_schema(ArrowSchema* schema) {
  std::unique_ptr<ExportedSchema> owner(static_cast<ExportedSchema*>(schema->private_data));
  for (ArrowSchema& child : owner->children) {
    if (child.release != nullptr) child.release(&child);
  }
  schema->release = nullptr;
}

std::string format_of(const Type& type) {
  switch (type.kind) {
    case Kind::Bool:
      return "b";
    case Kind::Int8:
      return "c";
    case Kind::Int16:
      return "s";
    case Kind::Int32:
      return "i";
    case Kind::Int64:
      return "l";
    case Kind::Float32:
      return "f";
    case Kind::Float64:
      return "g";
    case Kind::Decimal128:
      return "d:" + std::to_string(type.precision) + "," + std::to_string(type.scale);
    case Kind::Utf8:
      return "u";
    case Kind::Binary:
      return "z";
    case Kind::Date32:
      return "tdD";
    case Kind::TimestampUs:
      return "tsu:" + type.timezone;
    case Kind::List:
      return "+l";
    case Kind::Struct:
      return "+s";
    case Kind::Map:
      return "+m";
  }
  return "";
}

}  // namespace

void export_schema(const Type& type, ArrowSchema* out) {
  auto owner = std::make_unique<ExportedSchema>();
  owner->format = format_of(type);
  owner->name = type.name;
  if (type.kind == Kind::Map) {
    // One child: the entries struct of key and value.
    owner->children.resize(1);
    ArrowSchema& e = owner->children[0];
    auto entries_owner = std::make_unique<ExportedSchema>();
    entries_owner->format = "+s";
    entries_owner->name = "entries";
    entries_owner->children.resize(2);
    export_schema(*type.children[0], &entries_owner->children[0]);
    export_schema(*type.children[1], &entries_owner->children[1]);
    for (ArrowSchema& c : entries_owner->children) entries_owner->child_pointers.push_back(&c);
    e = ArrowSchema{entries_owner->format.c_str(),
                    entries_owner->name.c_str(),
                    nullptr,
                    0,
                    2,
                    entries_owner->child_pointers.data(),
                    nullptr,
                    release_schema,
                    nullptr};
    e.private_data = entries_owner.release();
  } else {
    owner->children.resize(type.children.size());
    for (size_t i = 0; i < type.children.size(); ++i) {
      export_schema(*type.children[i], &owner->children[i]);
    }
  }
  for (ArrowSchema& c : owner->children) owner->child_pointers.push_back(&c);
  *out = ArrowSchema{owner->format.c_str(),
                     owner->name.c_str(),
                     nullptr,
                     type.nullable ? ARROW_FLAG_NULLABLE : 0,
                     static_cast<int64_t>(owner->children.size()),
                     owner->children.empty() ? nullptr : owner->child_pointers.data(),
                     nullptr,
                     release_schema,
                     nullptr};
  out->private_data = owner.release();
}

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
