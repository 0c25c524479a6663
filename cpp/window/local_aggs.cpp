#include "window/local_aggs.h"

#include <stdexcept>
#include <string>
#include <type_traits>

#include "agg/decimal_math.h"
#include "agg/key_codec.h"
#include "agg/values.h"
#include "bundle/bundle_buffer.h"
#include "memory/huge_pages.h"

namespace sliceflow::window {
namespace {

using arrow::ColumnBuilder;
using arrow::ColumnView;

class CountLocal final : public LocalAgg {
 public:
  void grow(size_t slots) override { n_.resize(slots, 0); }
  void update(const ColumnView* arg, const ColumnView&, const uint32_t* rows, const uint32_t* slots,
              size_t n, int64_t base) override {
    if (arg == nullptr || !arg->may_have_nulls()) {
      for (size_t k = 0; k < n; ++k) ++n_[slots[k]];
      return;
    }
    for (size_t k = 0; k < n; ++k) {
      if (!arg->is_null(base + rows[k])) ++n_[slots[k]];
    }
  }
  void export_arrays(std::vector<SlotArray>& out) const override {
    out.push_back({n_.data(), sizeof(int64_t)});
  }
  void export_slot(uint32_t slot, ColumnBuilder* const* out) override {
    out[0]->append_fixed<int64_t>(n_[slot]);
  }
  void clear() override { n_.clear(); }
  size_t memory_usage() const override { return n_.capacity() * sizeof(int64_t); }
  int num_columns() const override { return 1; }

 private:
  memory::HugeVector<int64_t> n_;
};

// sum/avg partials: (sum, non-null count). Integers sum exactly in 128 bits; decimals too,
// with a sticky overflow flag past 38 digits (written as a null sum); floats in double.
template <typename Sum>
class SumLocal final : public LocalAgg {
 public:
  explicit SumLocal(bool decimal) : decimal_(decimal) {}
  void grow(size_t slots) override {
    s_.resize(slots, Sum{});
    n_.resize(slots, 0);
    if (decimal_) overflow_.resize(slots, 0);
  }
  void update(const ColumnView* arg, const ColumnView&, const uint32_t* rows, const uint32_t* slots,
              size_t n, int64_t base) override {
    const bool nulls = arg->may_have_nulls();
    if constexpr (std::is_same_v<Sum, int128>) {
      if (!decimal_ && !nulls && arg->layout() == arrow::Layout::Int64) {
        // The common case without a switch on the layout and a null test per row.
        const int64_t* v = arg->int64_values() + base;
        for (size_t k = 0; k < n; ++k) {
          const uint32_t slot = slots[k];
          ++n_[slot];
          s_[slot] += v[rows[k]];
        }
        return;
      }
    }
    for (size_t k = 0; k < n; ++k) {
      const uint32_t slot = slots[k];
      const int64_t i = base + rows[k];
      if (nulls && arg->is_null(i)) continue;
      ++n_[slot];
      if constexpr (std::is_same_v<Sum, double>) {
        s_[slot] += arg->f64(i);
      } else {
        if (decimal_) {
          int128 r;
          if (__builtin_add_overflow(s_[slot], arg->i128(i), &r)) overflow_[slot] = 1;
          s_[slot] = r;
        } else {
          s_[slot] += arg->i64(i);  // 2^63 rows of 2^63 stay below 2^127
        }
      }
    }
  }
  void export_arrays(std::vector<SlotArray>& out) const override {
    out.push_back({s_.data(), sizeof(Sum)});
    out.push_back({n_.data(), sizeof(int64_t)});
  }
  void export_slot(uint32_t slot, ColumnBuilder* const* out) override {
    if constexpr (std::is_same_v<Sum, double>) {
      out[0]->append_fixed<double>(s_[slot]);
    } else {
      if (decimal_) {
        const int128 limit = agg::pow10_128(38);
        if (overflow_[slot] || s_[slot] >= limit || s_[slot] <= -limit) {
          out[0]->append_null();
        } else {
          out[0]->append_fixed<int128>(s_[slot]);
        }
      } else {
        out[0]->append_fixed<int128>(s_[slot]);
      }
    }
    out[1]->append_fixed<int64_t>(n_[slot]);
  }
  void clear() override {
    s_.clear();
    n_.clear();
    overflow_.clear();
  }
  size_t memory_usage() const override {
    return s_.capacity() * sizeof(Sum) + n_.capacity() * sizeof(int64_t) + overflow_.capacity();
  }
  int num_columns() const override { return 2; }

