#include "bz2/block_scanner.h"

#include <array>
#include <bit>

#include "bz2/bit_reader.h"
#include "bz2/cpu_dispatch.h"

#if MIBZ2_HAVE_X86_PATHS
#include <immintrin.h>
#endif

namespace mibz2::bz2 {
namespace {

// A pattern starting k bits into byte p fully covers bytes p+1 and p+2 for every k in 0..7, and
// those 16 bits are pattern bits [8-k, 24-k). So a 16-bit window over bytes (q, q+1) can only start
// a mark at byte q-1 if it is one of 16 values (8 shifts x 2 patterns): a 65536-bit filter (8 KiB,
// it stays in L1) rejects all other positions with one lookup per byte.
struct Filter {
  std::array<uint64_t, 1024> bits{};
  constexpr bool test(uint32_t key) const { return (bits[key >> 6] >> (key & 63)) & 1; }
  constexpr void set(uint32_t key) { bits[key >> 6] |= uint64_t{1} << (key & 63); }
};

constexpr uint32_t window16(uint64_t magic, unsigned k) {
  // bits [8-k, 24-k) of the 48-bit pattern, counted from its most significant bit
  return static_cast<uint32_t>((magic >> (48 - (24 - k))) & 0xFFFF);
}

constexpr Filter make_filter() {
  Filter f{};
  for (unsigned k = 0; k < 8; ++k) {
    f.set(window16(kBlockMagic, k));
    f.set(window16(kEndOfStreamMagic, k));
  }
  return f;
}

constexpr Filter kFilter = make_filter();

#if MIBZ2_HAVE_X86_PATHS
// The vector filter looks at three bytes instead of two (fewer false alarms) and 32 positions at
// once, with a nibble table per byte as in Hyperscan's "shufti": a mark starting k bits into byte
// p fixes bytes p+1..p+3 (pattern bytes shifted by k). Bit k of lo[j][n] says that byte j of some
// pattern shifted by k has the low nibble n, and hi[j][n] the same of the high nibble; a byte at
// q + j passes bit k when both nibbles do. A position whose three bytes share a bit may start a
// mark at byte q - 1 (or be a false alarm: nibbles of different patterns); check() decides.
// Scanning the 23 MB of 130 MB of real JSON (bzip2 -9) in 1 MiB pieces: 22.8 GB/s against
// 2.3 GB/s for the 16-bit filter alone, which was 2% of `mibz2 cat -j 2`'s time on it.
struct NibbleTables {
  std::array<std::array<uint8_t, 16>, 3> lo{};
  std::array<std::array<uint8_t, 16>, 3> hi{};
};

constexpr uint8_t pattern_byte(uint64_t magic, unsigned j, unsigned k) {
  // bits [8j + 8 - k, 8j + 16 - k) of the 48-bit pattern, j = 0 for byte p + 1
  return static_cast<uint8_t>(magic >> (32 - 8 * j + k));
}

constexpr NibbleTables make_nibble_tables() {
  NibbleTables t;
  for (unsigned j = 0; j < 3; ++j)
    for (unsigned k = 0; k < 8; ++k)
      for (uint64_t magic : {kBlockMagic, kEndOfStreamMagic}) {
        const uint8_t b = pattern_byte(magic, j, k);
        t.lo[j][b & 15] |= static_cast<uint8_t>(1u << k);
        t.hi[j][b >> 4] |= static_cast<uint8_t>(1u << k);
      }
  return t;
}

constexpr NibbleTables kNibbles = make_nibble_tables();

__attribute__((target("avx2"))) inline __m256i nibble_table(const std::array<uint8_t, 16>& t) {
  return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t.data())));
}

