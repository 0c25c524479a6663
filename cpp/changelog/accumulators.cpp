#include "changelog/accumulators.h"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <vector>

#include "agg/decimal_math.h"
#include "agg/sum_rules.h"
#include "agg/values.h"

namespace sliceflow::changelog {
namespace {

using agg::ValueClass;
using arrow::ColumnView;
using arrow::Kind;

template <typename V>
constexpr bool kIsStr = std::is_same_v<V, agg::StrValues>;

template <typename V>
void put_value(StateWriter& w, typename V::View v) {
  if constexpr (kIsStr<V>) {
    w.put_bytes(v);
  } else {
    w.put(v);
  }
}

template <typename V>
typename V::T get_value(StateReader& r) {
  if constexpr (kIsStr<V>) {
    return std::string(r.get_bytes());
  } else {
    return r.get<typename V::T>();
  }
}

// Orders values as min/max do (NaN largest, strings bytewise); lookups take views, so a
// string value is not copied to find it.
template <typename V>
struct Less {
  using is_transparent = void;
  bool operator()(typename V::View a, typename V::View b) const { return V::less(a, b); }
};

template <typename V>
using Multiset = std::map<typename V::T, int64_t, Less<V>>;

// A rough per-entry cost of a std::map node (three pointers, colour, the pair), for bounds.
template <typename V>
constexpr size_t kNodeBytes = 48 + sizeof(typename V::T) + sizeof(int64_t);

template <typename V>
size_t value_bytes(const typename V::T& v) {
  if constexpr (kIsStr<V>) {
    return v.capacity();
  } else {
    return 0;
  }
}

// Counts and exact sums that leave their type can only come from forged deltas or state blobs
// (2^63 rows are never reached): refuse them instead of wrapping.
template <typename T>
void add_checked(T& into, T by) {
  if (__builtin_add_overflow(into, by, &into)) {
    throw std::invalid_argument(
        "changelog kernel: a count or sum overflows its state (damaged input?)");
  }
}

// ---- count ----------------------------------------------------------------------------------

class CountAcc final : public Accumulator {
 public:
  explicit CountAcc(int column) : column_(column) {}
  void grow(size_t keys) override { n_.resize(keys, 0); }
  void apply(uint32_t key, const ColumnView& d, int64_t r, int) override {
    add_checked(n_[key], d.child(static_cast<size_t>(column_)).i64(r));
  }
  void clear_key(uint32_t key) override { n_[key] = 0; }
  Scalar value(uint32_t key) const override {
    Scalar s;
    s.valid = true;
    s.i = n_[key];
    return s;
  }
  void save(uint32_t key, StateWriter& w) const override { w.put<int64_t>(n_[key]); }
  void load(uint32_t key, StateReader& r) override { n_[key] = r.get<int64_t>(); }
  void reset() override { n_.clear(); }
  size_t memory_usage() const override { return n_.capacity() * sizeof(int64_t); }

 private:
  int column_;
  std::vector<int64_t> n_;
};

// ---- sum / avg ------------------------------------------------------------------------------

// Integers: an exact 128-bit sum (BIGINT results wrap or fail only when emitted).
class IntSumAcc final : public Accumulator {
 public:
  IntSumAcc(int column, bool avg, bool ansi, std::string name)
      : column_(column), avg_(avg), ansi_(ansi), name_(std::move(name)) {}
  void grow(size_t keys) override {
    s_.resize(keys, 0);
    n_.resize(keys, 0);
  }
  void apply(uint32_t key, const ColumnView& d, int64_t r, int) override {
    add_checked(s_[key], d.child(static_cast<size_t>(column_)).i128(r));
    add_checked(n_[key], d.child(static_cast<size_t>(column_) + 1).i64(r));
  }
  void clear_key(uint32_t key) override {
    s_[key] = 0;
    n_[key] = 0;
  }
  Scalar value(uint32_t key) const override {
    Scalar out;
    const int128 s = s_[key];
    const int64_t n = n_[key];
    if (n == 0) return out;
    out.valid = true;
    if (avg_) {
      out.d = agg::integer_avg(s, n);
    } else {
      out.i = agg::bigint_sum(s, ansi_, name_);
    }
    return out;
  }
  void save(uint32_t key, StateWriter& w) const override {
    w.put<int128>(s_[key]);
    w.put<int64_t>(n_[key]);
  }
  void load(uint32_t key, StateReader& r) override {
    s_[key] = r.get<int128>();
    n_[key] = r.get<int64_t>();
  }
  void reset() override {
    s_.clear();
    n_.clear();
  }
  size_t memory_usage() const override {
    return s_.capacity() * sizeof(int128) + n_.capacity() * sizeof(int64_t);
  }

