#include "window/window_aggs.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "agg/decimal_math.h"
#include "agg/key_codec.h"
#include "agg/sum_rules.h"
#include "agg/values.h"
#include "bundle/bundle_buffer.h"

namespace sliceflow::window {
namespace {

using arrow::ColumnBuilder;
using arrow::ColumnView;
using arrow::Kind;

// ---- accumulator operations: P (the partial), read, merge, retract, emit -------------------

struct CountOps {
  using P = int64_t;
  int col;
  P read(const ColumnView& p, int64_t r) const { return p.child(col).i64(r); }
  void merge(P& a, const P& b) const { a += b; }
  void retract(P& a, const P& b) const { a -= b; }
  void emit(ColumnBuilder& out, const P& a) const { out.append_fixed<int64_t>(a); }
};

struct IntSumOps {
  struct P {
    int128 s = 0;
    int64_t n = 0;
  };
  int col;
  bool avg;
  bool ansi;
  std::string name;
  P read(const ColumnView& p, int64_t r) const {
    return {p.child(col).i128(r), p.child(static_cast<size_t>(col) + 1).i64(r)};
  }
  void merge(P& a, const P& b) const {
    a.s += b.s;
    a.n += b.n;
  }
  void retract(P& a, const P& b) const {
    a.s -= b.s;
    a.n -= b.n;
  }
  void emit(ColumnBuilder& out, const P& a) const {
    if (a.n == 0) return out.append_null();
    if (avg) return out.append_fixed<double>(agg::integer_avg(a.s, a.n));
    out.append_fixed<int64_t>(agg::bigint_sum(a.s, ansi, name));
  }
};

struct FloatSumOps {
  struct P {
    double s = 0;
    int64_t n = 0;
  };
  int col;
  bool avg;
  P read(const ColumnView& p, int64_t r) const {
    return {p.child(col).f64(r), p.child(static_cast<size_t>(col) + 1).i64(r)};
  }
  void merge(P& a, const P& b) const {
    a.s += b.s;
    a.n += b.n;
  }
  void emit(ColumnBuilder& out, const P& a) const {
    if (a.n == 0) return out.append_null();
    out.append_fixed<double>(avg ? a.s / static_cast<double>(a.n) : a.s);
  }
};

struct DecimalSumOps {
  struct P {
    agg::WideSum s;
    int64_t n = 0;
    int64_t overflowed = 0;  // slices whose own sum passed 38 digits
  };
  int col;
  agg::DecimalSumRule rule;
  P read(const ColumnView& p, int64_t r) const {
    P out;
    const ColumnView& s = p.child(col);
    out.n = p.child(static_cast<size_t>(col) + 1).i64(r);
    if (s.is_null(r)) {
      out.overflowed = out.n > 0 ? 1 : 0;
    } else {
      out.s.add(s.i128(r));
    }
    return out;
  }
  void merge(P& a, const P& b) const {
    a.s.add(b.s);
    a.n += b.n;
    a.overflowed += b.overflowed;
  }
  void retract(P& a, const P& b) const {
    a.s.sub(b.s);
    a.n -= b.n;
    a.overflowed -= b.overflowed;
  }
  void emit(ColumnBuilder& out, const P& a) const {
    if (a.n == 0) return out.append_null();
    int128 value = 0;
    if (rule.value(a.s, a.n, a.overflowed != 0, &value)) return out.append_fixed<int128>(value);
    out.append_null();
  }
};

template <typename V, bool Max>
struct ExtremeOps {
  struct P {
    bool has = false;
    typename V::T v{};
  };
  int col;
  P read(const ColumnView& p, int64_t r) const {
    P out;
    const ColumnView& c = p.child(col);
    if (c.is_null(r)) return out;
    out.has = true;
    V::assign(out.v, V::read(c, r));
    return out;
  }
  void merge(P& a, const P& b) const {
    if (!b.has) return;
    if (!a.has ||
        (Max ? V::less(V::view(a.v), V::view(b.v)) : V::less(V::view(b.v), V::view(a.v)))) {
      a = b;
    }
  }
  void emit(ColumnBuilder& out, const P& a) const {
    if (!a.has) return out.append_null();
    V::append(out, V::view(a.v));
  }
};

// first_value (Last false) / last_value: the value at the smallest (largest) event time; at
// equal times the smallest (largest) value, so that the result does not depend on the order
// in which partitions are merged.
template <typename V, bool Last>
struct ByTimeOps {
  struct P {
    bool has = false;
    int64_t t = 0;
    typename V::T v{};
  };
  int col;
  P read(const ColumnView& p, int64_t r) const {
    P out;
    const ColumnView& c = p.child(col);
    if (c.is_null(r)) return out;
    out.has = true;
    out.t = p.child(static_cast<size_t>(col) + 1).i64(r);
    V::assign(out.v, V::read(c, r));
    return out;
  }
  void merge(P& a, const P& b) const {
    if (!b.has) return;
    bool take = !a.has;
    if (!take) {
      if (b.t != a.t) {
        take = Last ? b.t > a.t : b.t < a.t;
      } else {
        take = Last ? V::less(V::view(a.v), V::view(b.v)) : V::less(V::view(b.v), V::view(a.v));
      }
    }
    if (take) a = b;
  }
  void emit(ColumnBuilder& out, const P& a) const {
    if (!a.has) return out.append_null();
    V::append(out, V::view(a.v));
  }
};

// ---- window structures --------------------------------------------------------------------

template <typename Ops>
class RetractMerge final : public WindowAgg {
 public:
  RetractMerge(Ops ops, bool retain, SweepCounters* counters)
      : ops_(std::move(ops)), retain_(retain), counters_(counters) {}
  void append(const ColumnView& p, int64_t row) override { slices_.push_back(ops_.read(p, row)); }
  void merge_last(const ColumnView& p, int64_t row) override {
    ops_.merge(slices_.back(), ops_.read(p, row));
  }
  void enter() override {
    ops_.merge(total_, slices_[entered_]);
    ++counters_->slices_merged;
    if (retain_) {
      ++entered_;
    } else {
      slices_.pop_front();
    }
  }
  void leave() override {
    ops_.retract(total_, slices_.front());
    slices_.pop_front();
    --entered_;
    ++counters_->slices_retracted;
  }
  void emit(ColumnBuilder& out) override { ops_.emit(out, total_); }
  void clear() override {
    slices_.clear();
    entered_ = 0;
    total_ = typename Ops::P{};
  }
  void emit_single(const ColumnView& p, int64_t row, ColumnBuilder& out) override {
    typename Ops::P total{};
    ops_.merge(total, ops_.read(p, row));
    ops_.emit(out, total);
    ++counters_->slices_merged;
    ++counters_->slices_retracted;
  }

