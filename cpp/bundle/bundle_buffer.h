// An open-addressing hash map from (key bytes, an int64) to a dense slot number: the
// changelog kernel's bundle of keys, count_distinct's value maps. Accumulators
// live in arrays indexed by slot; the buffer is emptied at each flush (Flink's MapBundle,
// bounded by table.exec.mini-batch.size). The window local phase, whose rows come in time
// order, uses window/slice_table.h instead.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "arrow/byte_buffer.h"

namespace sliceflow::bundle {

class BundleBuffer {
 public:
  explicit BundleBuffer(size_t initial_capacity = 1024) {
    size_t c = 16;
    while (c < initial_capacity) c *= 2;
    rehash(c);
  }

  // The slot of (key, slice), inserting it if new. `hash` must be a function of both.
  uint32_t find_or_insert(std::string_view key, int64_t slice, uint64_t hash) {
    size_t i = static_cast<size_t>(hash) & mask_;
    for (;;) {
      Entry& e = table_[i];
      if (e.slot == kEmpty) break;
      if (e.hash == hash && slots_[e.slot].slice == slice && same_key(e.slot, key)) return e.slot;
      i = (i + 1) & mask_;
    }
    const auto slot = static_cast<uint32_t>(slots_.size());
    table_[i] = Entry{hash, slot};
    pos_.push_back(i);
    slots_.push_back(Slot{slice, arena_.size(), key.size()});
    arena_.append_bytes(key.data(), key.size());
    if (slots_.size() * 2 > table_.size()) rehash(table_.size() * 2);
    return slot;
  }

  // Starts loading the table entry `hash` probes first (a batch probes many rows at random
  // places of a table larger than the caches: prefetching a few rows ahead hides the misses).
  void prefetch(uint64_t hash) const {
    __builtin_prefetch(&table_[static_cast<size_t>(hash) & mask_]);
  }

  size_t size() const { return slots_.size(); }
  int64_t slice(uint32_t slot) const { return slots_[slot].slice; }
  std::string_view key_of(uint32_t slot) const {
    const Slot& s = slots_[slot];
    return {reinterpret_cast<const char*>(arena_.data()) + s.key_begin, s.key_size};
  }
  bool same_key(uint32_t slot, std::string_view key) const {
    const std::string_view k = key_of(slot);
    return k.size() == key.size() && arrow::equal_bytes(k.data(), key.data(), key.size());
  }
  size_t memory_usage() const {
    return table_.capacity() * sizeof(Entry) + slots_.capacity() * sizeof(Slot) +
           pos_.capacity() * sizeof(size_t) + arena_.capacity();
  }
  // Empties the buffer in O(entries), keeping its capacity (one bundle's worth is the steady
  // state).
  void clear() {
    for (const size_t i : pos_) table_[i].slot = kEmpty;
    pos_.clear();
    slots_.clear();
    arena_.clear();
  }

 private:
  static constexpr uint32_t kEmpty = 0xFFFFFFFFu;
  struct Entry {
    uint64_t hash;
    uint32_t slot;
  };

  void rehash(size_t capacity) {
    std::vector<Entry> old(capacity, Entry{0, kEmpty});
    old.swap(table_);
    mask_ = capacity - 1;
    for (const Entry& e : old) {
      if (e.slot == kEmpty) continue;
      size_t i = static_cast<size_t>(e.hash) & mask_;
      while (table_[i].slot != kEmpty) i = (i + 1) & mask_;
      table_[i] = e;
      pos_[e.slot] = i;
    }
  }

  std::vector<Entry> table_;
  std::vector<size_t> pos_;  // slot -> its table entry, so that clear() is O(entries)
  size_t mask_ = 0;
  // A slot's slice and where its key bytes are, side by side: a probe that hits checks both
  // with one cache miss.
  struct Slot {
    int64_t slice;
    size_t key_begin;
    size_t key_size;
  };
  std::vector<Slot> slots_;
  arrow::ByteBuffer arena_;
};

}  // namespace sliceflow::bundle
