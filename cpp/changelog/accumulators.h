// The global phase's accumulators: one per aggregate, holding every key's state in arrays
// indexed by the key's id. They accumulate and retract delta rows (docs/changelog-kernel.md,
// "Accumulators"), give the value to emit, and write and read a key's state in a state blob.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "arrow/column_view.h"
#include "arrow/type.h"
#include "changelog/plan.h"
#include "changelog/scalar.h"
#include "changelog/state_codec.h"

namespace sliceflow::changelog {

class Accumulator {
 public:
  virtual ~Accumulator() = default;
  // Room for keys [0, keys); new keys start empty.
  virtual void grow(size_t keys) = 0;
  // Applies delta row `r` to `key`. Value aggregates accumulate (sign > 0) or retract
  // (sign < 0) the row's value; count and sum partials carry their own signs.
  virtual void apply(uint32_t key, const arrow::ColumnView& deltas, int64_t r, int sign) = 0;
  // The key's state is cleared (its row count reached 0).
  virtual void clear_key(uint32_t key) = 0;
  // The value to emit. Throws std::overflow_error under ANSI when it does not fit.
  virtual Scalar value(uint32_t key) const = 0;
  virtual void save(uint32_t key, StateWriter& w) const = 0;
  virtual void load(uint32_t key, StateReader& r) = 0;
  // Forgets every key, keeping capacity.
  virtual void reset() = 0;
  virtual size_t memory_usage() const = 0;
};

// The aggregate's delta columns (state) and output column, and:
struct AccumulatorSpec : agg::AggColumns {
  bool retracting = true;  // the input may retract (changelog input)
};

// `spec.state` and `spec.result` are the types changelog::delta_schema and agg::result_type
// give (Aggregator checks its schemas against them before it makes its accumulators).
std::unique_ptr<Accumulator> make_accumulator(const AccumulatorSpec& spec);

}  // namespace sliceflow::changelog