 private:
  Ops ops_;
  bool retain_;
  SweepCounters* counters_;
  std::deque<typename Ops::P> slices_;  // in-window slices first, then pending ones
  size_t entered_ = 0;
  typename Ops::P total_{};
};

template <typename Ops>
class TwoStacks final : public WindowAgg {
  using P = typename Ops::P;

 public:
  TwoStacks(Ops ops, bool retain, SweepCounters* counters)
      : ops_(std::move(ops)), retain_(retain), counters_(counters) {}
  void append(const ColumnView& p, int64_t row) override { pending_.push_back(ops_.read(p, row)); }
  void merge_last(const ColumnView& p, int64_t row) override {
    ops_.merge(pending_.back(), ops_.read(p, row));
  }
  void enter() override {
    ops_.merge(back_total_, pending_.front());
    ++counters_->slices_merged;
    if (retain_) back_.push_back(std::move(pending_.front()));
    pending_.pop_front();
  }
  void leave() override {
    if (front_.empty()) flip();
    front_.pop_back();
  }
  void emit(ColumnBuilder& out) override {
    if (front_.empty()) return ops_.emit(out, back_total_);
    if (back_.empty()) return ops_.emit(out, front_.back());
    P total = front_.back();
    ops_.merge(total, back_total_);
    ++counters_->partials_combined;
    ops_.emit(out, total);
  }
  void clear() override {
    pending_.clear();
    front_.clear();
    back_.clear();
    back_total_ = P{};
  }
  // (enter merges the slice into the back total, leave's flip merges it onto the front stack)
  void emit_single(const ColumnView& p, int64_t row, ColumnBuilder& out) override {
    P total{};
    ops_.merge(total, ops_.read(p, row));
    ops_.emit(out, total);
    counters_->slices_merged += 2;
  }

