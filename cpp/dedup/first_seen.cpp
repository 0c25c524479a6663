#include "dedup/first_seen.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "agg/key_codec.h"
#include "state/byte_order.h"

namespace sliceflow::dedup {
namespace {

using arrow::ColumnView;
using arrow::Layout;

constexpr char kMagic[4] = {'S', 'F', 'D', 'F'};
constexpr size_t kHeader = 4 + 2 + 1 + 1 + 8 + 8;
constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
constexpr int64_t kChunk = 4096;  // keys are encoded a chunk at a time to bound the scratch

[[noreturn]] void damaged(const std::string& what) {
  throw std::invalid_argument("deduplicate state: " + what);
}

int64_t saturating_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? kNever : std::numeric_limits<int64_t>::min();
  return r;
}

int64_t ms_to_us(int64_t ms) {
  int64_t r;
  if (__builtin_mul_overflow(ms, int64_t{1000}, &r))
    return ms > 0 ? kNever : std::numeric_limits<int64_t>::min();
  return r;
}

template <typename T>
void put(std::string& out, T v) {
  char b[sizeof(T)];
  state::store_le(b, v);
  out.append(b, sizeof(T));
}

// A bounds-checked reader over a payload.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  template <typename T>
  T get(const char* what) {
    need(sizeof(T), what);
    const T v = state::load_le<T>(in_.data() + at_);
    at_ += sizeof(T);
    return v;
  }
  std::string_view bytes(uint64_t n, const char* what) {
    need(n, what);
    const std::string_view s = in_.substr(at_, static_cast<size_t>(n));
    at_ += static_cast<size_t>(n);
    return s;
  }
  size_t left() const { return in_.size() - at_; }

 private:
  void need(uint64_t n, const char* what) const {
    if (in_.size() - at_ < n) damaged(std::string("the payload is cut short in ") + what);
  }
  std::string_view in_;
  size_t at_ = 0;
};

}  // namespace

FirstSeen::FirstSeen(int32_t num_keys, bool timed, int64_t delay_us)
    : num_keys_(num_keys), timed_(timed), delay_us_(delay_us) {
  if (num_keys < 0) throw std::invalid_argument("dedup: negative number of key columns");
  if (delay_us < 0) throw std::invalid_argument("dedup: negative watermark delay");
}

int FirstSeen::payload_version(std::string_view s) {
  if (s.size() >= 6 && std::memcmp(s.data(), kMagic, 4) == 0)
    return state::load_le<uint16_t>(s.data() + 4);
  // An Arrow IPC message starts with the continuation marker 0xFFFFFFFF.
  if (s.size() >= 4 && std::memcmp(s.data(), "\xff\xff\xff\xff", 4) == 0) return 1;
  damaged("the stored section is neither an Arrow IPC message nor an 'SFDF' payload");
}

void FirstSeen::reset() {
  keys_.clear();
  expires_.clear();
  alive_.clear();
  touched_.clear();
  emit_rows_.clear();
  previous_ms_ = kNoWatermark;
  watermark_ms_ = kNoWatermark;
  legacy_ = false;
  live_ = 0;
}

uint32_t FirstSeen::slot_of(std::string_view key, bool* inserted) {
  const size_t before = keys_.size();
  const uint32_t slot = keys_.find_or_insert(key, 0, agg::hash_bytes(key));
  *inserted = keys_.size() != before;
  if (*inserted) {
    expires_.push_back(kNever);
    alive_.push_back(0);
    touched_.push_back(0);
  }
  return slot;
}

