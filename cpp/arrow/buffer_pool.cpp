#include "arrow/buffer_pool.h"

#include <array>
#include <cstdlib>
#include <mutex>

namespace sliceflow::arrow::buffer_pool {
namespace {

// Enough for the buffers of a few 100 MB batches; beyond that memory goes back to malloc.
constexpr size_t kMaxBytes = size_t{512} << 20;
constexpr size_t kMaxBuffers = 64;

struct Cached {
  uint8_t* data;
  size_t capacity;
};

// Nothing to destroy but the mutex, so that buffers Python releases late in its shutdown
// still find it; what the pool holds at exit is left to the system.
struct Pool {
  std::mutex mutex;
  std::array<Cached, kMaxBuffers> buffers{};
  size_t count = 0;
  size_t bytes = 0;
};

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
  size_t best = p.count;
  for (size_t i = 0; i < p.count; ++i) {
    const size_t c = p.buffers[i].capacity;
    if (c >= capacity && c / 2 <= capacity && (best == p.count || c < p.buffers[best].capacity)) {
      best = i;
    }
  }
  if (best == p.count) return nullptr;
  const Cached found = p.buffers[best];
  p.buffers[best] = p.buffers[--p.count];
  p.bytes -= found.capacity;
  capacity = found.capacity;
  return found.data;
}

void give(uint8_t* data, size_t capacity) noexcept {
  if (data == nullptr) return;
  if (capacity >= kMinPooled) {
    Pool& p = pool();
    const std::lock_guard<std::mutex> lock(p.mutex);
    if (p.count < kMaxBuffers && p.bytes + capacity <= kMaxBytes) {
      p.buffers[p.count++] = {data, capacity};
      p.bytes += capacity;
      return;
    }
  }
  std::free(data);
}

}  // namespace sliceflow::arrow::buffer_pool
