#include "index/newline_count.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace mibz2::index {

// SSE2 (every x86-64 has it): 16 bytes compared at once, the matches (0xFF, that is -1) subtracted
// into 8-bit lane counters for at most 255 vectors before a lane could wrap, then summed by psadbw.
// std::count over bytes compiles to a loop that widens every match to 64 bits; this keeps the work
// per 16 bytes to one load, one compare and one subtract.
uint64_t count_newlines(const uint8_t* p, size_t n) {
  uint64_t total = 0;
#if defined(__SSE2__)
  const __m128i newline = _mm_set1_epi8('\n');
  const __m128i zero = _mm_setzero_si128();
  while (n >= 16) {
    const size_t vectors = std::min<size_t>(n / 16, 255);
    __m128i lanes = zero;
    for (size_t i = 0; i < vectors; ++i, p += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      lanes = _mm_sub_epi8(lanes, _mm_cmpeq_epi8(v, newline));
    }
    n -= vectors * 16;
    const __m128i sums = _mm_sad_epu8(lanes, zero);  // two 64-bit halves, each the sum of 8 lanes
    total += static_cast<uint64_t>(_mm_cvtsi128_si64(sums)) + static_cast<uint64_t>(_mm_extract_epi16(sums, 4));
  }
#endif
  for (; n; --n) total += *p++ == '\n';
  return total;
}

size_t after_nth_newline(const uint8_t* data, size_t size, uint64_t rank) {
  if (rank == 0) return 0;
  const uint8_t* p = data;
  const uint8_t* const end = data + size;
  while (p < end) {
    const void* hit = std::memchr(p, '\n', static_cast<size_t>(end - p));
    if (!hit) break;
    p = static_cast<const uint8_t*>(hit) + 1;
    if (--rank == 0) return static_cast<size_t>(p - data);
  }
  return SIZE_MAX;
}

}  // namespace mibz2::index
