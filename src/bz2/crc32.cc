#include "bz2/crc32.h"

#include <array>
#include <cstring>

#include <isa-l/crc.h>

#include "bz2/cpu_features.h"

namespace mibz2::bz2 {
namespace {

// kTables[k][b]: the CRC contribution of byte b followed by k zero bytes.
using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables make_tables() {
  Tables t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b << 24;
    for (int i = 0; i < 8; ++i) c = (c & 0x80000000u) ? (c << 1) ^ 0x04C11DB7u : (c << 1);
    t[0][b] = c;
  }
  for (int k = 1; k < 8; ++k)
    for (uint32_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] << 8) ^ t[0][t[k - 1][b] >> 24];
  return t;
}

constexpr Tables kTables = make_tables();

}  // namespace

uint32_t Crc32::crc32_update(uint32_t state, const uint8_t* p, size_t n) {
  // crc32_ieee(seed, ...) starts from ~seed and returns the inverted state: the same CRC with the
  // inversions on the other side of the call.
  if (n == 0) return state;
  const uint32_t crc = ~crc32_ieee(~state, p, n);
#if MIBZ2_HAVE_X86_PATHS
  // ISA-L's AVX-512 folding returns with the upper halves of the vector registers dirty; the SSE
  // code compiled for baseline x86-64 that runs next then pays a merge on every instruction that
  // writes an xmm register (measured: mibz2 cat -j 1 20% slower overall, memmove 1% -> 10%).
  if (cpu_features().avx) __asm__ volatile("vzeroupper" ::: "memory");
#endif
  return crc;
}

uint32_t Crc32::crc32_update_portable(uint32_t crc, const uint8_t* p, size_t n) {
  while (n >= 8) {
    uint32_t hi, lo;
    std::memcpy(&hi, p, 4);
    std::memcpy(&lo, p + 4, 4);
    hi = __builtin_bswap32(hi) ^ crc;
    lo = __builtin_bswap32(lo);
    crc = kTables[7][hi >> 24] ^ kTables[6][(hi >> 16) & 0xFF] ^ kTables[5][(hi >> 8) & 0xFF] ^
          kTables[4][hi & 0xFF] ^ kTables[3][lo >> 24] ^ kTables[2][(lo >> 16) & 0xFF] ^
          kTables[1][(lo >> 8) & 0xFF] ^ kTables[0][lo & 0xFF];
    p += 8;
    n -= 8;
  }
  while (n--) crc = (crc << 8) ^ kTables[0][(crc >> 24) ^ *p++];
  return crc;
}

}  // namespace mibz2::bz2