 private:
  // Moves the back stack onto the front stack, each entry holding the aggregate of itself and
  // every newer entry of the front stack; the oldest ends on top.
  void flip() {
    P acc{};
    for (size_t i = back_.size(); i-- > 0;) {
      ops_.merge(acc, back_[i]);
      ++counters_->slices_merged;
      front_.push_back(acc);
    }
    back_.clear();
    back_total_ = P{};
  }

  Ops ops_;
  bool retain_;
  SweepCounters* counters_;
  std::deque<P> pending_;
  std::vector<P> front_;
  std::vector<P> back_;
  P back_total_{};
};

// count_distinct: value -> multiplicity in the window; a value counts while it is above zero.
// Values that left the window keep their entry until the index is compacted, which happens
// when it has grown to twice what was live at the last compaction: memory follows the values
// of the live slices, not every value the key has ever had.
template <typename V>
class DistinctWindow final : public WindowAgg {
 public:
  DistinctWindow(int col, bool retain, SweepCounters* counters)
      : col_(col), retain_(retain), counters_(counters), index_(16) {}
  void append(const ColumnView& p, int64_t row) override {
    if (index_.size() >= next_compaction_) compact();
    slices_.emplace_back();
    add_entries(slices_.back(), p, row);
  }
  void merge_last(const ColumnView& p, int64_t row) override {
    add_entries(slices_.back(), p, row);
  }
  void enter() override {
    for (const auto& [id, n] : slices_[entered_]) {
      if (counts_[id] == 0) ++distinct_;
      counts_[id] += n;
    }
    ++counters_->slices_merged;
    if (retain_) {
      ++entered_;
    } else {
      slices_.pop_front();
    }
  }
  void leave() override {
    for (const auto& [id, n] : slices_.front()) {
      counts_[id] -= n;
      if (counts_[id] == 0) --distinct_;
    }
    slices_.pop_front();
    --entered_;
    ++counters_->slices_retracted;
  }
  void emit(ColumnBuilder& out) override { out.append_fixed<int64_t>(distinct_); }
  void clear() override {
    slices_.clear();
    entered_ = 0;
    index_.clear();
    counts_.clear();
    distinct_ = 0;
    next_compaction_ = kMinCompaction;
  }

 private:
  static constexpr size_t kMinCompaction = 4096;
  static constexpr uint32_t kUnmapped = 0xFFFFFFFFu;

  // Rebuilds the index with the values still counted (CUMULATE drops entered slices, so their
  // values live on only in counts_) or held by a stored slice, and renumbers the slices.
  void compact() {
    bundle::BundleBuffer fresh(16);
    std::vector<int64_t> fresh_counts;
    std::vector<uint32_t> remap(index_.size(), kUnmapped);
    auto keep = [&](uint32_t id) {
      if (remap[id] == kUnmapped) {
        const std::string_view bytes = index_.key_of(id);
        remap[id] = fresh.find_or_insert(bytes, 0, agg::hash_bytes(bytes));
        fresh_counts.push_back(counts_[id]);
      }
      return remap[id];
    };
    for (uint32_t id = 0; id < counts_.size(); ++id) {
      if (counts_[id] != 0) keep(id);
    }
    for (auto& slice : slices_) {
      for (auto& entry : slice) entry.first = keep(entry.first);
    }
    index_ = std::move(fresh);
    counts_.swap(fresh_counts);
    next_compaction_ = std::max(kMinCompaction, 2 * index_.size());
  }