 private:
  bool decimal_;
  memory::HugeVector<Sum> s_;
  memory::HugeVector<int64_t> n_;
  memory::HugeVector<uint8_t> overflow_;
};

// min / max (`Last` false) and first_value / last_value (`ByTime` true): one value per slot,
// replaced when a better one comes.
template <typename V, bool Max, bool ByTime>
class ExtremeLocal final : public LocalAgg {
 public:
  void grow(size_t slots) override {
    v_.resize(slots);
    has_.resize(slots, 0);
    if (ByTime) t_.resize(slots, 0);
  }
  void update(const ColumnView* arg, const ColumnView& time, const uint32_t* rows,
              const uint32_t* slots, size_t n, int64_t base) override {
    const bool nulls = arg->may_have_nulls();
    if constexpr (std::is_same_v<V, agg::I64Values> && !ByTime) {
      if (!nulls && arg->layout() == arrow::Layout::Int64) {
        // The common case without a switch on the layout and a null test per row.
        const int64_t* v = arg->int64_values() + base;
        for (size_t k = 0; k < n; ++k) {
          const uint32_t slot = slots[k];
          const int64_t x = v[rows[k]];
          if (!has_[slot] || (Max ? v_[slot] < x : x < v_[slot])) {
            v_[slot] = x;
            has_[slot] = 1;
          }
        }
        return;
      }
    }
    for (size_t k = 0; k < n; ++k) {
      const uint32_t slot = slots[k];
      const int64_t i = base + rows[k];
      if (nulls && arg->is_null(i)) continue;
      const auto x = V::read(*arg, i);
      const int64_t t = ByTime ? time.i64(i) : 0;
      if (!has_[slot] || better(x, t, slot)) {
        if constexpr (kOwnsBytes) {
          const size_t before = v_[slot].capacity();
          V::assign(v_[slot], x);
          heap_bytes_ += v_[slot].capacity() - before;
        } else {
          V::assign(v_[slot], x);
        }
        if (ByTime) t_[slot] = t;
        has_[slot] = 1;
      }
    }
  }
  void export_arrays(std::vector<SlotArray>& out) const override {
    out.push_back({v_.data(), sizeof(typename V::T)});
    out.push_back({has_.data(), 1});
    if (ByTime) out.push_back({t_.data(), sizeof(int64_t)});
  }
  void export_slot(uint32_t slot, ColumnBuilder* const* out) override {
    if (!has_[slot]) {
      out[0]->append_null();
      if (ByTime) out[1]->append_null();
      return;
    }
    V::append(*out[0], V::view(v_[slot]));
    if (ByTime) out[1]->append_fixed<int64_t>(t_[slot]);
  }
  void clear() override {
    v_.clear();
    has_.clear();
    t_.clear();
    heap_bytes_ = 0;
  }
  // Asked after every batch: string bytes are counted as they are assigned, not summed here.
  size_t memory_usage() const override {
    return v_.capacity() * sizeof(typename V::T) + has_.capacity() + t_.capacity() * 8 +
           heap_bytes_;
  }
  int num_columns() const override { return ByTime ? 2 : 1; }

