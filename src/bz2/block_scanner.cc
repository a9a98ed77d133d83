#include "bz2/block_scanner.h"

#include <array>
#include <bit>

#include "bz2/bit_reader.h"

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
