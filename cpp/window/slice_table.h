// The local phase's bundle index: (key bytes, slice start) -> dense slot number, built for
// rows that come (mostly) in time order.
//
// A hash map over keys (not over (key, slice) pairs) remembers, per key, the slot its last
// row went to. In time order a row either lands in that slot (same slice) or opens the key's
// next slice: either way one probe of a table as large as the number of keys, where a map
// over (key, slice) pairs would be as large as the bundle and miss the caches on every row.
// The first row that goes back to an earlier slice of its key switches the buffer to also
// index every (key id, slice) pair, for the rest of the bundle.
//
// Each key's bytes are stored once; slots are numbered in the order they are made, and a
// flush groups them by key (keys in the order they first came) with a counting sort.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "agg/key_codec.h"
#include "arrow/byte_buffer.h"
#include "memory/huge_pages.h"

namespace sliceflow::window {

class SliceTable {
 public:
  SliceTable() { rehash_keys(1024); }

  // The slot of (key, slice), inserting it if new. `key_hash` is hash_bytes(key).
  uint32_t find_or_insert(std::string_view key, uint64_t key_hash, int64_t slice) {
    const bool inline_key = key.size() <= kInlineBytes;
    uint32_t tag = static_cast<uint32_t>(key_hash >> 32);
    uint64_t bytes = 0;
    if (inline_key) pack(key, &bytes, &tag);
    size_t i = static_cast<size_t>(key_hash) & key_mask_;
    for (;;) {
      KeyEntry& e = key_table_[i];
      if (e.id == kNone) break;
      if (e.tag == tag && e.key_size == key.size() &&
          (inline_key ? e.key_bytes == bytes
                      : arrow::equal_bytes(key_chars(e.key_bytes), key.data(), key.size()))) {
        if (e.last_slice == slice) return e.last_slot;
        const uint32_t slot = other_slice(e.id, e.last_slice, slice);
        e.last_slice = slice;
        e.last_slot = slot;
        return slot;
      }
      i = (i + 1) & key_mask_;
    }
    const auto id = static_cast<uint32_t>(keys_.size());
    const uint64_t begin = arena_.size();
    arena_.append_bytes(key.data(), key.size());
    keys_.push_back(Key{begin, key.size()});
    slot_count_.push_back(0);
    const uint32_t slot = new_slot(id, slice);
    key_table_[i] = KeyEntry{
        tag, id, slot, static_cast<uint32_t>(key.size()), slice, inline_key ? bytes : begin};
    if (keys_.size() * 2 > key_table_.size()) rehash_keys(key_table_.size() * 2);
    return slot;
  }

  // Starts loading the table entry `key_hash` probes first (a batch probes many rows at
  // random places: prefetching a few rows ahead hides the misses).
  void prefetch(uint64_t key_hash) const {
    __builtin_prefetch(&key_table_[static_cast<size_t>(key_hash) & key_mask_]);
  }

  size_t size() const { return slot_key_.size(); }
  size_t num_keys() const { return keys_.size(); }
  int64_t slice(uint32_t slot) const { return slice_[slot]; }
  const int64_t* slices() const { return slice_.data(); }
  uint32_t key_id(uint32_t slot) const { return slot_key_[slot]; }
  std::string_view key(uint32_t id) const {
    return {key_chars(keys_[id].begin), static_cast<size_t>(keys_[id].size)};
  }

  // The slots grouped by key (keys in id order, i.e. as they first came), each key's slots
  // in slice order; `key_end[id]` is where key id's slots end in `order`.
  void grouped(memory::HugeVector<uint32_t>& order, memory::HugeVector<size_t>& key_end) const {
    const size_t keys = keys_.size();
    key_end.resize(keys);
    size_t at = 0;
    for (size_t k = 0; k < keys; ++k) {
      at += slot_count_[k];
      key_end[k] = at;
    }
    // Each key's slots are filled in from its end backwards: the cursors are key_end, walked
    // down, so no second array is needed.
    order.resize(slot_key_.size());
    memory::HugeVector<size_t>& cursor = key_end;
    for (size_t s = slot_key_.size(); s-- > 0;)
      order[--cursor[slot_key_[s]]] = static_cast<uint32_t>(s);
    for (size_t k = 0; k < keys; ++k) cursor[k] += slot_count_[k];
    // Slots are made in slice order per key until a row goes back in time.
    if (!indexed_) return;
    size_t begin = 0;
    for (size_t k = 0; k < keys; ++k) {
      const auto first = order.begin() + static_cast<std::ptrdiff_t>(begin);
      const auto last = order.begin() + static_cast<std::ptrdiff_t>(key_end[k]);
      const auto by_slice = [&](uint32_t a, uint32_t b) { return slice_[a] < slice_[b]; };
      if (!std::is_sorted(first, last, by_slice)) std::sort(first, last, by_slice);
      begin = key_end[k];
    }
  }

  size_t memory_usage() const {
    return key_table_.capacity() * sizeof(KeyEntry) + keys_.capacity() * sizeof(Key) +
           slot_count_.capacity() * sizeof(uint32_t) + arena_.capacity() +
           slice_.capacity() * sizeof(int64_t) + slot_key_.capacity() * sizeof(uint32_t) +
           index_.capacity() * sizeof(IndexEntry);
  }

  // Empties the buffer in O(keys + slots), keeping its capacity (one bundle's worth is the
  // steady state).
  void clear() {
    for (KeyEntry& e : key_table_) e.id = kNone;
    keys_.clear();
    slot_count_.clear();
    arena_.clear();
    slice_.clear();
    slot_key_.clear();
    if (indexed_) std::fill(index_.begin(), index_.end(), IndexEntry{0, kNone, kNone});
    indexed_ = false;
  }

