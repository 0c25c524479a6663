// Validation of imported Arrow arrays (C Data Interface structs from untrusted producers),
// once per batch, before any kernel reads them.
//
// What is checked, node by node (pre-order over the schema/array trees):
//   - released structs, a null format, dictionaries, nesting deeper than kMaxDepth;
//   - the format string has one of the layouts the kernels read (column_view.h's layout_of)
//     and, at the top, the layout the caller expects (strings for JSON, a struct for batches);
//   - length >= 0, offset >= 0, offset + length without overflow, -1 <= null_count <= length;
//   - n_buffers and n_children as the layout has them, schema and array agreeing, the buffer
//     and child pointer arrays non-null, every child non-null;
//   - the validity buffer present when null_count != 0 (-1, "unknown", makes it authoritative);
//     value and offsets buffers present when the array has rows;
//   - offsets (string, binary, list): first >= 0, non-decreasing over the array's
//     offset..offset+length range; list offsets end within the child's length;
//   - struct children at least as long as the parent's offset + length;
//   - where the producer gave buffer sizes (BufferSizes, pre-order over every node's
//     buffers, -1 for unknown), each buffer holds what offset + length need and the last
//     string offset lies inside the data buffer. Without sizes (a bare capsule) the last
//     offset is the data's extent: the C Data Interface carries no sizes.
// Failures throw std::invalid_argument naming the column path ("docs", "batch.price") and the
// problem; pybind11 turns it into ValueError.
//
// Cost: O(nodes + offsets read): one pass over each offsets buffer in the array's range, no
// pass over string bytes, validity bits or fixed-width values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arrow/c_data.h"
#include "arrow/column_view.h"

namespace sliceflow::arrow {

// Nesting deeper than this is refused (the window and changelog kernels use at most list<…>
// inside a struct; this bounds the recursion on forged input).
inline constexpr int kMaxDepth = 64;

// Sizes in bytes of every buffer of every node, in the order a pre-order walk meets them (as
// pyarrow's Array.buffers() lists them); -1 where a size is unknown or the buffer is absent.
// Empty: no sizes known.
using BufferSizes = std::vector<int64_t>;

// Validates `array` as described above. `what` names the argument in messages; `expected`
// is the layout the caller reads at the top (String accepts LargeString too: both string and
// binary formats). Throws std::invalid_argument.
void validate_array(const ArrowSchema& schema, const ArrowArray& array, Layout expected,
                    const std::string& what, const BufferSizes& sizes = {});

}  // namespace sliceflow::arrow
