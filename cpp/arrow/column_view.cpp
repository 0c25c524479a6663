#include "arrow/column_view.h"

#include <stdexcept>

namespace sliceflow::arrow {

Layout layout_of(const std::string& format, const std::string& field) {
  if (format == "b") return Layout::Bool;
  if (format == "c") return Layout::Int8;
  if (format == "s") return Layout::Int16;
  if (format == "i" || format == "tdD") return Layout::Int32;
  if (format == "l" || format.rfind("tsu:", 0) == 0) return Layout::Int64;
  if (format == "f") return Layout::Float32;
  if (format == "g") return Layout::Float64;
  if (format.rfind("d:", 0) == 0) {
    const auto comma = format.find(',', 2);
    const auto bits = comma == std::string::npos ? std::string::npos : format.find(',', comma + 1);
    if (bits == std::string::npos || format.compare(bits + 1, std::string::npos, "128") == 0) {
      return Layout::Decimal128;
    }
  }
  if (format == "u" || format == "z") return Layout::String;
  if (format == "U" || format == "Z") return Layout::LargeString;
  if (format == "+l") return Layout::List;
  if (format == "+s") return Layout::Struct;
  throw std::invalid_argument("unsupported Arrow type format '" + format + "' (column '" + field +
                              "')");
}

ColumnView::ColumnView(const ArrowSchema& schema, const ArrowArray& array, int64_t parent_offset) {
  if (schema.release == nullptr || schema.format == nullptr || array.release == nullptr) {
    throw std::invalid_argument("released ArrowSchema or ArrowArray");
  }
  format_ = schema.format;
  name_ = schema.name ? schema.name : "";
  if (schema.dictionary != nullptr || array.dictionary != nullptr) {
    throw std::invalid_argument("dictionary-encoded column '" + name_ + "' is not supported");
  }
  layout_ = layout_of(format_, name_);
  length_ = array.length;
  offset_ = array.offset + parent_offset;
  null_count_ = array.null_count;
  if (length_ < 0 || offset_ < 0)
    throw std::invalid_argument("malformed ArrowArray '" + name_ + "'");
  auto need_buffers = [&](int64_t n) {
    if (array.n_buffers != n) {
      throw std::invalid_argument("malformed ArrowArray '" + name_ +
                                  "': " + std::to_string(array.n_buffers) + " buffers");
    }
  };
  auto need_children = [&](int64_t n) {
    if (array.n_children != n || schema.n_children != n) {
      throw std::invalid_argument("malformed ArrowArray '" + name_ + "': children");
    }
  };
  validity_ = array.n_buffers > 0 ? static_cast<const uint8_t*>(array.buffers[0]) : nullptr;
  switch (layout_) {
    case Layout::String:
    case Layout::LargeString:
      need_buffers(3);
      offsets_ = array.buffers[1];
      data_ = static_cast<const char*>(array.buffers[2]);
      if (length_ > 0 && offsets_ == nullptr) {
        throw std::invalid_argument("malformed ArrowArray '" + name_ + "': no offsets");
      }
      if (data_ == nullptr) data_ = "";
      break;
    case Layout::List:
      need_buffers(2);
      need_children(1);
      offsets_ = array.buffers[1];
      if (length_ > 0 && offsets_ == nullptr) {
        throw std::invalid_argument("malformed ArrowArray '" + name_ + "': no offsets");
      }
      // List offsets index the child from its own start: the child keeps its own offset.
      children_.push_back(std::make_unique<ColumnView>(*schema.children[0], *array.children[0]));
      break;
    case Layout::Struct:
      need_buffers(1);
      need_children(schema.n_children);
      for (int64_t i = 0; i < array.n_children; ++i) {
        children_.push_back(
            std::make_unique<ColumnView>(*schema.children[i], *array.children[i], offset_));
      }
      break;
    default:
      need_buffers(2);
      values_ = array.buffers[1];
      if (length_ > 0 && values_ == nullptr) {
        throw std::invalid_argument("malformed ArrowArray '" + name_ + "': no values");
      }
      break;
  }
}

}  // namespace sliceflow::arrow