 private:
  bool better(typename V::View x, int64_t t, uint32_t slot) const {
    const auto cur = V::view(v_[slot]);
    if (ByTime) {
      if (t != t_[slot]) return Max ? t > t_[slot] : t < t_[slot];
    }
    return Max ? V::less(cur, x) : V::less(x, cur);
  }
  static constexpr bool kOwnsBytes = std::is_same_v<typename V::T, std::string>;
  memory::HugeVector<typename V::T> v_;
  memory::HugeVector<uint8_t> has_;
  memory::HugeVector<int64_t> t_;
  size_t heap_bytes_ = 0;  // string values' own bytes (beyond the small-string buffer)
};

// count_distinct: a (value bytes, slot) -> multiplicity map, grouped by slot at export.
template <typename V>
class DistinctLocal final : public LocalAgg {
 public:
  void grow(size_t) override {}
  void update(const ColumnView* arg, const ColumnView&, const uint32_t* rows, const uint32_t* slots,
              size_t n, int64_t base) override {
    const bool nulls = arg->may_have_nulls();
    char scratch[16];
    for (size_t k = 0; k < n; ++k) {
      const uint32_t slot = slots[k];
      const int64_t i = base + rows[k];
      if (nulls && arg->is_null(i)) continue;
      const std::string_view b = V::bytes(V::read(*arg, i), scratch);
      const uint64_t h = agg::hash_key_slice(b, slot);
      const uint32_t id = values_.find_or_insert(b, slot, h);
      if (id >= counts_.size()) counts_.push_back(0);
      ++counts_[id];
    }
  }
  void prepare_export(size_t slots) override {
    // Counting sort of the distinct entries by slot.
    begin_.assign(slots + 1, 0);
    for (uint32_t id = 0; id < values_.size(); ++id)
      ++begin_[static_cast<size_t>(values_.slice(id)) + 1];
    for (size_t s = 0; s < slots; ++s) begin_[s + 1] += begin_[s];
    order_.resize(values_.size());
    std::vector<uint32_t> at(begin_.begin(), begin_.end() - 1);
    for (uint32_t id = 0; id < values_.size(); ++id)
      order_[at[static_cast<size_t>(values_.slice(id))]++] = id;
  }
  // Its entries are grouped by slot at prepare_export, and read in that order.
  void export_arrays(std::vector<SlotArray>& out) const override {
    out.push_back({begin_.data(), sizeof(uint32_t)});
  }
  void export_slot(uint32_t slot, ColumnBuilder* const* out) override {
    ColumnBuilder& values = out[0]->child(0);
    ColumnBuilder& counts = out[1]->child(0);
    for (uint32_t k = begin_[slot]; k < begin_[slot + 1]; ++k) {
      const uint32_t id = order_[k];
      V::append(values, V::view(V::from_bytes(values_.key_of(id))));
      counts.append_fixed<int64_t>(counts_[id]);
    }
    out[0]->finish_list();
    out[1]->finish_list();
  }
  void clear() override {
    values_.clear();
    counts_.clear();
  }
  size_t memory_usage() const override {
    return values_.memory_usage() + counts_.capacity() * 8 + order_.capacity() * 4 +
           begin_.capacity() * 4;
  }
  int num_columns() const override { return 2; }

 private:
  bundle::BundleBuffer values_;
  memory::HugeVector<int64_t> counts_;
  memory::HugeVector<uint32_t> begin_;
  memory::HugeVector<uint32_t> order_;
};

template <typename V>
std::unique_ptr<LocalAgg> make_for_values(AggFn fn) {
  switch (fn) {
    case AggFn::Min:
      return std::make_unique<ExtremeLocal<V, false, false>>();
    case AggFn::Max:
      return std::make_unique<ExtremeLocal<V, true, false>>();
    case AggFn::FirstValue:
      return std::make_unique<ExtremeLocal<V, false, true>>();
    case AggFn::LastValue:
      return std::make_unique<ExtremeLocal<V, true, true>>();
    case AggFn::CountDistinct:
      return std::make_unique<DistinctLocal<V>>();
    default:
      throw std::logic_error("not a value aggregate");
  }
}

}  // namespace

std::unique_ptr<LocalAgg> make_local_agg(const AggPlan& agg, const ColumnView* arg) {
  if (agg.fn == AggFn::Count) return std::make_unique<CountLocal>();
  const agg::ValueClass vc = agg::value_class(arg->layout(), arg->name());
  if (agg.fn == AggFn::Sum || agg.fn == AggFn::Avg) {
    switch (vc) {
      case agg::ValueClass::I64:
        if (arg->layout() == arrow::Layout::Bool || arg->format()[0] == 't') break;
        return std::make_unique<SumLocal<int128>>(false);
      case agg::ValueClass::I128:
        return std::make_unique<SumLocal<int128>>(true);
      case agg::ValueClass::F64:
        return std::make_unique<SumLocal<double>>(false);
      default:
        break;
    }
    throw std::invalid_argument(std::string(agg_fn_name(agg.fn)) +
                                " needs a numeric column, not '" + arg->name() + "' (" +
                                arg->format() + ")");
  }
  return agg::with_values(vc,
                          [&](auto values) { return make_for_values<decltype(values)>(agg.fn); });
}

}  // namespace sliceflow::window