// Calls check(q) for each position q from `q` on, 32 at a time while q + 32 <= q_end and the
// loads stay inside `size`, whose three bytes pass the filter; returns where it stopped.
template <class Check>
__attribute__((target("avx2"))) uint64_t filter_avx2(const uint8_t* d, uint64_t q, uint64_t q_end, uint64_t size,
                                                     Check&& check) {
  __m256i lo[3];
  __m256i hi[3];
  for (int j = 0; j < 3; ++j) {
    lo[j] = nibble_table(kNibbles.lo[j]);
    hi[j] = nibble_table(kNibbles.hi[j]);
  }
  const __m256i low_nibble = _mm256_set1_epi8(0x0F);
  for (; q + 32 <= q_end && q + 34 <= size; q += 32) {
    __m256i all = _mm256_set1_epi8(-1);
    for (int j = 0; j < 3; ++j) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(d + q + j));
      const __m256i l = _mm256_shuffle_epi8(lo[j], _mm256_and_si256(v, low_nibble));
      const __m256i h = _mm256_shuffle_epi8(hi[j], _mm256_and_si256(_mm256_srli_epi16(v, 4), low_nibble));
      all = _mm256_and_si256(all, _mm256_and_si256(l, h));
    }
    uint32_t hits = ~static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(all, _mm256_setzero_si256())));
    for (; hits; hits &= hits - 1) [[unlikely]]
      check(q + static_cast<unsigned>(std::countr_zero(hits)));
  }
  return q;
}
#endif

}  // namespace

uint64_t read48_at(std::span<const uint8_t> data, uint64_t bit) {
  const uint64_t p = bit / 8;
  const unsigned k = bit % 8;
  if (bit + 48 > data.size() * uint64_t{8}) return ~uint64_t{0};
  if (p + 8 <= data.size()) return (load_be64(data.data() + p) << k) >> 16;
  uint64_t w = 0;
  for (uint64_t i = 0; i < 8; ++i) w = (w << 8) | (p + i < data.size() ? data[p + i] : 0);
  return (w << k) >> 16;
}

void scan_marks(std::span<const uint8_t> data, uint64_t from_bit, uint64_t to_bit,
                std::vector<Mark>& out) {
  const uint64_t size = data.size();
  if (to_bit > size * 8) to_bit = size * 8;
  if (from_bit >= to_bit || size < 6) return;
  const uint8_t* d = data.data();
  // Candidate start byte p is checked through the window at q = p + 1.
  const uint64_t p_first = from_bit / 8;
  const uint64_t p_last = (to_bit - 1) / 8;  // inclusive
  const uint64_t q_end = std::min(p_last + 1, size - 2) + 1;  // exclusive; window needs q+1 < size

  auto check = [&](uint64_t q) {
    const uint64_t p = q - 1;
    for (unsigned k = 0; k < 8; ++k) {
      const uint64_t bit = p * 8 + k;
      if (bit < from_bit || bit >= to_bit) continue;
      const uint64_t v = read48_at(data, bit);
      if (v == kBlockMagic) out.push_back({bit, MarkKind::kBlock});
      else if (v == kEndOfStreamMagic) out.push_back({bit, MarkKind::kEndOfStream});
    }
  };

  uint64_t q = p_first + 1;
#if MIBZ2_HAVE_X86_PATHS
  if (isa() >= Isa::kAvx2) q = filter_avx2(d, q, q_end, size, check);
#endif
  // Main loop: one 64-bit load yields seven 16-bit windows.
  while (q + 8 <= q_end && q + 8 <= size) {
    const uint64_t w = load_be64(d + q);
    unsigned hits = 0;
    for (unsigned i = 0; i < 7; ++i) hits |= kFilter.test(static_cast<uint32_t>((w >> (48 - 8 * i)) & 0xFFFF)) << i;
    if (hits) [[unlikely]] {
      for (unsigned i = 0; i < 7; ++i)
        if (hits & (1u << i)) check(q + i);
    }
    q += 7;
  }
  for (; q < q_end; ++q) {
    const uint32_t key = (uint32_t{d[q]} << 8) | d[q + 1];
    if (kFilter.test(key)) check(q);
  }
}

}  // namespace mibz2::bz2
