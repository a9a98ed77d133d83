// The RLE1 loop of RunLengthDecoder::feed, included by run_length.cc once per instruction set with
//   MIBZ2_RLE_NS, MIBZ2_RLE_TARGET (function attributes), MIBZ2_RLE_AVX2 (0 or 1).
//
// A count byte can only follow four equal bytes after the last count byte. The fast loop looks at
// kStep positions at a time: a mask of the windows p[k..k+3] that are all equal, for the windows
// ending in the next kStep bytes (k >= the first byte after the last count byte). No window: the
// kStep bytes are copied as they are. A window: the bytes up to its end are copied, the count byte
// expanded, and the loop goes on after it. Near the end of a piece (and for its first 3 bytes,
// which would need bytes of the previous piece) the byte-at-a-time state machine runs.

namespace MIBZ2_RLE_NS {

#if MIBZ2_RLE_AVX2
constexpr size_t kStep = 32;
// Bit t: p[t..t+3] all equal, for t in 0..31 (reads p[0..34]).
MIBZ2_RLE_TARGET inline uint32_t run_windows(const uint8_t* p) {
  const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 1));
  const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2));
  const __m256i d = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 3));
  const __m256i eq = _mm256_and_si256(_mm256_and_si256(_mm256_cmpeq_epi8(a, b), _mm256_cmpeq_epi8(b, c)),
                                      _mm256_cmpeq_epi8(c, d));
  return static_cast<uint32_t>(_mm256_movemask_epi8(eq));
}
MIBZ2_RLE_TARGET inline void copy_step(uint8_t* o, const uint8_t* p) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(o), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
// Writes `count` copies of b, and up to 31 bytes more (the output has room for them).
MIBZ2_RLE_TARGET inline void fill(uint8_t* o, uint8_t b, uint32_t count) {
  const __m256i v = _mm256_set1_epi8(static_cast<char>(b));
  for (uint32_t k = 0; k < count; k += 32) _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + k), v);
}
#else
constexpr size_t kStep = 8;
inline uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
// Nonzero when some p[t..t+3], t in 0..7, is all equal (reads p[0..10]); the lowest set bit then
// marks the first such t (bit 8t+7). SWAR: a byte of x is zero where the window is equal.
inline uint64_t run_windows(const uint8_t* p) {
  uint64_t a = load64(p), b = load64(p + 1), c = load64(p + 2), d = load64(p + 3);
  if constexpr (std::endian::native == std::endian::big) {
    a = __builtin_bswap64(a), b = __builtin_bswap64(b), c = __builtin_bswap64(c), d = __builtin_bswap64(d);
  }
  const uint64_t x = (a ^ b) | (b ^ c) | (c ^ d);
  // Exact per byte (no borrow between bytes): high bit of each byte set iff the byte is zero.
  constexpr uint64_t kLow7 = 0x7F7F7F7F7F7F7F7Full;
  return ~(((x & kLow7) + kLow7) | x | kLow7);
}
inline void copy_step(uint8_t* o, const uint8_t* p) { std::memcpy(o, p, 8); }
inline void fill(uint8_t* o, uint8_t b, uint32_t count) { std::memset(o, b, count); }
#endif

// First window's offset from a nonzero mask.
inline uint32_t first_window(uint64_t mask) {
#if MIBZ2_RLE_AVX2
  return static_cast<uint32_t>(__builtin_ctzll(mask));
#else
  return static_cast<uint32_t>(__builtin_ctzll(mask)) / 8;
#endif
}

// Appends the RLE1 decoding of data[0..size) to o (room for worst_output(size) in run_length.cc), with
// the run state carried in *last / *run. Returns the new end of the output.
MIBZ2_RLE_TARGET uint8_t* decode(const uint8_t* data, size_t size, uint8_t* o, int* last_io, int* run_io) {
  const uint8_t* p = data;
  const uint8_t* const end = data + size;
  int last = *last_io;
  int run = *run_io;
  // The byte machine for one byte.
  auto step = [&](uint8_t b) {
    if (run == 4) {
      std::memset(o, last, b);
      o += b;
      run = 0;
      last = -1;
      return;
    }
    *o++ = b;
    if (b == last) {
      ++run;
    } else {
      last = b;
      run = 1;
    }
  };
  // The first 3 bytes (windows reaching back into the previous piece) one at a time.
  while (p < end && p < data + 3) step(*p++);

  // Fast loop: fresh is the first byte after the last count byte. Windows are checked from
  // max(p - 3, fresh); a window that started before this piece (run == 4 here) is the machine's.
  if (run != 4 && end - p > static_cast<ptrdiff_t>(kStep + 1)) {
    const uint8_t* fresh = p - std::min(run, 3);  // the run carried so far is post-count
    if (last < 0) fresh = p;
    while (end - p > static_cast<ptrdiff_t>(kStep + 1)) {
      const uint8_t* const w = p - 3;  // window t starts at w + t and ends at p + t
      auto mask = run_windows(w);
      if (fresh > w) {
        const size_t skip = static_cast<size_t>(fresh - w);  // 1..3
#if MIBZ2_RLE_AVX2
        mask &= ~((1u << skip) - 1);
#else
        mask &= ~0ull << (8 * skip);
#endif
      }
      if (!mask) [[likely]] {
        copy_step(o, p);
        o += kStep;
        p += kStep;
        continue;
      }
      // Copy through the window's last byte, then the count byte (end - p > kStep + 1 keeps it
      // inside this piece).
      const uint8_t* const run_end = w + first_window(mask) + 4;
      copy_step(o, p);  // run_end - p <= kStep
      o += run_end - p;
      const uint8_t count = *run_end;
      fill(o, run_end[-1], count);
      o += count;
      p = run_end + 1;
      fresh = p;
    }
    // State for the byte machine: the run of equal bytes ending at p - 1, since fresh (< 4).
    if (p == fresh) {
      last = -1;
      run = 0;
    } else {
      last = p[-1];
      run = 1;
      while (run < 3 && p - run - 1 >= fresh && p[-run - 1] == last) ++run;
    }
  }
  while (p < end) step(*p++);
  *last_io = last;
  *run_io = run;
  return o;
}

}  // namespace MIBZ2_RLE_NS
