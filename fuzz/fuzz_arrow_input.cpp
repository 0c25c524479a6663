// libFuzzer harness for Arrow input validation (arrow/validate.h): the input bytes forge a tree
// of ArrowSchema/ArrowArray structs as an untrusted producer could hand over through a
// PyCapsule: format strings (valid, unsupported and garbage), lengths, offsets and null counts
// (including negative and huge ones), n_buffers / n_children that disagree with the format or
// between schema and array, null buffers and children, and buffers of fuzz-chosen sizes whose
// bytes are the offsets (raw, or made non-decreasing so deeper checks are reached).
// Each forged tree is validated as the JSON decoder's documents and as a kernel batch, with
// the buffer sizes known (as the Python layer passes them). What validation accepts is then
// read in full: through StringArrayView and the JSON decoder for string arrays, through
// ColumnView (what the window and changelog kernels read) for every node, every row, and
// hashed as Spark's hash() does (cpp/hash). The sanitizers must stay silent: anything the validator
// lets through is safe to read. Built by scripts/sanitize.sh with clang
// -fsanitize=fuzzer,address,undefined.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "arrow/c_data.h"
#include "arrow/column_view.h"
#include "arrow/input.h"
#include "arrow/type.h"
#include "arrow/validate.h"
#include "hash/spark_hash.h"
#include "json/decoder.h"

