// The process-wide cache of large freed byte buffers (see buffer_pool.h).
#include "memory/buffer_pool.h"

#include <cstdlib>
#include <mutex>

namespace sliceflow::memory::buffer_pool {

BlockCache& cache() {
  static BlockCache instance(kDefaultMaxBlocks, kDefaultMaxBytes);
  return instance;
}

size_t round_up(size_t bytes) {
  if (bytes < kMinPooled) return bytes;
  size_t top = kMinPooled;
  while (top <= bytes / 2) top *= 2;
  const size_t step = top / 8;
  return (bytes + step - 1) / step * step;
}

uint8_t* take(size_t& capacity) {
  if (capacity < kMinPooled) return nullptr;
  BlockCache& p = cache();
  const std::lock_guard<std::mutex> lock(p.mutex);
  // The smallest that fits, and not more than twice as large (rather a fresh buffer than
  // a large one tied up by a small column).
  size_t best = p.count();
  for (size_t i = 0; i < p.count(); ++i) {
    const size_t c = p[i].bytes;
    if (c >= capacity && c / 2 <= capacity && (best == p.count() || c < p[best].bytes)) {
      best = i;
    }
  }
  if (best == p.count()) return nullptr;
  const BlockCache::Block found = p.remove(best);
  capacity = found.bytes;
  return static_cast<uint8_t*>(found.p);
}

void give(uint8_t* data, size_t capacity) noexcept {
  if (data == nullptr) return;
  BlockCache& p = cache();
  if (capacity >= kMinPooled && !p.off()) {
    const std::lock_guard<std::mutex> lock(p.mutex);
    if (p.add(data, capacity)) return;
  }
  std::free(data);
}

}  // namespace sliceflow::memory::buffer_pool