 private:
  int column_;
  bool avg_;
  bool ansi_;
  std::string name_;
  std::vector<int128> s_;
  std::vector<int64_t> n_;
};

class FloatSumAcc final : public Accumulator {
 public:
  FloatSumAcc(int column, bool avg) : column_(column), avg_(avg) {}
  void grow(size_t keys) override {
    s_.resize(keys, 0.0);
    n_.resize(keys, 0);
  }
  void apply(uint32_t key, const ColumnView& d, int64_t r, int) override {
    s_[key] += d.child(static_cast<size_t>(column_)).f64(r);
    add_checked(n_[key], d.child(static_cast<size_t>(column_) + 1).i64(r));
  }
  void clear_key(uint32_t key) override {
    s_[key] = 0.0;
    n_[key] = 0;
  }
  Scalar value(uint32_t key) const override {
    Scalar out;
    if (n_[key] == 0) return out;
    out.valid = true;
    out.d = avg_ ? s_[key] / static_cast<double>(n_[key]) : s_[key];
    return out;
  }
  void save(uint32_t key, StateWriter& w) const override {
    w.put<double>(s_[key]);
    w.put<int64_t>(n_[key]);
  }
  void load(uint32_t key, StateReader& r) override {
    s_[key] = r.get<double>();
    n_[key] = r.get<int64_t>();
  }
  void reset() override {
    s_.clear();
    n_.clear();
  }
  size_t memory_usage() const override {
    return s_.capacity() * sizeof(double) + n_.capacity() * sizeof(int64_t);
  }

 private:
  int column_;
  bool avg_;
  std::vector<double> s_;
  std::vector<int64_t> n_;
};

// Decimals: a wide sum that stays exact past int128. A folded partial whose own sum passed 38
// digits arrives as null and makes the key's sum overflow for good (it cannot be retracted
// exactly).
class DecimalSumAcc final : public Accumulator {
 public:
  DecimalSumAcc(int column, agg::DecimalSumRule rule) : column_(column), rule_(std::move(rule)) {}
  void grow(size_t keys) override {
    s_.resize(keys);
    n_.resize(keys, 0);
    overflowed_.resize(keys, 0);
  }
  void apply(uint32_t key, const ColumnView& d, int64_t r, int) override {
    const ColumnView& s = d.child(static_cast<size_t>(column_));
    const int64_t n = d.child(static_cast<size_t>(column_) + 1).i64(r);
    add_checked(n_[key], n);
    if (s.is_null(r)) {
      if (n != 0) overflowed_[key] = 1;
    } else {
      s_[key].add(s.i128(r));
    }
  }
  void clear_key(uint32_t key) override {
    s_[key] = agg::WideSum{};
    n_[key] = 0;
    overflowed_[key] = 0;
  }
  Scalar value(uint32_t key) const override {
    Scalar out;
    const int64_t n = n_[key];
    if (n == 0) return out;
    out.valid = rule_.value(s_[key], n, overflowed_[key] != 0, &out.x);
    return out;
  }
  void save(uint32_t key, StateWriter& w) const override {
    w.put<int128>(s_[key].lo);
    w.put<int64_t>(s_[key].wraps);
    w.put<int64_t>(n_[key]);
    w.put<uint8_t>(overflowed_[key]);
  }
  void load(uint32_t key, StateReader& r) override {
    s_[key].lo = r.get<int128>();
    s_[key].wraps = r.get<int64_t>();
    n_[key] = r.get<int64_t>();
    overflowed_[key] = r.get<uint8_t>();
  }
  void reset() override {
    s_.clear();
    n_.clear();
    overflowed_.clear();
  }
  size_t memory_usage() const override {
    return s_.capacity() * sizeof(agg::WideSum) + n_.capacity() * sizeof(int64_t) +
           overflowed_.capacity();
  }

