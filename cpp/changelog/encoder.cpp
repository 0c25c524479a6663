// The changelog local phase (see encoder.h): input rows to signed delta rows, one per row or
// folded per key; the op column is read with changes/change_kind.h. O(aggregates) amortized
// per row.
#include "changelog/encoder.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include "agg/decimal_math.h"
#include "agg/key_codec.h"
#include "agg/values.h"
#include "changes/change_kind.h"

namespace sliceflow::changelog {
namespace {

using agg::ValueClass;
using arrow::ColumnBuilder;
using arrow::ColumnView;
using arrow::Kind;

class CountWriter final : public DeltaWriter {
 public:
  void write_row(const ColumnView* arg, int64_t r, int sign, ColumnBuilder* const* out) override {
    out[0]->append_fixed<int64_t>(arg != nullptr && arg->is_null(r) ? 0 : sign);
  }
  void grow(size_t slots) override { n_.resize(slots, 0); }
  void fold(const ColumnView* arg, int64_t r, int sign, uint32_t slot) override {
    if (arg == nullptr || !arg->is_null(r)) n_[slot] += sign;
  }
  void write_slot(uint32_t slot, ColumnBuilder* const* out) override {
    out[0]->append_fixed<int64_t>(n_[slot]);
  }
  void clear() override { n_.clear(); }

 private:
  std::vector<int64_t> n_;
};

// sum / avg partials: the signed sum and the signed non-null count. Integers travel as
// decimal128(38, 0) (exact), decimals as decimal128(38, s) (null when a folded sum passed 38
// digits), floats as double.
template <ValueClass C>
class SumWriter final : public DeltaWriter {
  using Sum = std::conditional_t<C == ValueClass::F64, double, agg::WideSum>;

 public:
  void write_row(const ColumnView* arg, int64_t r, int sign, ColumnBuilder* const* out) override {
    if (arg->is_null(r)) {
      if constexpr (C == ValueClass::F64) {
        out[0]->append_fixed<double>(0.0);
      } else {
        out[0]->append_fixed<int128>(0);
      }
      out[1]->append_fixed<int64_t>(0);
      return;
    }
    if constexpr (C == ValueClass::F64) {
      out[0]->append_fixed<double>(sign > 0 ? arg->f64(r) : -arg->f64(r));
    } else {
      const int128 v = C == ValueClass::I64 ? int128{arg->i64(r)} : arg->i128(r);
      out[0]->append_fixed<int128>(sign > 0 ? v : -v);  // |v| < 10^38: never overflows
    }
    out[1]->append_fixed<int64_t>(sign);
  }
  void grow(size_t slots) override {
    s_.resize(slots, Sum{});
    n_.resize(slots, 0);
  }
  void fold(const ColumnView* arg, int64_t r, int sign, uint32_t slot) override {
    if (arg->is_null(r)) return;
    n_[slot] += sign;
    if constexpr (C == ValueClass::F64) {
      s_[slot] += sign > 0 ? arg->f64(r) : -arg->f64(r);
    } else {
      const int128 v = C == ValueClass::I64 ? int128{arg->i64(r)} : arg->i128(r);
      if (sign > 0) {
        s_[slot].add(v);
      } else {
        s_[slot].sub(v);
      }
    }
  }
  void write_slot(uint32_t slot, ColumnBuilder* const* out) override {
    if constexpr (C == ValueClass::F64) {
      out[0]->append_fixed<double>(s_[slot]);
    } else {
      int128 v = 0;
      if (s_[slot].fits(38, &v)) {
        out[0]->append_fixed<int128>(v);
      } else {
        out[0]->append_null();
      }
    }
    out[1]->append_fixed<int64_t>(n_[slot]);
  }
  void clear() override {
    s_.clear();
    n_.clear();
  }

