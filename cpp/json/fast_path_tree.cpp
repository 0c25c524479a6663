// The fast path's tree walk: a document that scan() does not take is parsed by simdjson's DOM
// parser (FastPath::decode) and its tape walked here once, word by word (FastPath::Tape: the
// tape format of simdjson's doc/tape.md, read from the parser's document: its tape and
// string buffer), each value written straight into its column's builder. Every node of the row
// type carries its builder (bound once) and how its column is written; a struct keeps its
// fields' name probes, builders and nodes side by side (Node::fields). The common pairs of
// column type and JSON type (a string into STRING, an integer into BIGINT, a boolean) are
// written in the loop over the fields or elements, objects and arrays by object() and value();
// any other pair goes through FastPath::scalar(), which declines whatever Spark could read
// differently (the row then goes to the reference path).
//
// Invariants: a struct's fields are found through the key-order cache (Node::order; with
// unique field names a cache hit is what field_index() returns for that key), a hit checked
// by one masked 8-byte compare of the key's length and first bytes in the string buffer
// (NameProbe; the buffer has SIMDJSON_PADDING bytes past its largest use, so the load stays
// inside it) plus its last bytes for longer names; a repeated key replaces the earlier value,
// as Spark's converter does; a record's missing fields write nothing (ColumnBuilder::pad_to
// fills their nulls when next written, or settle() does); recursion is bounded by the
// parser's maximum depth.
// Cost: one pass over the tape, a word compare per key while records keep their key order, and
// a copy of each string from simdjson's string buffer into its column; no allocation once the
// builders have grown.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "arrow/builder.h"
#include "arrow/type.h"
#include "json/fast_path.h"

