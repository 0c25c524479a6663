// An allocator for the bundle's per-slot arrays: large ones are placed on 2 MB pages.
//
// A bundle's arrays are read and written at random slots (rows fold into their slot, a flush
// gathers slots key by key); with 4 KB pages nearly every such access of an array of many
// MB also misses the TLB, and filling the array takes a page fault per 4 KB. The machine's
// transparent huge pages are commonly enabled for `madvise` only, so the allocator asks.
//
// Freed blocks are kept, within limits set at run time (memory/limits.h; defaults below), for
// the next allocation of that size: a fresh block costs a page fault and the kernel's
// clearing of every page on first touch, which for a bundle of 1M slots was a tenth of the
// local phase. A process that aggregates once per task (a Python worker) allocates the same
// sizes again at every bundle and task. With a limit of 0 every block goes back to free.
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

#include "memory/block_cache.h"

namespace sliceflow::memory {

// Blocks of 2 MB multiples, aligned to 2 MB, with a bounded cache of freed ones.
class HugeBlocks {
 public:
  static constexpr size_t kHuge = size_t{2} << 20;
  // Idle bytes and blocks the cache may hold in a process when nothing sets them; a block
  // freed beyond that goes back to the system. Enough for the arrays of a bundle of about 1M
  // slots (the window kernel's single-bundle aggregate() calls); Spark workers get 32 MiB
  // from sliceflow's Spark operators (sliceflow.memory.SPARK_WORKER_DEFAULTS).
  static constexpr size_t kDefaultMaxBytes = size_t{128} << 20;
  static constexpr size_t kDefaultMaxBlocks = 64;

  // The process-wide cache of freed blocks (limits, what it holds).
  static BlockCache& cache();

  static void* allocate(size_t bytes) {
    const size_t size = rounded(bytes);
    {
      BlockCache& c = cache();
      const std::lock_guard<std::mutex> lock(c.mutex);
      for (size_t i = 0; i < c.count(); ++i) {
        if (c[i].bytes == size) return c.remove(i).p;
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
  static void deallocate(void* p, size_t bytes) noexcept {
    const size_t size = rounded(bytes);
    BlockCache& c = cache();
    if (!c.off() && size <= c.max_bytes()) {
      const std::lock_guard<std::mutex> lock(c.mutex);
      while (!c.fits(size) && c.count() > 0) {
        size_t smallest = 0;
        for (size_t i = 1; i < c.count(); ++i) {
          if (c[i].bytes < c[smallest].bytes) smallest = i;
        }
        if (c[smallest].bytes >= size) break;
        std::free(c.remove(smallest).p);
      }
      if (c.add(p, size)) return;
    }
    std::free(p);
  }

 private:
  static size_t rounded(size_t bytes) { return (bytes + kHuge - 1) / kHuge * kHuge; }
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

}  // namespace sliceflow::memory
