// Line ends of NDJSON text as Spark's text reader finds them: \n, \r\n or a lone \r.
// find_line_break scans 16 bytes at a time for both \n and \r in one pass (memchr for \n
// would need a second pass to know whether the text holds any \r); the caller scans each line
// just before reading it, so the reader then finds the line in L1.
#pragma once

#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sliceflow::json {

// The first \n or \r in [p, end), or end.
inline const char* find_line_break(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i newline = _mm_set1_epi8('\n');
  const __m128i carriage_return = _mm_set1_epi8('\r');
  for (; end - p >= 16; p += 16) {
    const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const int mask = _mm_movemask_epi8(
        _mm_or_si128(_mm_cmpeq_epi8(chunk, newline), _mm_cmpeq_epi8(chunk, carriage_return)));
    if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
  }
#endif
  for (; p < end; ++p) {
    if (*p == '\n' || *p == '\r') return p;
  }
  return end;
}

// Past the line break at p (\r\n counts as one); p itself when p == end.
inline const char* skip_line_break(const char* p, const char* end) {
  if (p < end && *p == '\r') {
    ++p;
    if (p < end && *p == '\n') ++p;
  } else if (p < end) {
    ++p;
  }
  return p;
}

// How many lines [p, end) holds (a last line without a break counts).
inline int64_t count_lines(const char* p, const char* end) {
  int64_t n = 0;
  while (p < end) {
    p = skip_line_break(find_line_break(p, end), end);
    ++n;
  }
  return n;
}

}  // namespace sliceflow::json
