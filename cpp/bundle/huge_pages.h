// An allocator for the bundle's per-slot arrays: large ones are placed on 2 MB pages.
//
// A bundle's arrays are read and written at random slots (rows fold into their slot, a flush
// gathers slots key by key); with 4 KB pages nearly every such access of an array of many
// MB also misses the TLB, and filling the array takes a page fault per 4 KB. The machine's
// transparent huge pages are commonly enabled for `madvise` only, so the allocator asks.
//
// Freed blocks are kept, up to kCacheBytes in all, for the next allocation of that size: a
// fresh block costs a page fault and the kernel's clearing of every page on first touch,
// which for a bundle of 1M slots was a tenth of the local phase. A process that aggregates
// once per task (a Python worker) allocates the same sizes again at every bundle and task.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace sliceflow::bundle {

// Blocks of 2 MB multiples, aligned to 2 MB, with a bounded cache of freed ones.
class HugeBlocks {
 public:
  static constexpr size_t kHuge = size_t{2} << 20;
  // Idle bytes the cache may hold; a block freed beyond that goes back to the system.
  static constexpr size_t kCacheBytes = size_t{128} << 20;

  static void* allocate(size_t bytes) { return instance().take(bytes); }
  static void deallocate(void* p, size_t bytes) noexcept { instance().give(p, bytes); }
  static size_t rounded(size_t bytes) { return (bytes + kHuge - 1) / kHuge * kHuge; }

 private:
  struct Block {
    void* p;
    size_t bytes;
  };
  // (No HugeVector has static storage, so none is freed after this one is destroyed.)
  static HugeBlocks& instance() {
    static HugeBlocks blocks;
    return blocks;
  }

  void* take(size_t bytes) {
    const size_t size = rounded(bytes);
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      for (size_t i = free_.size(); i-- > 0;) {
        if (free_[i].bytes != size) continue;
        void* p = free_[i].p;
        free_[i] = free_.back();
        free_.pop_back();
        cached_ -= size;
        return p;
      }
    }
    void* p = std::aligned_alloc(kHuge, size);
    if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__)
    madvise(p, size, MADV_HUGEPAGE);  // a hint: without it the pages are 4 KB, no error
#endif
    return p;
  }

  // When the cache is full, smaller blocks make room: a bundle's arrays grow by doubling,
  // so the last (largest) blocks hold most of the bytes that the next bundle touches again.
  void give(void* p, size_t bytes) noexcept {
    const size_t size = rounded(bytes);
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      while (cached_ + size > kCacheBytes && !free_.empty()) {
        size_t smallest = 0;
        for (size_t i = 1; i < free_.size(); ++i) {
          if (free_[i].bytes < free_[smallest].bytes) smallest = i;
        }
        if (free_[smallest].bytes >= size) break;
        std::free(free_[smallest].p);
        cached_ -= free_[smallest].bytes;
        free_[smallest] = free_.back();
        free_.pop_back();
      }
      if (cached_ + size <= kCacheBytes && free_.size() < free_.capacity()) {
        free_.push_back(Block{p, size});
        cached_ += size;
        return;
      }
    }
    std::free(p);
  }

  HugeBlocks() { free_.reserve(kMaxBlocks); }
  ~HugeBlocks() {
    for (const Block& b : free_) std::free(b.p);
  }
  HugeBlocks(const HugeBlocks&) = delete;
  HugeBlocks& operator=(const HugeBlocks&) = delete;

  // The cache's own array never grows, so that give() cannot throw.
  static constexpr size_t kMaxBlocks = kCacheBytes / kHuge;
  std::mutex mutex_;
  std::vector<Block> free_;
  size_t cached_ = 0;
};

template <typename T>
class HugePageAllocator {
 public:
  using value_type = T;

  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}  // NOLINT: rebinding converts

  T* allocate(size_t n) {
    if (n > kMaxBytes / sizeof(T)) throw std::bad_array_new_length();
    const size_t bytes = n * sizeof(T);
    if (bytes < kHuge) return std::allocator<T>().allocate(n);
    return static_cast<T*>(HugeBlocks::allocate(bytes));
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n * sizeof(T) < kHuge) {
      std::allocator<T>().deallocate(p, n);
    } else {
      HugeBlocks::deallocate(p, n * sizeof(T));
    }
  }

  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
  template <typename U>
  bool operator!=(const HugePageAllocator<U>&) const noexcept {
    return false;
  }

 private:
  static constexpr size_t kHuge = HugeBlocks::kHuge;
  static constexpr size_t kMaxBytes = ~size_t{0} - kHuge;
};

// A vector whose storage, once it reaches 2 MB, lies on huge pages.
template <typename T>
using HugeVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace sliceflow::bundle