namespace {

namespace sa = sliceflow::arrow;

class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  uint8_t u8() { return p_ < end_ ? *p_++ : 0; }
  template <typename T>
  T get() {
    T v{};
    const size_t n =
        static_cast<size_t>(end_ - p_) < sizeof(T) ? static_cast<size_t>(end_ - p_) : sizeof(T);
    std::memcpy(&v, p_, n);
    p_ += n;
    return v;
  }
  bool empty() const { return p_ >= end_; }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

void no_release_schema(ArrowSchema*) {}
void no_release_array(ArrowArray*) {}

const char* const kFormats[] = {"u",  "z",  "U",  "Z", "l", "i",      "tdD",        "tsu:UTC",
                                "b",  "c",  "s",  "f", "g", "d:10,2", "d:38,4,256", "+l",
                                "+s", "+s", "+l", "x", "",  "+m",     "u"};

// One forged node and everything it points to (owned here: the structs hold raw pointers).
struct Node {
  ArrowSchema schema{};
  ArrowArray array{};
  std::string format;
  std::string name;
  std::vector<std::vector<uint8_t>> buffers;
  std::vector<const void*> buffer_ptrs;
  std::vector<std::unique_ptr<Node>> children;
  std::vector<ArrowSchema*> schema_children;
  std::vector<ArrowArray*> array_children;
};

int64_t pick_count(Bytes& in) {
  const uint8_t b = in.u8();
  switch (b >> 5) {
    case 0:
      return -static_cast<int64_t>(b & 3) - 1;  // negative
    case 1:
      return int64_t{1} << (30 + (b & 31));  // huge
    default:
      return b & 31;
  }
}

// Fills one buffer: raw bytes, or non-decreasing offsets of `width` bytes from small steps.
void fill(Bytes& in, std::vector<uint8_t>& buf, int width) {
  const bool monotonic = (in.u8() & 3) != 0;
  if (!monotonic || width == 0) {
    for (auto& b : buf) b = in.u8();
    return;
  }
  int64_t value = in.u8() & 3;
  for (size_t i = 0; i + static_cast<size_t>(width) <= buf.size();
       i += static_cast<size_t>(width)) {
    if (width == 4) {
      const auto v = static_cast<int32_t>(value);
      std::memcpy(buf.data() + i, &v, 4);
    } else {
      std::memcpy(buf.data() + i, &value, 8);
    }
    value += in.u8() & 7;
  }
}

std::unique_ptr<Node> forge(Bytes& in, int depth, sa::BufferSizes& sizes) {
  auto node = std::make_unique<Node>();
  const uint8_t f = in.u8();
  node->format = kFormats[f % (sizeof(kFormats) / sizeof(kFormats[0]))];
  node->name = "c" + std::to_string(depth);
  const uint8_t shape = in.u8();
  const bool consistent = (shape & 7) != 0;
  int64_t want_buffers = 2;
  if (node->format == "u" || node->format == "z" || node->format == "U" || node->format == "Z")
    want_buffers = 3;
  if (node->format == "+s") want_buffers = 1;
  const int64_t n_buffers = consistent ? want_buffers : (shape >> 3) % 5;
  int64_t n_children = 0;
  if (node->format == "+l") n_children = 1;
  if (node->format == "+s") n_children = (shape >> 5) % 4;
  if (!consistent && (shape & 8)) n_children = (shape >> 4) % 3;
  if (depth >= 4) n_children = 0;

  ArrowArray& a = node->array;
  a.length = pick_count(in);
  a.offset = (in.u8() & 0xe0) == 0 ? pick_count(in) : in.u8() & 3;
  const uint8_t nc = in.u8();
  a.null_count = nc < 32 ? -1 : nc < 160 ? 0 : nc % 40;
  a.n_buffers = n_buffers;
  a.n_children = n_children;
  a.release = no_release_array;

  const int width = (node->format == "U" || node->format == "Z") ? 8 : 4;
  for (int64_t b = 0; b < n_buffers; ++b) {
    const uint8_t mode = in.u8();
    if (mode < 24) {  // absent
      node->buffers.emplace_back();
      node->buffer_ptrs.push_back(nullptr);
      sizes.push_back(-1);
      continue;
    }
    node->buffers.emplace_back(static_cast<size_t>(in.u8() % 160));
    auto& buf = node->buffers.back();
    fill(in, buf, b == 1 && (want_buffers == 3 || node->format == "+l") ? width : 0);
    // A distinct, valid address even for an empty buffer.
    if (buf.empty()) buf.reserve(1);
    node->buffer_ptrs.push_back(buf.data());
    sizes.push_back(static_cast<int64_t>(buf.size()));
  }
  a.buffers = (in.u8() & 0xf0) == 0 ? nullptr : node->buffer_ptrs.data();
  if (n_buffers == 0) a.buffers = node->buffer_ptrs.data();

  for (int64_t c = 0; c < n_children; ++c) {
    node->children.push_back(forge(in, depth + 1, sizes));
    node->schema_children.push_back(&node->children.back()->schema);
    node->array_children.push_back(&node->children.back()->array);
  }
  if (n_children > 0 && (in.u8() & 0xf8) == 0) node->array_children.back() = nullptr;
  a.children = node->array_children.data();

  ArrowSchema& s = node->schema;
  s.format = node->format.c_str();
  s.name = node->name.c_str();
  s.n_children = (in.u8() & 0xf0) == 0 ? n_children + 1 : n_children;
  if (s.n_children > n_children) node->schema_children.push_back(nullptr);
  s.children = node->schema_children.data();
  s.release = no_release_schema;
  return node;
}

volatile uint64_t sink;

// Whether reading a row of a validated node touches memory: a struct without validity bits
// whose children (if any) touch none needs no memory at any length, so validation rightly
// accepts 2^51 rows of it (a struct of a struct without children, found by this fuzzer).
bool reads_memory(const sa::ColumnView& v) {
  if (v.layout() != sa::Layout::Struct || v.may_have_nulls()) return true;
  for (size_t c = 0; c < v.num_children(); ++c) {
    if (reads_memory(v.child(c))) return true;
  }
  return false;
}

// Reads rows [begin, end) of a validated node as a kernel could: every value, the list
// elements of every row and the struct children at the same rows.
void read_rows(const sa::ColumnView& v, int64_t begin, int64_t end) {
  // Nothing to read, and no point looping over up to 2^63 rows.
  if (!reads_memory(v)) return;
  uint64_t acc = 0;
  for (int64_t i = begin; i < end; ++i) {
    acc += v.is_null(i) ? 1 : 0;
    switch (v.layout()) {
      case sa::Layout::String:
      case sa::Layout::LargeString:
        for (const char c : v.str(i)) acc += static_cast<uint8_t>(c);
        break;
      case sa::Layout::List:
        read_rows(v.child(0), v.list_begin(i), v.list_end(i));
        break;
      case sa::Layout::Struct:
        break;
      case sa::Layout::Float32:
      case sa::Layout::Float64:
        acc += static_cast<uint64_t>(v.f64(i) != 0.0);
        break;
      case sa::Layout::Decimal128:
        acc += static_cast<uint64_t>(v.i128(i));
        break;
      default:
        acc += static_cast<uint64_t>(v.i64(i));
        break;
    }
  }
  if (v.layout() == sa::Layout::Struct) {
    for (size_t c = 0; c < v.num_children(); ++c) read_rows(v.child(c), begin, end);
  }
  sink = sink + acc;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  sa::BufferSizes sizes;
  const auto root = forge(in, 0, sizes);

  // As the JSON decoder's documents.
  try {
    sa::validate_array(root->schema, root->array, sa::Layout::String, "docs", sizes);
    const sa::StringArrayView view(root->schema, root->array);
    uint64_t acc = 0;
    for (int64_t i = 0; i < view.size(); ++i) {
      if (view.is_null(i)) continue;
      const std::string_view doc = view.get(i);
      acc += doc.size() + view.readable_from(doc.data());
    }
    sink = sink + acc;
    auto type = std::make_unique<sa::Type>();
    type->kind = sa::Kind::Struct;
    auto field = std::make_unique<sa::Type>();
    field->name = "a";
    field->kind = sa::Kind::Utf8;
    type->children.push_back(std::move(field));
    sliceflow::json::Decoder decoder(std::move(type), sliceflow::json::Options{});
    decoder.decode_array(view);
    ArrowArray out{};
    decoder.finish(&out);
    out.release(&out);
  } catch (const std::invalid_argument&) {
  }

  // As a batch of the window / changelog kernels (a struct), or as one column of its own type.
  try {
    const sa::Layout top = sa::layout_of(root->schema.format, "batch");
    sa::validate_array(root->schema, root->array, top, "batch", sizes);
    const sa::ColumnView view(root->schema, root->array);
    read_rows(view, 0, view.length());
    // Spark's hash() of the rows (cpp/hash), the bucket of a streaming operator's packing step.
    if (view.length() <= (int64_t{1} << 20)) {
      std::vector<int32_t> hashes(static_cast<size_t>(view.length()));
      const std::vector<const sa::ColumnView*> columns = {&view};
      sliceflow::hash::spark_hash(columns, view.length(), hashes.data());
    }
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
