// The fast path: a strict, fully validating parse of one document, written straight into the
// builders. The common shape (an object of scalars) is read in one pass by scan(); any other
// document goes through a simdjson DOM parse and a walk of its tape (fast_path_tree.cpp, where
// each node of the row type carries its builder). Whenever Spark's answer could differ from the
// plain reading (lenient syntax, a value that fails to convert, numbers whose text matters),
// it declines and the row is decoded again by SparkConverter.
//
// Nested records (wide inferred schemas): a struct's fields are found through a key-order
// cache (the field index of the k-th key of the previous object: one masked word compare a
// key while records keep their shape), and a record's missing fields write nothing: their columns
// stay behind and get their nulls in bulk when next written (ColumnBuilder::pad_to) or settled, so
// the row builder's struct children may be shorter than it between documents (the Decoder
// settles it before the reference path and export does). No allocation per document once the
// builders and the parser have grown; cost is simdjson's DOM parse of the document plus one
// pass over its tape.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "arrow/builder.h"
#include "arrow/type.h"
#include "json/datetime.h"
#include "json/options.h"

namespace sliceflow::json {

class FastPath {
 public:
  FastPath(const arrow::Type& row_type, const Options& options);

  // Appends one row and returns true, or returns false having appended nothing that the
  // caller must keep (it truncates the row builder back). `readable` is how many bytes
  // may be read from doc.data() (simdjson reads up to SIMDJSON_PADDING past the end).
  bool decode(std::string_view doc, size_t readable, arrow::ColumnBuilder& row);

  // False when the document may hold a number of more than maxNumLen digits or a field name
  // of more than 50000 characters, which Jackson rejects and simdjson accepts.
  bool within_jackson_limits(std::string_view doc) const;

 private:
  // True with the row appended, or false having appended nothing that the caller keeps: the
  // document is not an object of integers, literals and ASCII strings without escapes, or
  // repeats a key, and the DOM path decides.
  bool scan(std::string_view doc, size_t readable, arrow::ColumnBuilder& row);
  // How value() writes a node's column when the JSON value has the expected type: the common
  // pairs inline, anything else through scalar() (or a decline).
  enum class Walk : uint8_t { Scalar, Utf8, Int64, Bool, Struct, List, Map };
  // A node of the row type as value() and object() walk it (fast_path_tree.cpp), with its
  // builder and what object() learns of the records: records of one shape repeat their key
  // order, so the field index of the k-th key of the previous object of this struct is tried
  // first (one name compare instead of a search through the fields).
  // A field name as object() matches a key against it: one 8-byte load at the key's length
  // in simdjson's string buffer (a 32-bit length, then the bytes) holds the length and the
  // first 4 bytes, compared with `head` under `mask` (bytes past a shorter name are masked
  // off; the buffer has SIMDJSON_PADDING bytes past its largest use, so the load stays in
  // it). Names of 5 to 8 bytes compare their last 4 bytes with `tail`; longer ones the rest.
  struct NameProbe {
    uint64_t head = 0;
    uint64_t mask = 0;
    uint32_t tail = 0;
    uint32_t length = 0;
  };
  static NameProbe name_probe(std::string_view name);
  static bool matches(const NameProbe& probe, std::string_view name, const uint8_t* entry);
  struct Node;
  // What object() needs of one field of a struct, next to its siblings' (Node::fields).
  struct Field {
    NameProbe probe;
    arrow::ColumnBuilder* out = nullptr;  // the field's builder (bind())
    Node* node = nullptr;                 // the field's node (bind())
    Walk walk = Walk::Scalar;
  };
  struct Node {
    const arrow::Type* type = nullptr;
    arrow::ColumnBuilder* out = nullptr;  // the builder of this node (bind())
    Walk walk = Walk::Scalar;
    std::vector<Node> children;
    std::vector<std::string_view> names;  // the children's names, side by side
    std::vector<Field> fields;            // structs: the children as object() reads them
    std::vector<int32_t> order;           // structs: field index of the k-th key last time, or -1
  };
  static Node make_node(const arrow::Type& type);
  // Points every node at its builder in `out`'s tree (built from the same type). The decoder
  // passes the same row builder every time, whose children never change, so this runs once.
  static void bind(Node& node, arrow::ColumnBuilder& out);
  // The tape of the document the parser holds (simdjson's tape format, doc/tape.md: a word per
  // value, its type in the top byte; strings as an offset into string_buf, where a 32-bit
  // length precedes the bytes; an object or array start holds the index past its end).
  struct Tape {
    const uint64_t* words;
    const uint8_t* strings;
    char type(size_t i) const { return static_cast<char>(words[i] >> 56); }
    // Where the string at i starts in the string buffer: its 32-bit length, then its bytes.
    const uint8_t* string_at(size_t i) const {
      return strings + (words[i] & simdjson::internal::JSON_VALUE_MASK);
    }
    std::string_view string(size_t i) const {
      const uint8_t* p = strings + (words[i] & simdjson::internal::JSON_VALUE_MASK);
      uint32_t length;
      std::memcpy(&length, p, sizeof length);
      return {reinterpret_cast<const char*>(p + sizeof length), length};
    }
    uint64_t next_word(size_t i) const { return words[i + 1]; }
    // The index of the value after the one at i.
    size_t after(size_t i) const {
      switch (type(i)) {
        case '{':
        case '[':
          return static_cast<uint32_t>(words[i]);
        case 'l':
        case 'u':
        case 'd':
          return i + 2;
        default:
          return i + 1;
      }
    }
  };
  // A scalar on the tape, read by scalar() as it reads a token of scan().
  struct TapeScalar {
    const Tape& tape;
    size_t index;
    explicit operator bool() const { return tape.type(index) == 't'; }
    explicit operator int64_t() const {
      const uint64_t w = tape.next_word(index);
      int64_t v;
      std::memcpy(&v, &w, sizeof v);
      return v;
    }
    explicit operator double() const {
      const uint64_t w = tape.next_word(index);
      double v;
      std::memcpy(&v, &w, sizeof v);
      return v;
    }
    explicit operator std::string_view() const { return tape.string(index); }
  };
  // The value at tape index i into node's column; false declines the document.
  bool value(const Tape& tape, size_t i, Node& node);
  static bool plain(const Tape& tape, size_t i, Walk walk, arrow::ColumnBuilder& out);
  // A non-null scalar of JSON type `et` (a tape value or a token of scan()) into a column.
  template <typename Value>
  bool scalar(simdjson::dom::element_type et, const Value& v, const arrow::Type& type,
              arrow::ColumnBuilder& out);
  int field_index(const arrow::Type& type, std::string_view key, size_t guess, bool is_root) const;
  // The object at tape index i into node's struct column.
  bool object(const Tape& tape, size_t i, Node& node, bool is_root);
  bool parse_canonical_timestamp(std::string_view s, int64_t offset_seconds, int64_t& micros);

