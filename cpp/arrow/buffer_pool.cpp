#include "arrow/buffer_pool.h"

#include <cstdlib>
#include <mutex>

#include "arrow/block_cache.h"

namespace sliceflow::arrow::buffer_pool {
namespace {

// Enough for the buffers of a few 100 MB batches; beyond that memory goes back to malloc.
using Pool = BlockCache<64, size_t{512} << 20>;

Pool& pool() {
  static Pool instance;
  return instance;
}

}  // namespace

size_t round_up(size_t bytes) {
  if (bytes < kMinPooled) return bytes;
  size_t top = kMinPooled;
  while (top <= bytes / 2) top *= 2;
  const size_t step = top / 8;
  return (bytes + step - 1) / step * step;
}

uint8_t* take(size_t& capacity) {
  if (capacity < kMinPooled) return nullptr;
  Pool& p = pool();
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
  const Pool::Block found = p.remove(best);
  capacity = found.bytes;
  return static_cast<uint8_t*>(found.p);
}

void give(uint8_t* data, size_t capacity) noexcept {
  if (data == nullptr) return;
  if (capacity >= kMinPooled) {
    Pool& p = pool();
    const std::lock_guard<std::mutex> lock(p.mutex);
    if (p.add(data, capacity)) return;
  }
  std::free(data);
}

}  // namespace sliceflow::arrow::buffer_pool