  void add_entries(std::vector<std::pair<uint32_t, int64_t>>& into, const ColumnView& p,
                   int64_t row) {
    const ColumnView& values_list = p.child(col_);
    const ColumnView& counts_list = p.child(static_cast<size_t>(col_) + 1);
    const ColumnView& values = values_list.child(0);
    const ColumnView& counts = counts_list.child(0);
    const int64_t b = values_list.list_begin(row);
    const int64_t e = values_list.list_end(row);
    const int64_t cb = counts_list.list_begin(row);
    if (counts_list.list_end(row) - cb != e - b) {
      throw std::invalid_argument("count_distinct partial: values and counts differ in length");
    }
    char scratch[16];
    for (int64_t k = b; k < e; ++k) {
      const std::string_view bytes = V::bytes(V::read(values, k), scratch);
      const uint32_t id = index_.find_or_insert(bytes, 0, agg::hash_bytes(bytes));
      if (id >= counts_.size()) counts_.push_back(0);
      into.emplace_back(id, counts.i64(cb + (k - b)));
    }
  }

  int col_;
  bool retain_;
  SweepCounters* counters_;
  bundle::BundleBuffer index_;
  std::vector<int64_t> counts_;
  int64_t distinct_ = 0;
  std::deque<std::vector<std::pair<uint32_t, int64_t>>> slices_;
  size_t entered_ = 0;
  size_t next_compaction_ = kMinCompaction;
};

template <typename Ops>
std::unique_ptr<WindowAgg> two_stacks(Ops ops, const WindowAggSpec& spec, SweepCounters* c) {
  return std::make_unique<TwoStacks<Ops>>(std::move(ops), spec.retain, c);
}

}  // namespace

std::unique_ptr<WindowAgg> make_window_agg(const WindowAggSpec& spec, SweepCounters* counters) {
  const int col = spec.column;
  const arrow::Type& partial = *spec.state;
  const arrow::Type& result = *spec.result;
  const bool retain = spec.retain;
  switch (spec.plan.fn) {
    case AggFn::Count:
      return std::make_unique<RetractMerge<CountOps>>(CountOps{col}, retain, counters);
    case AggFn::Sum:
    case AggFn::Avg: {
      const bool avg = spec.plan.fn == AggFn::Avg;
      if (partial.kind == Kind::Float64) {
        return two_stacks(FloatSumOps{col, avg}, spec, counters);
      }
      if (result.kind == Kind::Decimal128) {
        DecimalSumOps ops{col, agg::DecimalSumRule(avg, spec.ansi, spec.name, partial.scale,
                                                   result.precision, result.scale)};
        return std::make_unique<RetractMerge<DecimalSumOps>>(std::move(ops), retain, counters);
      }
      return std::make_unique<RetractMerge<IntSumOps>>(IntSumOps{col, avg, spec.ansi, spec.name},
                                                       retain, counters);
    }
    case AggFn::CountDistinct: {
      return agg::with_values(
          agg::value_class_of(*partial.children[0]), [&](auto v) -> std::unique_ptr<WindowAgg> {
            return std::make_unique<DistinctWindow<decltype(v)>>(col, retain, counters);
          });
    }
    case AggFn::Min:
    case AggFn::Max:
    case AggFn::FirstValue:
    case AggFn::LastValue: {
      const AggFn fn = spec.plan.fn;
      return agg::with_values(agg::value_class_of(partial),
                              [&](auto v) -> std::unique_ptr<WindowAgg> {
                                using V = decltype(v);
                                switch (fn) {
                                  case AggFn::Min:
                                    return two_stacks(ExtremeOps<V, false>{col}, spec, counters);
                                  case AggFn::Max:
                                    return two_stacks(ExtremeOps<V, true>{col}, spec, counters);
                                  case AggFn::FirstValue:
                                    return two_stacks(ByTimeOps<V, false>{col}, spec, counters);
                                  default:
                                    return two_stacks(ByTimeOps<V, true>{col}, spec, counters);
                                }
                              });
    }
  }
  throw std::invalid_argument("unknown aggregate");
}

}  // namespace sliceflow::window