void FirstSeen::load(std::string_view payload) {
  reset();
  if (payload.empty()) return;
  Reader r(payload);
  const std::string_view magic = r.bytes(4, "its header");
  if (std::memcmp(magic.data(), kMagic, 4) != 0) damaged("the payload has no 'SFDF' header");
  const auto version = r.get<uint16_t>("its header");
  if (version != kPayloadVersion) {
    damaged("payload version " + std::to_string(version) + ", this release reads " +
            std::to_string(kPayloadVersion) + " (and 1, the Arrow IPC layout)");
  }
  const auto flags = r.get<uint8_t>("its header");
  if (r.get<uint8_t>("its header") != 0 || (flags & ~1u) != 0)
    damaged("unknown flags in the payload header (damaged value)");
  if (((flags & 1u) != 0) != timed_) {
    damaged(std::string("the payload was written ") +
            (timed_ ? "without a watermark" : "with a watermark") + ", the query now runs " +
            (timed_ ? "with one" : "without one"));
  }
  previous_ms_ = r.get<int64_t>("its header");
  if (!timed_ && previous_ms_ != kNoWatermark)
    damaged("a watermark in the payload of a query without one (damaged value)");
  watermark_ms_ = previous_ms_;  // payload() before a step writes the state back as it was
  const auto entries = r.get<uint64_t>("its header");
  if (entries > r.left() / 12) damaged("more entries than the payload has bytes for");
  for (uint64_t e = 0; e < entries; ++e) {
    const std::string_view key = r.bytes(r.get<uint32_t>("an entry"), "an entry");
    const auto expires = r.get<int64_t>("an entry");
    bool inserted = false;
    const uint32_t slot = slot_of(key, &inserted);
    if (!inserted) damaged("a key appears twice in the payload");
    expires_[slot] = expires;
    alive_[slot] = 1;
  }
  if (r.left() != 0) damaged("trailing bytes after the last entry");
  live_ = static_cast<int64_t>(entries);
  stats_.keys_loaded += live_;
}

void FirstSeen::check_batch(const ColumnView& v, const char* what) const {
  const size_t want = static_cast<size_t>(num_keys_) + (timed_ ? 1 : 0);
  if (v.layout() != Layout::Struct || v.num_children() != want) {
    throw std::invalid_argument(std::string("dedup kernel: ") + what +
                                " does not have the plan's columns");
  }
  if (timed_ && v.child(want - 1).layout() != Layout::Int64) {
    throw std::invalid_argument("dedup kernel: the watermark's time column '" +
                                v.child(want - 1).name() + "' is not a TIMESTAMP");
  }
}

void FirstSeen::load_rows(const ArrowSchema& schema, const ArrowArray& rows) {
  reset();
  const ColumnView v(schema, rows);
  check_batch(v, "the stored rows (payload format 1)");
  std::vector<const ColumnView*> cols;
  for (int32_t k = 0; k < num_keys_; ++k) cols.push_back(&v.child(static_cast<size_t>(k)));
  const ColumnView* time = timed_ ? &v.child(static_cast<size_t>(num_keys_)) : nullptr;
  agg::KeyEncoder enc(std::move(cols));
  for (int64_t begin = 0; begin < v.length(); begin += kChunk) {
    const int64_t end = std::min(v.length(), begin + kChunk);
    enc.encode(begin, end);
    for (int64_t r = begin; r < end; ++r) {
      bool inserted = false;
      const uint32_t slot = slot_of(enc.key(r), &inserted);
      if (!inserted) continue;
      alive_[slot] = 1;
      ++live_;
      if (time != nullptr)
        expires_[slot] = saturating_add(time->is_null(r) ? 0 : time->i64(r), delay_us_);
    }
  }
  legacy_ = true;
  stats_.keys_loaded += live_;
}