namespace sliceflow::json {

using arrow::ColumnBuilder;
using arrow::Kind;
using arrow::Type;
using simdjson::dom::element_type;

namespace {

// Field names are short: two overlapping word compares beat a loop or a call to memcmp.
inline bool same_name(std::string_view name, std::string_view key) {
  const size_t n = key.size();
  if (name.size() != n) return false;
  if (n >= 8) return arrow::equal_bytes(name.data(), key.data(), n);
  if (n >= 4) {
    uint32_t x0, x1, y0, y1;
    std::memcpy(&x0, name.data(), 4);
    std::memcpy(&y0, key.data(), 4);
    std::memcpy(&x1, name.data() + n - 4, 4);
    std::memcpy(&y1, key.data() + n - 4, 4);
    return ((x0 ^ y0) | (x1 ^ y1)) == 0;
  }
  for (size_t i = 0; i < n; ++i) {
    if (name[i] != key[i]) return false;
  }
  return true;
}

}  // namespace

// What object() compares a key with to match `name` (see NameProbe).
FastPath::NameProbe FastPath::name_probe(std::string_view name) {
  NameProbe probe;
  if (name.size() > UINT32_MAX) {
    probe.mask = ~uint64_t{0};  // matches no key: every key is shorter
    probe.head = ~uint64_t{0};
    return probe;
  }
  probe.length = static_cast<uint32_t>(name.size());
  const size_t head = std::min<size_t>(name.size(), 4);
  uint32_t first = 0;
  std::memcpy(&first, name.data(), head);
  probe.head = uint64_t{probe.length} | uint64_t{first} << 32;
  probe.mask = head == 4 ? ~uint64_t{0} : (uint64_t{1} << (32 + 8 * head)) - 1;
  if (name.size() > 4) std::memcpy(&probe.tail, name.data() + name.size() - 4, 4);
  return probe;
}

// Whether the key whose length and bytes start at `entry` in the string buffer is `name`.
inline bool FastPath::matches(const NameProbe& probe, std::string_view name, const uint8_t* entry) {
  uint64_t head;
  std::memcpy(&head, entry, sizeof head);
  if (((head ^ probe.head) & probe.mask) != 0) return false;
  const size_t n = probe.length;
  if (n <= 4) return true;
  const uint8_t* key = entry + 4;
  uint32_t tail;
  std::memcpy(&tail, key + n - 4, sizeof tail);
  if (tail != probe.tail) return false;
  return n <= 8 ||
         arrow::equal_bytes(name.data() + 4, reinterpret_cast<const char*>(key) + 4, n - 8);
}

FastPath::Node FastPath::make_node(const Type& type) {
  Node node;
  node.type = &type;
  switch (type.kind) {
    case Kind::Utf8:
      node.walk = Walk::Utf8;
      break;
    case Kind::Int64:
      node.walk = Walk::Int64;
      break;
    case Kind::Bool:
      node.walk = Walk::Bool;
      break;
    case Kind::Struct:
      node.walk = Walk::Struct;
      break;
    case Kind::List:
      node.walk = Walk::List;
      break;
    case Kind::Map:
      node.walk = Walk::Map;
      break;
    default:
      node.walk = Walk::Scalar;
      break;
  }
  for (const auto& child : type.children) {
    node.children.push_back(make_node(*child));
    node.names.emplace_back(child->name);
    Field field;
    field.probe = name_probe(child->name);
    field.walk = node.children.back().walk;
    node.fields.push_back(field);
  }
  // Keys past this many in one object are looked up without the cache.
  if (type.kind == Kind::Struct) node.order.assign(type.children.size() + 8, -1);
  return node;
}

int FastPath::field_index(const Type& type, std::string_view key, size_t guess,
                          bool is_root) const {
  const size_t n = type.children.size();
  // Fields mostly arrive in schema order: the one after the last is tried first.
  if (unique_names_ && guess < n && same_name(type.children[guess]->name, key) &&
      !(is_root && static_cast<int>(guess) == options_.corrupt_column)) {
    return static_cast<int>(guess);
  }
  for (size_t i = n; i-- > 0;) {
    if (is_root && static_cast<int>(i) == options_.corrupt_column) continue;
    if (same_name(type.children[i]->name, key)) return static_cast<int>(i);
  }
  return -1;
}

void FastPath::bind(Node& node, ColumnBuilder& out) {
  // ColumnBuilder makes one child per child of its type, in order, as make_node does.
  node.out = &out;
  for (size_t i = 0; i < node.children.size(); ++i) {
    bind(node.children[i], out.child(i));
    node.fields[i].out = &out.child(i);
    node.fields[i].node = &node.children[i];
  }
}

// The common scalars (a string into STRING, an integer into BIGINT, a boolean) written in the
// caller's loop, without the call to value(); false when the pair is another one.
inline bool FastPath::plain(const Tape& tape, size_t i, Walk walk, ColumnBuilder& out) {
  const char t = tape.type(i);
  switch (walk) {
    case Walk::Utf8:
      if (t != '"') return false;
      out.append_string(tape.string(i));
      return true;
    case Walk::Int64:
      if (t != 'l') return false;
      out.append_fixed<int64_t>(static_cast<int64_t>(TapeScalar{tape, i}));
      return true;
    case Walk::Bool:
      if (t != 't' && t != 'f') return false;
      out.append_bool(t == 't');
      return true;
    default:
      return false;
  }
}

bool FastPath::object(const Tape& tape, size_t i, Node& node, bool is_root) {
  const Type& type = *node.type;
  ColumnBuilder& out = *node.out;
  const int64_t slot = out.length();
  const size_t n = node.children.size();
  size_t guess = 0;
  // Which children have one, while they fit in a word (else their lengths tell).
  const bool track = n <= 64;
  uint64_t seen = 0;
  size_t position = 0;
  // Keys and values alternate up to the closing '}', the word before the index past it.
  const size_t end = tape.after(i) - 1;
  for (size_t k = i + 1; k < end;) {
    const std::string_view key = tape.string(k);
    const size_t v = k + 1;
    k = tape.after(v);
    int index = -1;
    // The cache holds only what field_index returned for a key of the same name, so a hit is
    // its answer too (with unique names; else field_index alone decides).
    const int cached = position < node.order.size() ? node.order[position] : -1;
    if (unique_names_ && cached >= 0 &&
        matches(node.fields[static_cast<size_t>(cached)].probe,
                node.names[static_cast<size_t>(cached)], tape.string_at(v - 1))) {
      index = cached;
    } else {
      index = field_index(type, key, guess, is_root);
      if (position < node.order.size()) node.order[position] = index;
    }
    ++position;
    if (index < 0) continue;
    guess = static_cast<size_t>(index) + 1;
    const Field& field = node.fields[static_cast<size_t>(index)];
    ColumnBuilder& child = *field.out;
    const uint64_t bit = track ? uint64_t{1} << index : 0;
    if (track ? (seen & bit) != 0 : child.length() > slot) {
      child.truncate(slot);  // a repeated key replaces the value
    } else {
      seen |= bit;
      child.pad_to(slot);  // the slots of the records that lacked this field
    }
    if (!plain(tape, v, field.walk, child) && !value(tape, v, *field.node)) return false;
  }
  // A missing field stays behind (ColumnBuilder::pad_to): a wide schema's record mostly
  // lacks whole subtrees, which then cost nothing here.
  out.finish_struct();
  return true;
}

bool FastPath::value(const Tape& tape, size_t i, Node& node) {
  ColumnBuilder& out = *node.out;
  const char t = tape.type(i);
  switch (node.walk) {
    case Walk::Utf8:
      if (t != '"') break;
      out.append_string(tape.string(i));
      return true;
    case Walk::Int64:
      if (t != 'l') break;
      out.append_fixed<int64_t>(static_cast<int64_t>(TapeScalar{tape, i}));
      return true;
    case Walk::Bool:
      if (t != 't' && t != 'f') break;
      out.append_bool(t == 't');
      return true;
    case Walk::Struct:
      if (t == '{') return object(tape, i, node, false);
      if (t == 'n') break;
      return false;
    case Walk::List: {
      if (t != '[') {
        if (t == 'n') break;
        return false;
      }
      Node& element_node = node.children[0];
      const size_t end = tape.after(i) - 1;  // the closing ']'
      for (size_t k = i + 1; k < end; k = tape.after(k)) {
        if (!plain(tape, k, element_node.walk, *element_node.out) &&
            !value(tape, k, element_node)) {
          return false;
        }
      }
      out.finish_list();
      return true;
    }
    case Walk::Map: {
      if (t != '{') {
        if (t == 'n') break;
        return false;
      }
      ColumnBuilder& keys = *node.children[0].out;
      Node& value_node = node.children[1];
      const size_t end = tape.after(i) - 1;  // the closing '}'
      for (size_t k = i + 1; k < end;) {
        const size_t v = k + 1;
        if (!value(tape, v, value_node)) return false;
        keys.append_string(tape.string(k));
        k = tape.after(v);
      }
      out.finish_list();
      return true;
    }
    case Walk::Scalar:
      break;
  }
  if (t == 'n') {
    out.append_null();
    return true;
  }
  // The tape's type letters are element_type's, but for false ('f').
  const element_type et = t == 'f' ? element_type::BOOL : static_cast<element_type>(t);
  return scalar(et, TapeScalar{tape, i}, *node.type, out);
}

}  // namespace sliceflow::json