 private:
  int column_;
  agg::DecimalSumRule rule_;
  std::vector<agg::WideSum> s_;
  std::vector<int64_t> n_;
  std::vector<uint8_t> overflowed_;
};

// ---- insert-only min / max / first_value / last_value: the value alone ------------------------

enum class Pick : uint8_t { Min, Max, First, Last };

template <typename V, Pick P>
class PlainValueAcc final : public Accumulator {
 public:
  explicit PlainValueAcc(int column) : column_(column) {}
  void grow(size_t keys) override {
    has_.resize(keys, 0);
    v_.resize(keys);
  }
  void apply(uint32_t key, const ColumnView& d, int64_t r, int) override {
    const ColumnView& c = d.child(static_cast<size_t>(column_));
    if (c.is_null(r)) return;
    const typename V::View v = V::read(c, r);
    bool take = !has_[key];
    if (!take) {
      if constexpr (P == Pick::Min) take = V::less(v, V::view(v_[key]));
      if constexpr (P == Pick::Max) take = V::less(V::view(v_[key]), v);
      if constexpr (P == Pick::Last) take = true;
    }
    if (take) {
      if constexpr (kIsStr<V>) bytes_ += v.size() - v_[key].size();
      V::assign(v_[key], v);
      has_[key] = 1;
    }
  }
  void clear_key(uint32_t key) override {
    has_[key] = 0;
    if constexpr (kIsStr<V>) {
      bytes_ -= v_[key].size();
      v_[key].clear();
    }
  }
  Scalar value(uint32_t key) const override {
    Scalar s;
    if (!has_[key]) return s;
    s.valid = true;
    set_scalar(s, V::view(v_[key]));
    return s;
  }
  void save(uint32_t key, StateWriter& w) const override {
    w.put<uint8_t>(has_[key]);
    if (has_[key]) put_value<V>(w, V::view(v_[key]));
  }
  void load(uint32_t key, StateReader& r) override {
    has_[key] = r.get<uint8_t>() != 0 ? 1 : 0;
    if (has_[key]) {
      v_[key] = get_value<V>(r);
      if constexpr (kIsStr<V>) bytes_ += v_[key].size();
    }
  }
  void reset() override {
    has_.clear();
    v_.clear();
    bytes_ = 0;
  }
  size_t memory_usage() const override {
    return has_.capacity() + v_.capacity() * sizeof(typename V::T) + bytes_;
  }

 private:
  int column_;
  std::vector<uint8_t> has_;
  std::vector<typename V::T> v_;
  size_t bytes_ = 0;  // string bytes held
};

// ---- with retraction: value -> multiplicity ---------------------------------------------------

// min / max (Flink's MinWithRetract / MaxWithRetract) and count_distinct: every value with its
// multiplicity. A value retracted more often than accumulated keeps its negative count (and does
// not count) until accumulations make up for it.
template <typename V, Pick P, bool Distinct>
class MultisetAcc final : public Accumulator {
 public:
  explicit MultisetAcc(int column) : column_(column) {}
  void grow(size_t keys) override {
    sets_.resize(keys);
    if (Distinct) distinct_.resize(keys, 0);
  }
  void apply(uint32_t key, const ColumnView& d, int64_t r, int sign) override {
    const ColumnView& c = d.child(static_cast<size_t>(column_));
    if (c.is_null(r)) return;
    change(key, V::read(c, r), sign > 0 ? 1 : -1);
  }
  void clear_key(uint32_t key) override {
    entries_ -= sets_[key].size();
    sets_[key].clear();
    if (Distinct) distinct_[key] = 0;
  }
  Scalar value(uint32_t key) const override {
    Scalar s;
    if constexpr (Distinct) {
      s.valid = true;
      s.i = distinct_[key];
      return s;
    }
    const Multiset<V>& m = sets_[key];
    if constexpr (P == Pick::Max) {
      for (auto it = m.rbegin(); it != m.rend(); ++it) {
        if (it->second > 0) return found(it->first);
      }
    } else {
      for (auto it = m.begin(); it != m.end(); ++it) {
        if (it->second > 0) return found(it->first);
      }
    }
    return s;
  }
  void save(uint32_t key, StateWriter& w) const override {
    const Multiset<V>& m = sets_[key];
    w.put<uint64_t>(m.size());
    for (const auto& [v, n] : m) {
      put_value<V>(w, V::view(v));
      w.put<int64_t>(n);
    }
  }
  void load(uint32_t key, StateReader& r) override {
    const auto n = r.get<uint64_t>();
    for (uint64_t i = 0; i < n; ++i) {
      const typename V::T v = get_value<V>(r);
      const auto count = r.get<int64_t>();
      if (count == 0)
        throw std::invalid_argument("changelog state: a zero multiplicity in the state blob");
      change(key, V::view(v), count);
    }
  }
  void reset() override {
    sets_.clear();
    distinct_.clear();
    entries_ = 0;
  }
  size_t memory_usage() const override {
    return sets_.capacity() * sizeof(Multiset<V>) + distinct_.capacity() * sizeof(int64_t) +
           entries_ * kNodeBytes<V>;
  }