void FirstSeen::step(const ArrowSchema& schema, const ArrowArray& rows, int64_t watermark_ms) {
  const ColumnView v(schema, rows);
  check_batch(v, "the batch");
  emit_rows_.clear();
  std::fill(touched_.begin(), touched_.end(), 0);
  std::vector<const ColumnView*> cols;
  for (int32_t k = 0; k < num_keys_; ++k) cols.push_back(&v.child(static_cast<size_t>(k)));
  const ColumnView* time = timed_ ? &v.child(static_cast<size_t>(num_keys_)) : nullptr;
  // Late: at or before the previous micro-batch's watermark (a bucket's first micro-batch: 0,
  // as Spark's first; format 1 state, whose payload has none: this micro-batch's).
  int64_t late_us = std::numeric_limits<int64_t>::min();
  if (timed_) {
    late_us = legacy_ ? ms_to_us(watermark_ms)
                      : ms_to_us(previous_ms_ == kNoWatermark ? 0 : previous_ms_);
  }
  agg::KeyEncoder enc(std::move(cols));
  const int64_t n = v.length();
  stats_.rows_stepped += n;
  for (int64_t begin = 0; begin < n; begin += kChunk) {
    const int64_t end = std::min(n, begin + kChunk);
    enc.encode(begin, end);
    for (int64_t r = begin; r < end; ++r) {
      int64_t t = 0;
      if (time != nullptr && !time->is_null(r)) {
        t = time->i64(r);
        if (t <= late_us) {
          ++stats_.rows_late;
          continue;
        }
      }
      bool inserted = false;
      const uint32_t slot = slot_of(enc.key(r), &inserted);
      if (!touched_[slot]) {
        touched_[slot] = 1;
        ++stats_.state_reads;
      }
      if (alive_[slot]) continue;
      alive_[slot] = 1;
      ++live_;
      expires_[slot] = time != nullptr ? saturating_add(t, delay_us_) : kNever;
      emit_rows_.push_back(r);
      ++stats_.inserts;
      ++stats_.state_writes;
    }
  }
  if (timed_) {
    // After the rows, as Spark evicts: entries that expire at or before this watermark leave.
    const int64_t evict_us = ms_to_us(watermark_ms);
    for (size_t s = 0; s < alive_.size(); ++s) {
      if (alive_[s] && expires_[s] <= evict_us) {
        alive_[s] = 0;
        --live_;
        ++stats_.keys_expired;
        ++stats_.state_writes;
      }
    }
    watermark_ms_ = watermark_ms;
    // A state kept for the next micro-batch (bucket layout 2) ran at this watermark now.
    previous_ms_ = watermark_ms;
    legacy_ = false;
  }
}

void FirstSeen::clear_candidates() {
  local_keys_.clear();
  local_max_.clear();
  candidates_.clear();
}

const std::vector<int64_t>& FirstSeen::candidates(const ArrowSchema& schema,
                                                  const ArrowArray& rows) {
  const ColumnView v(schema, rows);
  check_batch(v, "the batch");
  candidates_.clear();
  std::vector<const ColumnView*> cols;
  for (int32_t k = 0; k < num_keys_; ++k) cols.push_back(&v.child(static_cast<size_t>(k)));
  const ColumnView* time = timed_ ? &v.child(static_cast<size_t>(num_keys_)) : nullptr;
  agg::KeyEncoder enc(std::move(cols));
  const int64_t n = v.length();
  for (int64_t begin = 0; begin < n; begin += kChunk) {
    const int64_t end = std::min(n, begin + kChunk);
    enc.encode(begin, end);
    for (int64_t r = begin; r < end; ++r) {
      const std::string_view key = enc.key(r);
      const size_t before = local_keys_.size();
      const uint32_t slot = local_keys_.find_or_insert(key, 0, agg::hash_bytes(key));
      // A row's bound: a null time (or no watermark) closes its key; else its time.
      const int64_t bound = time == nullptr || time->is_null(r) ? kNever : time->i64(r);
      if (local_keys_.size() != before) {
        local_max_.push_back(bound);
      } else if (local_max_[slot] == kNever || bound <= local_max_[slot]) {
        continue;
      } else {
        local_max_[slot] = bound;
      }
      candidates_.push_back(r);
    }
  }
  return candidates_;
}

std::string FirstSeen::payload() const {
  std::string out;
  out.reserve(kHeader + static_cast<size_t>(live_) * 24);
  out.append(kMagic, 4);
  put<uint16_t>(out, kPayloadVersion);
  put<uint8_t>(out, timed_ ? 1 : 0);
  put<uint8_t>(out, 0);
  put<int64_t>(out, timed_ ? watermark_ms_ : kNoWatermark);
  put<uint64_t>(out, static_cast<uint64_t>(live_));
  for (uint32_t s = 0; s < alive_.size(); ++s) {
    if (!alive_[s]) continue;
    const std::string_view key = keys_.key_of(s);
    put<uint32_t>(out, static_cast<uint32_t>(key.size()));
    out.append(key.data(), key.size());
    put<int64_t>(out, expires_[s]);
  }
  return out;
}

}  // namespace sliceflow::dedup
