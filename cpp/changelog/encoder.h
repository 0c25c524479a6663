// The local phase of a changelog aggregation (runs in mapInArrow before the shuffle): turns
// input rows (keys, op, arguments) into delta rows (bucket, key bytes, signed partials). With
// plan.fold it folds the rows of each key first (Flink's LocalGroupAggregate), flushing when
// fold_rows input rows are folded and at the end of the input; otherwise one delta row per
// input row, in input order. docs/changelog-kernel.md, "Delta schema".
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "arrow/builder.h"
#include "arrow/c_data.h"
#include "arrow/column_view.h"
#include "arrow/type.h"
#include "bundle/bundle_buffer.h"
#include "changelog/plan.h"

namespace sliceflow::changelog {

struct EncoderStats {
  int64_t rows_in = 0;
  int64_t retractions_in = 0;
  int64_t deltas_out = 0;
  int64_t flushes = 0;
  // The counters by name, as the bindings' stats() dicts show them.
  std::vector<std::pair<const char*, int64_t>> named() const {
    return {{"rows_in", rows_in},
            {"retractions_in", retractions_in},
            {"deltas_out", deltas_out},
            {"fold_flushes", flushes}};
  }
};

// One aggregate's delta columns: written row by row, or folded per key (slot) and written at a
// flush.
class DeltaWriter {
 public:
  virtual ~DeltaWriter() = default;
  virtual void write_row(const arrow::ColumnView* arg, int64_t r, int sign,
                         arrow::ColumnBuilder* const* out) = 0;
  virtual void grow(size_t slots) = 0;
  virtual void fold(const arrow::ColumnView* arg, int64_t r, int sign, uint32_t slot) = 0;
  virtual void write_slot(uint32_t slot, arrow::ColumnBuilder* const* out) = 0;
  virtual void clear() = 0;
};

// The bucket of a key hash: its high 32 bits scaled to [0, buckets). The aggregator's hash
// table indexes by the low bits, so the keys of one bucket still spread over its table.
inline int32_t bucket_of(uint64_t hash, int32_t buckets) {
  return static_cast<int32_t>(((hash >> 32) * static_cast<uint64_t>(buckets)) >> 32);
}

class Encoder {
 public:
  // `input`: the struct of the input batches' columns (keys, op, arguments; strings as utf8,
  // though batches may hold large strings). Throws std::invalid_argument unless `delta_type` is
  // delta_schema(plan, the arguments' types).
  Encoder(Plan plan, const arrow::Type& input, std::unique_ptr<arrow::Type> delta_type);

  // Encodes (or folds) one batch, a struct array of the input columns.
  void add(const ArrowSchema& schema, const ArrowArray& array);
  // End of input: flushes what is folded.
  void finish();
  // The delta rows built so far, or null.
  std::unique_ptr<ArrowArray> take();

  const EncoderStats& stats() const { return stats_; }

 private:
  void flush();
  void signs_of(const arrow::ColumnView& input);

  Plan plan_;
  size_t input_columns_;
  std::unique_ptr<arrow::Type> delta_type_;
  arrow::ColumnBuilder out_;
  std::vector<std::unique_ptr<DeltaWriter>> writers_;
  std::vector<std::vector<arrow::ColumnBuilder*>> writer_out_;
  std::vector<int8_t> signs_;
  bundle::BundleBuffer slots_;
  std::vector<int64_t> slot_n_;
  int64_t folded_rows_ = 0;
  EncoderStats stats_;
};

}  // namespace sliceflow::changelog
