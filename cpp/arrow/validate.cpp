#include "arrow/validate.h"

#include <limits>
#include <stdexcept>
#include <string>

namespace sliceflow::arrow {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw std::invalid_argument("malformed Arrow input " + path + ": " + problem);
}

class Validator {
 public:
  explicit Validator(const BufferSizes& sizes) : sizes_(sizes) {}

  void node(const ArrowSchema& schema, const ArrowArray& array, const std::string& path, int depth,
            const Layout* expected) {
    if (depth > kMaxDepth)
      fail(path, "nested deeper than " + std::to_string(kMaxDepth) + " levels");
    if (schema.release == nullptr) fail(path, "the ArrowSchema was released");
    if (array.release == nullptr) fail(path, "the ArrowArray was released");
    if (schema.format == nullptr) fail(path, "the ArrowSchema has no format string");
    if (schema.dictionary != nullptr || array.dictionary != nullptr) {
      fail(path, "dictionary-encoded columns are not supported");
    }
    const std::string format = schema.format;
    const Layout layout = layout_of(format, path);
    if (expected != nullptr && !accepts(*expected, layout)) {
      fail(path, std::string("expected ") + describe(*expected) + ", got format '" + format + "'");
    }
    const int64_t length = array.length;
    const int64_t offset = array.offset;
    if (length < 0) fail(path, "negative length " + std::to_string(length));
    if (offset < 0) fail(path, "negative offset " + std::to_string(offset));
    if (length > kMax - 1 - offset) fail(path, "offset + length overflows");
    const int64_t end = offset + length;  // slots used, from the buffers' start
    if (array.null_count < -1 || array.null_count > length) {
      fail(path, "null_count " + std::to_string(array.null_count) + " for length " +
                     std::to_string(length));
    }

    const int64_t want_buffers = layout == Layout::Struct                                      ? 1
                                 : (layout == Layout::String || layout == Layout::LargeString) ? 3
                                                                                               : 2;
    if (array.n_buffers != want_buffers) {
      fail(path, "format '" + format + "' has " + std::to_string(want_buffers) +
                     " buffers, got n_buffers " + std::to_string(array.n_buffers));
    }
    if (array.buffers == nullptr) fail(path, "the buffers pointer is null");
    const int64_t want_children = layout == Layout::List     ? 1
                                  : layout == Layout::Struct ? schema.n_children
                                                             : 0;
    if (schema.n_children != want_children || array.n_children != want_children) {
      fail(path, "format '" + format + "' has " + std::to_string(want_children) +
                     " children; the schema has " + std::to_string(schema.n_children) +
                     ", the array " + std::to_string(array.n_children));
    }
    if (want_children < 0) fail(path, "negative n_children");
    if (want_children > 0 && (schema.children == nullptr || array.children == nullptr)) {
      fail(path, "the children pointer is null");
    }

    // Buffer sizes given by the producer, in pre-order; -1 unknown.
    int64_t size[3] = {-1, -1, -1};
    if (!sizes_.empty()) {
      if (static_cast<int64_t>(sizes_.size()) - next_ < want_buffers) {
        fail(path,
             "fewer buffer sizes than buffers (" + std::to_string(sizes_.size()) + " sizes given)");
      }
      for (int64_t b = 0; b < want_buffers; ++b) size[b] = sizes_[static_cast<size_t>(next_++)];
    }

    // Validity.
    const void* validity = array.buffers[0];
    if (validity == nullptr && array.null_count != 0) {
      fail(path, array.null_count < 0 ? "null_count is unknown (-1) and there is no validity buffer"
                                      : "null_count is " + std::to_string(array.null_count) +
                                            " but there is no validity buffer");
    }
    if (validity != nullptr && size[0] >= 0 && size[0] < (end + 7) / 8) {
      fail(path, "validity buffer of " + std::to_string(size[0]) + " bytes for " +
                     std::to_string(end) + " slots (offset + length)");
    }

    switch (layout) {
      case Layout::String:
        strings<int32_t>(array, path, end, size);
        break;
      case Layout::LargeString:
        strings<int64_t>(array, path, end, size);
        break;
      case Layout::List: {
        const ArrowSchema* cs = schema.children[0];
        const ArrowArray* ca = array.children[0];
        if (cs == nullptr || ca == nullptr) fail(path, "list child 0 is null");
        const int64_t last =
            offsets<int32_t>(array.buffers[1], path, offset, end, size[1], "list offsets");
        const std::string child_path = path + "." + (cs->name && *cs->name ? cs->name : "item");
        node(*cs, *ca, child_path, depth + 1, nullptr);
        if (ca->length < last) {
          fail(path, "list offsets reach " + std::to_string(last) + " but the child has length " +
                         std::to_string(ca->length));
        }
        break;
      }
      case Layout::Struct:
        for (int64_t i = 0; i < want_children; ++i) {
          const ArrowSchema* cs = schema.children[i];
          const ArrowArray* ca = array.children[i];
          if (cs == nullptr || ca == nullptr) fail(path, "child " + std::to_string(i) + " is null");
          const std::string child_path =
              path + "." +
              (cs->name && *cs->name ? std::string(cs->name) : "#" + std::to_string(i));
          node(*cs, *ca, child_path, depth + 1, nullptr);
          if (ca->length < end) {
            fail(child_path, "length " + std::to_string(ca->length) +
                                 " is shorter than its struct's offset + length (" +
                                 std::to_string(end) + ")");
          }
        }
        break;
      default: {
        const void* values = array.buffers[1];
        if (end > 0 && values == nullptr) fail(path, "no values buffer");
        const int64_t width = value_byte_width(layout);
        const int64_t need = width == 0 ? (end + 7) / 8 : end;  // in units of `width` bytes
        if (size[1] >= 0 && (width == 0 ? size[1] < need : size[1] / width < need)) {
          fail(path, "values buffer of " + std::to_string(size[1]) + " bytes for " +
                         std::to_string(end) + " slots (offset + length)");
        }
        break;
      }
    }
  }