 private:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  // A key of up to 12 bytes (a tagged integer key is 9) is held in the entry itself, as
  // (key_bytes, tag): a probe that finds it reads no key bytes from the arena, which was the
  // probe's main cache miss. Longer keys: tag is the high half of the key's hash and
  // key_bytes where the key begins in arena_.
  static constexpr size_t kInlineBytes = 12;
  struct KeyEntry {
    uint32_t tag;
    uint32_t id;  // kNone: an empty entry
    uint32_t last_slot;
    uint32_t key_size;
    int64_t last_slice;  // the slice of the key's last row
    uint64_t key_bytes;
  };
  // Packs a key of at most kInlineBytes (with its size, a unique pair): overlapping loads.
  static void pack(std::string_view key, uint64_t* lo, uint32_t* hi) {
    const char* p = key.data();
    const size_t n = key.size();
    uint64_t a = 0;
    uint32_t b = 0;
    if (n >= 8) {
      std::memcpy(&a, p, 8);
      std::memcpy(&b, p + n - 4, 4);
    } else if (n >= 4) {
      uint32_t x = 0;
      uint32_t y = 0;
      std::memcpy(&x, p, 4);
      std::memcpy(&y, p + n - 4, 4);
      a = x | static_cast<uint64_t>(y) << 32;
    } else {
      for (size_t k = 0; k < n; ++k)
        a |= static_cast<uint64_t>(static_cast<uint8_t>(p[k])) << (8 * k);
    }
    *lo = a;
    *hi = b;
  }
  struct Key {
    uint64_t begin;
    uint64_t size;
  };
  struct IndexEntry {
    int64_t slice;
    uint32_t id;
    uint32_t slot;  // kNone: an empty entry
  };

  const char* key_chars(uint64_t begin) const {
    return reinterpret_cast<const char*>(arena_.data()) + begin;
  }

  uint32_t new_slot(uint32_t id, int64_t slice) {
    const auto slot = static_cast<uint32_t>(slot_key_.size());
    slice_.push_back(slice);
    slot_key_.push_back(id);
    ++slot_count_[id];
    if (indexed_) {
      if (slot_key_.size() * 2 > index_.size()) {
        resize_index(index_.size() * 2);  // which indexes the new slot too
      } else {
        index_insert(id, slice, slot);
      }
    }
    return slot;
  }

  // A row of key `id` whose slice is not the one of the key's last row.
  uint32_t other_slice(uint32_t id, int64_t last, int64_t slice) {
    // Until a row goes back in time, `last` is the key's latest slice: a later one is new.
    if (!indexed_) {
      if (slice > last) return new_slot(id, slice);
      build_index();
    }
    const uint32_t found = index_find(id, slice);
    return found != kNone ? found : new_slot(id, slice);
  }

  static uint64_t index_hash(uint32_t id, int64_t slice) {
    return agg::fold_mul(static_cast<uint64_t>(slice) ^ (static_cast<uint64_t>(id) << 32 | id),
                         0x9E3779B97F4A7C15ULL);
  }
  uint32_t index_find(uint32_t id, int64_t slice) const {
    size_t i = static_cast<size_t>(index_hash(id, slice)) & index_mask_;
    for (;; i = (i + 1) & index_mask_) {
      const IndexEntry& e = index_[i];
      if (e.slot == kNone) return kNone;
      if (e.id == id && e.slice == slice) return e.slot;
    }
  }
  void index_insert(uint32_t id, int64_t slice, uint32_t slot) {
    size_t i = static_cast<size_t>(index_hash(id, slice)) & index_mask_;
    while (index_[i].slot != kNone) i = (i + 1) & index_mask_;
    index_[i] = IndexEntry{slice, id, slot};
  }
  void resize_index(size_t capacity) {
    index_.assign(capacity, IndexEntry{0, kNone, kNone});
    index_mask_ = capacity - 1;
    for (uint32_t s = 0; s < slot_key_.size(); ++s) index_insert(slot_key_[s], slice_[s], s);
  }
  void build_index() {
    size_t capacity = std::max<size_t>(1024, index_.size());
    while (capacity < slot_key_.size() * 4) capacity *= 2;
    resize_index(capacity);
    indexed_ = true;
  }

  void rehash_keys(size_t capacity) {
    memory::HugeVector<KeyEntry> old(capacity, KeyEntry{0, kNone, 0, 0, 0, 0});
    old.swap(key_table_);
    key_mask_ = capacity - 1;
    for (const KeyEntry& e : old) {
      if (e.id == kNone) continue;
      const uint64_t h = agg::hash_bytes(key(e.id));
      size_t i = static_cast<size_t>(h) & key_mask_;
      while (key_table_[i].id != kNone) i = (i + 1) & key_mask_;
      key_table_[i] = e;
    }
  }

  memory::HugeVector<KeyEntry> key_table_;
  size_t key_mask_ = 0;
  memory::HugeVector<Key> keys_;             // by key id
  memory::HugeVector<uint32_t> slot_count_;  // by key id
  arrow::ByteBuffer arena_;                  // key bytes
  memory::HugeVector<int64_t> slice_;        // by slot
  memory::HugeVector<uint32_t> slot_key_;    // by slot: its key id
  // (key id, slice) -> slot, kept only once a row has gone back in time in this bundle.
  bool indexed_ = false;
  memory::HugeVector<IndexEntry> index_;
  size_t index_mask_ = 0;
};

}  // namespace sliceflow::window