 private:
  std::vector<Sum> s_;
  std::vector<int64_t> n_;
};

enum class Pick : uint8_t { Min, Max, First, Last };

// min / max / first_value / last_value / count_distinct: the row's value (its sign is the
// row's). Folded (insert-only input only): the batch's min, max, first or last non-null value.
template <typename V>
class ValueWriter final : public DeltaWriter {
 public:
  explicit ValueWriter(Pick pick) : pick_(pick) {}
  void write_row(const ColumnView* arg, int64_t r, int, ColumnBuilder* const* out) override {
    if (arg->is_null(r)) return out[0]->append_null();
    V::append(*out[0], V::read(*arg, r));
  }
  void grow(size_t slots) override {
    if (slots <= has_.size()) return;
    has_.resize(slots, 0);
    v_.resize(slots);
  }
  void fold(const ColumnView* arg, int64_t r, int, uint32_t slot) override {
    if (arg->is_null(r)) return;
    const typename V::View v = V::read(*arg, r);
    bool take = !has_[slot];
    if (!take) {
      switch (pick_) {
        case Pick::Min:
          take = V::less(v, V::view(v_[slot]));
          break;
        case Pick::Max:
          take = V::less(V::view(v_[slot]), v);
          break;
        case Pick::First:
          break;
        case Pick::Last:
          take = true;
          break;
      }
    }
    if (take) {
      V::assign(v_[slot], v);
      has_[slot] = 1;
    }
  }
  void write_slot(uint32_t slot, ColumnBuilder* const* out) override {
    if (!has_[slot]) return out[0]->append_null();
    V::append(*out[0], V::view(v_[slot]));
  }
  void clear() override {
    // Slots are reused by the next fold: keep the strings' capacity, drop the flags.
    has_.assign(has_.size(), 0);
  }

