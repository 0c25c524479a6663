// The bookkeeping of a bounded cache of freed memory blocks, shared by memory/buffer_pool and
// memory/huge_pages: at most `max_blocks()` blocks and `max_bytes()` bytes, both set at run
// time (0 bytes or 0 blocks: nothing is kept). Which block to take and which to give up are
// the caller's policy; the caller holds `mutex` around every call but the limit getters.
//
// Invariants: count() <= max_blocks() <= kCapacity and bytes() <= max_bytes(), also right
// after set_limits (which frees what no longer fits). Every block came from malloc,
// realloc or aligned_alloc and is owned by the cache while in it: what the cache gives up
// itself (set_limits, release) it hands to std::free.
//
// The limits are atomics so that a caller can see "off" without taking the mutex. Nothing
// to destroy but the mutex, so that a process-wide instance still works for memory freed
// late in Python's shutdown; what it holds at exit is left to the system.
//
// Cost: add and remove O(1); set_limits and release O(kCapacity^2) at worst, not on any
// hot path.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <mutex>

namespace sliceflow::memory {

class BlockCache {
 public:
  // The most blocks any limit may ask for (the storage is a fixed array: adding a block never
  // allocates, which matters in a noexcept free path).
  static constexpr size_t kCapacity = 256;

  struct Block {
    void* p;
    size_t bytes;
  };

  BlockCache(size_t max_blocks, size_t max_bytes) noexcept
      : max_blocks_(max_blocks < kCapacity ? max_blocks : kCapacity), max_bytes_(max_bytes) {}
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  std::mutex mutex;

  size_t max_blocks() const noexcept { return max_blocks_.load(std::memory_order_relaxed); }
  size_t max_bytes() const noexcept { return max_bytes_.load(std::memory_order_relaxed); }
  // True when the cache keeps nothing; readable without the mutex.
  bool off() const noexcept { return max_blocks() == 0 || max_bytes() == 0; }

  size_t count() const { return count_; }
  size_t bytes() const { return bytes_; }
  const Block& operator[](size_t i) const { return blocks_[i]; }

  // Whether a block of `bytes` would be kept as the cache is now.
  bool fits(size_t bytes) const {
    const size_t limit = max_bytes();
    return count_ < max_blocks() && bytes_ <= limit && bytes <= limit - bytes_;
  }

  // Takes block i out (the last block moves into its place).
  Block remove(size_t i) {
    const Block b = blocks_[i];
    blocks_[i] = blocks_[--count_];
    bytes_ -= b.bytes;
    return b;
  }
  // Keeps the block when the cache has room for it; false (and nothing kept) when not.
  bool add(void* p, size_t bytes) {
    if (!fits(bytes)) return false;
    blocks_[count_++] = Block{p, bytes};
    bytes_ += bytes;
    return true;
  }

  // New limits (blocks capped at kCapacity); frees the smallest blocks until what is held fits
  // them. Returns the bytes freed.
  size_t set_limits(size_t max_blocks, size_t max_bytes) {
    max_blocks_.store(max_blocks < kCapacity ? max_blocks : kCapacity, std::memory_order_relaxed);
    max_bytes_.store(max_bytes, std::memory_order_relaxed);
    size_t freed = 0;
    while (count_ > 0 && (count_ > this->max_blocks() || bytes_ > this->max_bytes())) {
      size_t smallest = 0;
      for (size_t i = 1; i < count_; ++i) {
        if (blocks_[i].bytes < blocks_[smallest].bytes) smallest = i;
      }
      const Block b = remove(smallest);
      freed += b.bytes;
      std::free(b.p);
    }
    return freed;
  }

  // Frees every block held; returns the bytes freed. The limits stay.
  size_t release() {
    const size_t freed = bytes_;
    while (count_ > 0) std::free(remove(count_ - 1).p);
    return freed;
  }

 private:
  std::atomic<size_t> max_blocks_;
  std::atomic<size_t> max_bytes_;
  std::array<Block, kCapacity> blocks_{};
  size_t count_ = 0;
  size_t bytes_ = 0;
};

}  // namespace sliceflow::memory