  void finish(const std::string& what) const {
    if (!sizes_.empty() && static_cast<size_t>(next_) != sizes_.size()) {
      fail(what, std::to_string(sizes_.size()) + " buffer sizes given for " +
                     std::to_string(next_) + " buffers");
    }
  }

 private:
  static bool accepts(Layout expected, Layout got) {
    if (expected == Layout::String || expected == Layout::LargeString) {
      return got == Layout::String || got == Layout::LargeString;
    }
    return expected == got;
  }
  static const char* describe(Layout expected) {
    switch (expected) {
      case Layout::String:
      case Layout::LargeString:
        return "a string or binary array (format 'u', 'U', 'z' or 'Z')";
      case Layout::Struct:
        return "a struct array (format '+s')";
      default:
        return "another type";
    }
  }

  // Reads offsets[offset..end]: the first >= 0, non-decreasing. Returns the last (0 for an
  // empty array, whose offsets are not read: producers may export them as null).
  template <typename O>
  static int64_t offsets(const void* buffer, const std::string& path, int64_t offset, int64_t end,
                         int64_t size, const char* what) {
    if (end == offset) return 0;
    if (buffer == nullptr) fail(path, std::string("no ") + what + " buffer");
    if (size >= 0 && size / static_cast<int64_t>(sizeof(O)) < end + 1) {
      fail(path, std::string(what) + " buffer of " + std::to_string(size) + " bytes for " +
                     std::to_string(end + 1) + " offsets (offset + length + 1)");
    }
    const O* o = static_cast<const O*>(buffer);
    O prev = o[offset];
    if (prev < 0)
      fail(path, std::string(what) + ": negative offset " + std::to_string(prev) + " at row 0");
    // A branch-free OR of "decreased" over the range; the row is located only on failure.
    bool bad = false;
    for (int64_t j = offset + 1; j <= end; ++j) {
      const O cur = o[j];
      bad |= cur < prev;
      prev = cur;
    }
    if (bad) {
      for (int64_t j = offset + 1; j <= end; ++j) {
        if (o[j] < o[j - 1]) {
          fail(path, std::string(what) + " decrease at row " + std::to_string(j - 1 - offset) +
                         " (" + std::to_string(o[j - 1]) + " then " + std::to_string(o[j]) + ")");
        }
      }
    }
    return static_cast<int64_t>(prev);
  }

  template <typename O>
  static void strings(const ArrowArray& array, const std::string& path, int64_t end,
                      const int64_t* size) {
    const int64_t last = offsets<O>(array.buffers[1], path, array.offset, end, size[1], "offsets");
    if (last > 0 && array.buffers[2] == nullptr) {
      fail(path, "offsets reach " + std::to_string(last) + " but there is no data buffer");
    }
    if (size[2] >= 0 && last > size[2]) {
      fail(path, "offsets reach " + std::to_string(last) + ", past the end of the " +
                     std::to_string(size[2]) + "-byte data buffer");
    }
  }

  const BufferSizes& sizes_;
  int64_t next_ = 0;
};

}  // namespace

void validate_array(const ArrowSchema& schema, const ArrowArray& array, Layout expected,
                    const std::string& what, const BufferSizes& sizes) {
  Validator v(sizes);
  v.node(schema, array, what, 0, &expected);
  v.finish(what);
}

}  // namespace sliceflow::arrow
