// The run-time limits of the caches of freed memory, by name and from the environment (see
// limits.h).
#include "memory/limits.h"

#include <cstdlib>
#include <limits>
#include <mutex>
#include <stdexcept>

#include "memory/block_cache.h"
#include "memory/buffer_pool.h"
#include "memory/huge_pages.h"

namespace sliceflow::memory {
namespace {

BlockCache& cache_of(Cache cache) {
  return cache == Cache::kBuffers ? buffer_pool::cache() : HugeBlocks::cache();
}

std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

bool blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  return text;
}

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// The shift of a unit's multiple, or -1 when `unit` is not one.
int unit_shift(std::string_view unit) {
  std::string u;
  for (char c : unit) u.push_back(lower(c));
  if (u.empty() || u == "b") return 0;
  if (u == "k" || u == "kb") return 10;
  if (u == "m" || u == "mb") return 20;
  if (u == "g" || u == "gb") return 30;
  if (u == "t" || u == "tb") return 40;
  if (u == "p" || u == "pb") return 50;
  return -1;
}

// The leading digits of `text` as a number; `digits` gets how many there were. Throws on
// overflow.
size_t leading_number(std::string_view text, size_t& digits, std::string_view what) {
  size_t value = 0;
  digits = 0;
  constexpr size_t kMax = std::numeric_limits<size_t>::max();
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
    const auto d = static_cast<size_t>(text[digits] - '0');
    if (value > (kMax - d) / 10) {
      throw std::invalid_argument(std::string(what) + " = " + quoted(text) + ": too large");
    }
    value = value * 10 + d;
    ++digits;
  }
  return value;
}

void apply_env(Cache cache, const char* bytes_var, const char* blocks_var) {
  Limits l = limits(cache);
  bool any = false;
  if (const char* v = std::getenv(bytes_var); v != nullptr && *v != '\0') {
    l.bytes = parse_byte_size(v, bytes_var);
    any = true;
  }
  if (const char* v = std::getenv(blocks_var); v != nullptr && *v != '\0') {
    l.blocks = parse_count(v, blocks_var);
    any = true;
  }
  if (any) set_limits(cache, l);
}

}  // namespace

Cache cache_named(std::string_view name) {
  if (name == "buffers") return Cache::kBuffers;
  if (name == "huge_pages") return Cache::kHugePages;
  throw std::invalid_argument("no cache named " + quoted(name) +
                              " (the caches are 'buffers' and 'huge_pages')");
}

size_t max_blocks_limit() { return BlockCache::kCapacity; }

Limits limits(Cache cache) {
  const BlockCache& c = cache_of(cache);
  return Limits{c.max_blocks(), c.max_bytes()};
}

Limits default_limits(Cache cache) {
  if (cache == Cache::kBuffers) {
    return Limits{buffer_pool::kDefaultMaxBlocks, buffer_pool::kDefaultMaxBytes};
  }
  return Limits{HugeBlocks::kDefaultMaxBlocks, HugeBlocks::kDefaultMaxBytes};
}

size_t set_limits(Cache cache, Limits l) {
  if (l.blocks > max_blocks_limit()) {
    throw std::invalid_argument("a cache keeps at most " + std::to_string(max_blocks_limit()) +
                                " blocks, not " + std::to_string(l.blocks));
  }
  BlockCache& c = cache_of(cache);
  const std::lock_guard<std::mutex> lock(c.mutex);
  return c.set_limits(l.blocks, l.bytes);
}

Held held(Cache cache) {
  BlockCache& c = cache_of(cache);
  const std::lock_guard<std::mutex> lock(c.mutex);
  return Held{c.count(), c.bytes()};
}

size_t release(Cache cache) {
  BlockCache& c = cache_of(cache);
  const std::lock_guard<std::mutex> lock(c.mutex);
  return c.release();
}

size_t parse_byte_size(std::string_view text, std::string_view what) {
  const std::string_view t = trimmed(text);
  size_t digits = 0;
  const size_t value = leading_number(t, digits, what);
  const std::string_view unit = t.substr(digits);
  const int shift = unit_shift(unit);
  if (digits == 0 || shift < 0) {
    const std::string hint =
        !unit.empty() && unit.front() == '.'
            ? " (fractional values are not supported)"
            : " (a byte size: a whole number with an optional unit b, k, m, g, "
              "t, p, e.g. '64m')";
    throw std::invalid_argument(std::string(what) + " = " + quoted(text) + ": not a byte size" +
                                hint);
  }
  if (shift > 0 && value > (std::numeric_limits<size_t>::max() >> shift)) {
    throw std::invalid_argument(std::string(what) + " = " + quoted(text) + ": too large");
  }
  return value << shift;
}

size_t parse_count(std::string_view text, std::string_view what) {
  const std::string_view t = trimmed(text);
  size_t digits = 0;
  const size_t value = leading_number(t, digits, what);
  if (digits == 0 || digits != t.size()) {
    throw std::invalid_argument(std::string(what) + " = " + quoted(text) +
                                ": not a count (a whole number >= 0)");
  }
  if (value > max_blocks_limit()) {
    throw std::invalid_argument(std::string(what) + " = " + quoted(text) + ": at most " +
                                std::to_string(max_blocks_limit()) + " blocks");
  }
  return value;
}

void apply_environment() {
  apply_env(Cache::kBuffers, kBufferCacheBytesEnv, kBufferCacheBlocksEnv);
  apply_env(Cache::kHugePages, kHugePageCacheBytesEnv, kHugePageCacheBlocksEnv);
}

}  // namespace sliceflow::memory