 private:
  static Scalar found(const typename V::T& v) {
    Scalar s;
    s.valid = true;
    set_scalar(s, V::view(v));
    return s;
  }
  void change(uint32_t key, typename V::View v, int64_t by) {
    Multiset<V>& m = sets_[key];
    auto it = m.find(v);
    if (it == m.end()) {
      typename V::T owned;
      V::assign(owned, v);
      it = m.emplace(std::move(owned), 0).first;
      ++entries_;
    }
    const int64_t before = it->second;
    add_checked(it->second, by);
    if (Distinct) distinct_[key] += (it->second > 0) - (before > 0);
    if (it->second == 0) {
      m.erase(it);
      --entries_;
    }
  }

  int column_;
  std::vector<Multiset<V>> sets_;
  std::vector<int64_t> distinct_;
  size_t entries_ = 0;
};

// first_value / last_value with retraction (Flink's FirstValueWithRetract /
// LastValueWithRetract): the live values in arrival order; a retraction removes the earliest
// live occurrence of its value.
template <typename V, bool Last>
class ArrivalAcc final : public Accumulator {
 public:
  explicit ArrivalAcc(int column) : column_(column) {}
  void grow(size_t keys) override { keys_.resize(keys); }
  void apply(uint32_t key, const ColumnView& d, int64_t r, int sign) override {
    const ColumnView& c = d.child(static_cast<size_t>(column_));
    if (c.is_null(r)) return;
    const typename V::View v = V::read(c, r);
    State& st = keys_[key];
    if (sign > 0) {
      if (st.next == std::numeric_limits<int64_t>::max()) {
        throw std::invalid_argument("changelog kernel: arrival counter overflows (damaged input?)");
      }
      push(st, st.next++, v);
      return;
    }
    auto it = st.where.find(v);
    if (it == st.where.end()) return;  // nothing live to retract
    std::vector<int64_t>& seqs = it->second;
    st.order.erase(seqs.front());
    seqs.erase(seqs.begin());
    --entries_;
    if (seqs.empty()) st.where.erase(it);
  }
  void clear_key(uint32_t key) override {
    entries_ -= keys_[key].order.size();
    keys_[key] = State{};
  }
  Scalar value(uint32_t key) const override {
    Scalar s;
    const State& st = keys_[key];
    if (st.order.empty()) return s;
    s.valid = true;
    set_scalar(s, V::view(Last ? st.order.rbegin()->second : st.order.begin()->second));
    return s;
  }
  void save(uint32_t key, StateWriter& w) const override {
    const State& st = keys_[key];
    w.put<int64_t>(st.next);
    w.put<uint64_t>(st.order.size());
    for (const auto& [seq, v] : st.order) {
      w.put<int64_t>(seq);
      put_value<V>(w, V::view(v));
    }
  }
  void load(uint32_t key, StateReader& r) override {
    State& st = keys_[key];
    st.next = r.get<int64_t>();
    // Arrival numbers count accumulations: a state this far along can only be forged.
    if (st.next < 0 || st.next == std::numeric_limits<int64_t>::max()) {
      throw std::invalid_argument(
          "changelog state: arrival counter out of range in the state blob");
    }
    const auto n = r.get<uint64_t>();
    int64_t prev = std::numeric_limits<int64_t>::min();
    for (uint64_t i = 0; i < n; ++i) {
      const auto seq = r.get<int64_t>();
      const typename V::T v = get_value<V>(r);
      if (seq <= prev || seq >= st.next) {
        throw std::invalid_argument(
            "changelog state: arrival order out of sequence in the state blob");
      }
      prev = seq;
      push(st, seq, V::view(v));
    }
  }
  void reset() override {
    keys_.clear();
    entries_ = 0;
  }
  size_t memory_usage() const override {
    return keys_.capacity() * sizeof(State) + entries_ * (2 * kNodeBytes<V> + sizeof(int64_t));
  }