 private:
  Pick pick_;
  std::vector<uint8_t> has_;
  std::vector<typename V::T> v_;
};

std::unique_ptr<DeltaWriter> make_writer(AggFn fn, const ColumnView* arg,
                                         const arrow::Type& delta) {
  if (fn == AggFn::Count) return std::make_unique<CountWriter>();
  const ValueClass vc = agg::value_class(arg->layout(), arg->name());
  if (fn == AggFn::Sum || fn == AggFn::Avg) {
    const bool ok =
        vc == ValueClass::F64 ? delta.kind == Kind::Float64 : delta.kind == Kind::Decimal128;
    if (!ok || vc == ValueClass::Str)
      plan_mismatch("the sum partial of '" + arg->name() + "' does not fit it");
    switch (vc) {
      case ValueClass::I64:
        return std::make_unique<SumWriter<ValueClass::I64>>();
      case ValueClass::F64:
        return std::make_unique<SumWriter<ValueClass::F64>>();
      default:
        return std::make_unique<SumWriter<ValueClass::I128>>();
    }
  }
  agg::check_key_type(arg->layout(), delta);
  Pick pick = Pick::Min;
  if (fn == AggFn::Max) pick = Pick::Max;
  if (fn == AggFn::FirstValue) pick = Pick::First;
  if (fn == AggFn::LastValue) pick = Pick::Last;
  return agg::with_values(vc, [&](auto values) -> std::unique_ptr<DeltaWriter> {
    return std::make_unique<ValueWriter<decltype(values)>>(pick);
  });
}

}  // namespace

Encoder::Encoder(Plan plan, const arrow::Type& input, std::unique_ptr<arrow::Type> delta_type)
    : plan_(std::move(plan)),
      input_columns_(input.children.size()),
      delta_type_(std::move(delta_type)),
      out_((plan_.validate(), *delta_type_)) {
  if (input.kind != Kind::Struct) plan_mismatch("the input schema must be a struct of columns");
  const int used = plan_.op_column >= 0 ? plan_.op_column + 1 : plan_.num_keys;
  if (input_columns_ < static_cast<size_t>(used)) plan_mismatch("the input has too few columns");
  for (const AggPlan& agg : plan_.aggs) {
    if (agg.arg >= static_cast<int>(input_columns_))
      plan_mismatch("an aggregate's argument column is out of range");
  }
  agg::check_state_schema(delta_layout(), plan_.aggs, agg::argument_types(plan_.aggs, input),
                          *delta_type_);
  int column = kFirstAggColumn;
  for (const AggPlan& agg : plan_.aggs) {
    std::vector<ColumnBuilder*> cols;
    for (int j = 0; j < delta_columns(agg.fn); ++j)
      cols.push_back(&out_.child(static_cast<size_t>(column + j)));
    writer_out_.push_back(std::move(cols));
    column += delta_columns(agg.fn);
  }
}

void Encoder::signs_of(const ColumnView& input) {
  const auto n = static_cast<size_t>(input.length());
  signs_.assign(n, 1);
  if (plan_.op_column < 0) return;
  const ColumnView& op = input.child(static_cast<size_t>(plan_.op_column));
  if (!changes::is_op_column(op)) {
    plan_mismatch("the op column '" + op.name() + "' must be a string column");
  }
  for (size_t i = 0; i < n; ++i) {
    // A null op is an insert, like a plain row; a value that is no change kind throws.
    if (changes::retracts(changes::at(op, static_cast<int64_t>(i)))) {
      signs_[i] = -1;
      ++stats_.retractions_in;
    }
  }
}

void Encoder::add(const ArrowSchema& schema, const ArrowArray& array) {
  const ColumnView input(schema, array);
  if (input.layout() != arrow::Layout::Struct || input.num_children() != input_columns_) {
    plan_mismatch("the batch does not have the input schema's columns");
  }
  std::vector<const ColumnView*> key_cols;
  for (int k = 0; k < plan_.num_keys; ++k) key_cols.push_back(&input.child(static_cast<size_t>(k)));
  agg::KeyEncoder keys(std::move(key_cols));
  std::vector<const ColumnView*> args;
  for (const AggPlan& agg : plan_.aggs)
    args.push_back(agg.arg < 0 ? nullptr : &input.child(static_cast<size_t>(agg.arg)));
  if (writers_.empty()) {
    const auto& dc = delta_type_->children;
    int column = kFirstAggColumn;
    for (size_t a = 0; a < plan_.aggs.size(); ++a) {
      writers_.push_back(make_writer(plan_.aggs[a].fn, args[a], *dc[static_cast<size_t>(column)]));
      column += delta_columns(plan_.aggs[a].fn);
    }
  }
  signs_of(input);
  const int64_t rows = input.length();
  stats_.rows_in += rows;
  constexpr int64_t kChunk = 4096;  // keys are encoded a chunk at a time to bound the scratch
  for (int64_t begin = 0; begin < rows; begin += kChunk) {
    const int64_t end = std::min(rows, begin + kChunk);
    keys.encode(begin, end);
    for (int64_t r = begin; r < end; ++r) {
      const std::string_view key = keys.key(r);
      const uint64_t h = agg::hash_bytes(key);
      const int sign = signs_[static_cast<size_t>(r)];
      if (!plan_.fold) {
        out_.child(0).append_fixed<int32_t>(bucket_of(h, plan_.buckets));
        out_.child(1).append_string(key);
        out_.child(2).append_fixed<int64_t>(sign);
        for (size_t a = 0; a < writers_.size(); ++a)
          writers_[a]->write_row(args[a], r, sign, writer_out_[a].data());
        out_.finish_struct();
        continue;
      }
      const size_t before = slots_.size();
      const uint32_t slot = slots_.find_or_insert(key, 0, h);
      if (slots_.size() != before) {
        slot_n_.push_back(0);
        for (auto& w : writers_) w->grow(slots_.size());
      }
      slot_n_[slot] += sign;
      for (size_t a = 0; a < writers_.size(); ++a) writers_[a]->fold(args[a], r, sign, slot);
    }
  }
  if (plan_.fold) {
    folded_rows_ += rows;
    if (folded_rows_ >= plan_.fold_rows) flush();
  } else {
    stats_.deltas_out += rows;
  }
}

void Encoder::flush() {
  if (slots_.size() == 0) return;
  ++stats_.flushes;
  for (uint32_t slot = 0; slot < slots_.size(); ++slot) {
    const std::string_view key = slots_.key_of(slot);
    out_.child(0).append_fixed<int32_t>(bucket_of(agg::hash_bytes(key), plan_.buckets));
    out_.child(1).append_string(key);
    out_.child(2).append_fixed<int64_t>(slot_n_[slot]);
    for (size_t a = 0; a < writers_.size(); ++a)
      writers_[a]->write_slot(slot, writer_out_[a].data());
    out_.finish_struct();
  }
  stats_.deltas_out += static_cast<int64_t>(slots_.size());
  slots_.clear();
  slot_n_.clear();
  for (auto& w : writers_) w->clear();
  folded_rows_ = 0;
}

void Encoder::finish() { flush(); }

std::unique_ptr<ArrowArray> Encoder::take() {
  if (out_.length() == 0) return nullptr;
  auto out = std::make_unique<ArrowArray>();
  out_.export_to(out.get());
  return out;
}

}  // namespace sliceflow::changelog
