// An allocator for the bundle's per-slot arrays: large ones are placed on 2 MB pages.
//
// A bundle's arrays are read and written at random slots (rows fold into their slot, a flush
// gathers slots key by key); with 4 KB pages nearly every such access of an array of many
// MB also misses the TLB, and filling the array takes a page fault per 4 KB. The machine's
// transparent huge pages are commonly enabled for `madvise` only, so the allocator asks.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace sliceflow::bundle {

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
    const size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
    void* p = std::aligned_alloc(kHuge, rounded);
    if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__)
    madvise(p, rounded, MADV_HUGEPAGE);  // a hint: without it the pages are 4 KB, no error
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n * sizeof(T) < kHuge) {
      std::allocator<T>().deallocate(p, n);
    } else {
      std::free(p);
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
  static constexpr size_t kHuge = size_t{2} << 20;
  static constexpr size_t kMaxBytes = ~size_t{0} - kHuge;
};

// A vector whose storage, once it reaches 2 MB, lies on huge pages.
template <typename T>
using HugeVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace sliceflow::bundle