  const arrow::Type& row_type_;
  const Options& options_;
  Node root_;  // row_type_'s tree, with the key-order caches
  simdjson::dom::parser parser_;
  std::optional<DateTimePattern> timestamp_pattern_;
  std::optional<DateTimePattern> date_pattern_;
  bool bad_timestamp_pattern_ = false;  // patterns Spark refuses value by value: decline
  bool bad_date_pattern_ = false;
  bool unique_names_ = true;  // no struct repeats a field name (Spark keeps the last)
  // How scan() writes a top-level field's value: the common pairs of column type and token
  // directly, anything else through scalar().
  enum class ScanWrite : uint8_t { Scalar, Int64, Utf8, CanonicalTimestamp };
  // What scan() needs of a top-level field, in one entry, so that matching the key expected
  // next is one 8-byte compare (plus a memcmp past 8 bytes) with no pointer chasing into the
  // Type tree. One more entry past the last field matches nothing (`in_place` false).
  struct ScanField {
    uint64_t head = 0;       // the name's first min(8, length) bytes, the rest zero
    uint64_t head_mask = 0;  // selects those bytes of an 8-byte load
    uint32_t length = 0;
    // The name is matched against a key's raw text in place, without finding the key's end
    // first: it holds no quote, backslash, control or non-ASCII byte (so raw text equal to it
    // is that very key), names are unique, and it is not the corrupt record column.
    bool in_place = false;
    ScanWrite write = ScanWrite::Scalar;
    const char* name = nullptr;  // into row_type_, which outlives this
  };
  std::vector<ScanField> scan_fields_;
  // Documents that skip scan() and go to the DOM parse at once: set when scan() meets a
  // nested value (documents of a nested stream mostly all have one), so that only one
  // document in kScanSkips + 1 pays for a scan() that gives up.
  static constexpr int kScanSkips = 31;
  int scan_skips_ = 0;
  bool enabled_ = true;
  // The date part ("yyyy-MM-dd") of the last canonical timestamp and its day number; the
  // initial zero bytes match no string that passed the separator checks.
  uint64_t last_date_head_ = 0;
  uint16_t last_date_tail_ = 0;
  int64_t last_epoch_day_ = 0;
};

}  // namespace sliceflow::json
