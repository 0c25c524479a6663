// The bookkeeping of a bounded cache of freed memory blocks, shared by arrow/buffer_pool and
// bundle/huge_pages: at most kMaxBlocks blocks and kMaxBytes bytes. Which block to take and
// which to give up are the caller's policy; the caller holds `mutex` around every call.
//
// Nothing to destroy but the mutex, so that a process-wide instance still works for memory
// freed late in Python's shutdown; what it holds at exit is left to the system.
#pragma once

#include <array>
#include <cstddef>
#include <mutex>

namespace sliceflow::arrow {

template <size_t kMaxBlocks, size_t kMaxBytes>
class BlockCache {
 public:
  struct Block {
    void* p;
    size_t bytes;
  };

  std::mutex mutex;

  size_t count() const { return count_; }
  size_t bytes() const { return bytes_; }
  const Block& operator[](size_t i) const { return blocks_[i]; }

  // Takes block i out (the last block moves into its place).
  Block remove(size_t i) {
    const Block b = blocks_[i];
    blocks_[i] = blocks_[--count_];
    bytes_ -= b.bytes;
    return b;
  }
  // Keeps the block when the cache has room for it; false (and nothing kept) when not.
  bool add(void* p, size_t bytes) {
    if (count_ == kMaxBlocks || bytes_ + bytes > kMaxBytes) return false;
    blocks_[count_++] = Block{p, bytes};
    bytes_ += bytes;
    return true;
  }

 private:
  std::array<Block, kMaxBlocks> blocks_{};
  size_t count_ = 0;
  size_t bytes_ = 0;
};

}  // namespace sliceflow::arrow
