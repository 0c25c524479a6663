// The run-time limits of the process-wide caches of freed memory, which live beside it in
// cpp/memory/: the byte buffer cache (buffer_pool.h: Arrow output columns of the JSON, window
// and changelog kernels, bundle buffers) and the huge-page block cache (huge_pages.h), both
// kept by block_cache.h's BlockCache.
//
// Each cache keeps at most `blocks` freed blocks and `bytes` bytes; 0 in either keeps
// nothing. Limits come, in this order of precedence, from a set_limits call (sliceflow.memory,
// the Spark conf applied in each Python worker), from the environment when the module loads
// (apply_environment), else from the defaults in buffer_pool.h / huge_pages.h. Lowering a
// limit frees at once what no longer fits.
//
// Nothing here is on a hot path: every call takes the cache's mutex.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sliceflow::memory {

enum class Cache { kBuffers, kHugePages };

// "buffers" or "huge_pages"; throws std::invalid_argument for any other name.
Cache cache_named(std::string_view name);

struct Limits {
  size_t blocks;
  size_t bytes;
};

struct Held {
  size_t blocks;
  size_t bytes;
};

// The most blocks a limit may name (the caches' fixed storage).
size_t max_blocks_limit();

Limits limits(Cache cache);
Limits default_limits(Cache cache);
// Throws std::invalid_argument when blocks exceeds max_blocks_limit(). Returns the bytes freed.
size_t set_limits(Cache cache, Limits limits);
Held held(Cache cache);
// Frees what the cache holds (its limits stay); returns the bytes freed.
size_t release(Cache cache);

// Spark's byte strings (JavaUtils.byteStringAsBytes): a non-negative integer with an optional
// unit b, k/kb, m/mb, g/gb, t/tb, p/pb (binary multiples, any case, surrounding blanks
// ignored); a bare number is bytes. Throws std::invalid_argument naming `what` and the text.
size_t parse_byte_size(std::string_view text, std::string_view what);
// A non-negative integer count; throws std::invalid_argument naming `what` and the text.
size_t parse_count(std::string_view text, std::string_view what);

// The environment variables read by apply_environment, for messages and docs.
inline constexpr const char* kBufferCacheBytesEnv = "SLICEFLOW_BUFFER_CACHE_BYTES";
inline constexpr const char* kBufferCacheBlocksEnv = "SLICEFLOW_BUFFER_CACHE_BLOCKS";
inline constexpr const char* kHugePageCacheBytesEnv = "SLICEFLOW_HUGE_PAGE_CACHE_BYTES";
inline constexpr const char* kHugePageCacheBlocksEnv = "SLICEFLOW_HUGE_PAGE_CACHE_BLOCKS";

// Sets the limits named by those variables that are set (and not empty); throws
// std::invalid_argument naming the variable when a value is not a size / count. Run once when
// the Python module loads, before any kernel can allocate.
void apply_environment();

}  // namespace sliceflow::memory
