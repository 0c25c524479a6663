// A small process-wide cache of large buffers. Output buffers of a decoded batch go to Python
// and come back when it releases them; keeping them for the next batch spares the kernel
// mapping and zero-filling fresh pages for every batch (glibc returns freed blocks of this
// size to the system), which is about a tenth of decoding a 100 MB batch.
//
// What it may hold is bounded by limits set at run time (memory/limits.h: environment,
// Spark conf, sliceflow.memory); with a limit of 0 every buffer goes back to malloc's free.
#pragma once

#include <cstddef>
#include <cstdint>

#include "memory/block_cache.h"

namespace sliceflow::memory::buffer_pool {

// Limits of a process when nothing sets them: the outputs of a ~100 MB decode in one call
// (a one-process user of sliceflow.json). sliceflow's Spark operators set Spark workers to
// 32 MiB before their first kernel call (sliceflow.memory.SPARK_WORKER_DEFAULTS), since an
// executor runs one worker per core. bench/bench_memory.py and docs/memory.md have the
// measurements.
constexpr size_t kDefaultMaxBlocks = 64;
constexpr size_t kDefaultMaxBytes = size_t{128} << 20;

// The process-wide cache (limits, what it holds); callers other than take/give lock its mutex.
BlockCache& cache();

// Buffers smaller than this go straight to malloc and free. Small enough for the columns of
// the 10,000-row batches Spark hands to from_json (a 500 KB string column went to mmap and
// was faulted in afresh every batch: a fifth of decoding the batch).
constexpr size_t kMinPooled = size_t{1} << 16;

// The capacity to allocate for `bytes` (>= bytes): large requests are rounded up to one of
// eight sizes per power of two, so that batches of similar shape ask for the same sizes.
size_t round_up(size_t bytes);

// A cached buffer of at least `capacity` bytes (its exact capacity in `capacity`), or nullptr.
uint8_t* take(size_t& capacity);

// Hands a buffer of `capacity` bytes (from malloc, realloc or take) back; it is kept for
// reuse while the cache has room, else freed.
void give(uint8_t* p, size_t capacity) noexcept;

}  // namespace sliceflow::memory::buffer_pool