 private:
  struct State {
    int64_t next = 0;                                              // the next arrival number
    std::map<int64_t, typename V::T> order;                        // arrival number -> live value
    std::map<typename V::T, std::vector<int64_t>, Less<V>> where;  // value -> its arrival numbers
  };
  void push(State& st, int64_t seq, typename V::View v) {
    typename V::T owned;
    V::assign(owned, v);
    auto it = st.where.find(v);
    if (it == st.where.end()) it = st.where.emplace(owned, std::vector<int64_t>{}).first;
    it->second.push_back(seq);
    st.order.emplace(seq, std::move(owned));
    ++entries_;
  }

  int column_;
  std::vector<State> keys_;
  size_t entries_ = 0;
};

template <typename V>
std::unique_ptr<Accumulator> make_value_acc(AggFn fn, int column, bool retracting) {
  switch (fn) {
    case AggFn::Min:
      if (retracting) return std::make_unique<MultisetAcc<V, Pick::Min, false>>(column);
      return std::make_unique<PlainValueAcc<V, Pick::Min>>(column);
    case AggFn::Max:
      if (retracting) return std::make_unique<MultisetAcc<V, Pick::Max, false>>(column);
      return std::make_unique<PlainValueAcc<V, Pick::Max>>(column);
    case AggFn::FirstValue:
      if (retracting) return std::make_unique<ArrivalAcc<V, false>>(column);
      return std::make_unique<PlainValueAcc<V, Pick::First>>(column);
    case AggFn::LastValue:
      if (retracting) return std::make_unique<ArrivalAcc<V, true>>(column);
      return std::make_unique<PlainValueAcc<V, Pick::Last>>(column);
    default:
      return std::make_unique<MultisetAcc<V, Pick::Min, true>>(column);
  }
}

}  // namespace

std::unique_ptr<Accumulator> make_accumulator(const AccumulatorSpec& spec) {
  const AggFn fn = spec.plan.fn;
  const arrow::Type& delta = *spec.state;
  const arrow::Type& result = *spec.result;
  switch (fn) {
    case AggFn::Count:
      return std::make_unique<CountAcc>(spec.column);
    case AggFn::Sum:
    case AggFn::Avg: {
      const bool avg = fn == AggFn::Avg;
      if (delta.kind == Kind::Float64) {
        return std::make_unique<FloatSumAcc>(spec.column, avg);
      }
      if (result.kind == Kind::Decimal128) {
        return std::make_unique<DecimalSumAcc>(
            spec.column, agg::DecimalSumRule(avg, spec.ansi, spec.name, delta.scale,
                                             result.precision, result.scale));
      }
      return std::make_unique<IntSumAcc>(spec.column, avg, spec.ansi, spec.name);
    }
    default:
      break;
  }
  const ValueClass vc = agg::value_class_of(delta);
  return agg::with_values(vc, [&](auto values) {
    using V = decltype(values);
    return make_value_acc<V>(fn, spec.column, spec.retracting);
  });
}

}  // namespace sliceflow::changelog
