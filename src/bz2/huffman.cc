#include "bz2/huffman.h"

#include <algorithm>
#include <iterator>

namespace mibz2::bz2 {

void HuffmanTable::build(const uint8_t* lengths, int alpha_size) {
  // Symbols per length, and perm: symbols ordered by (length, symbol) (a counting sort).
  int32_t per_length[kMaxCodeLength + 2] = {};
  for (int i = 0; i < alpha_size; ++i) per_length[lengths[i]]++;
  min_len_ = 1;
  while (per_length[min_len_] == 0) ++min_len_;
  max_len_ = kMaxCodeLength;
  while (per_length[max_len_] == 0) --max_len_;
  int32_t slot[kMaxCodeLength + 2];
  int32_t count_below[kMaxCodeLength + 2] = {};  // symbols with length < len
  for (int len = 1; len < kMaxCodeLength + 2; ++len) count_below[len] = count_below[len - 1] + per_length[len - 1];
  std::copy(std::begin(count_below), std::end(count_below), std::begin(slot));
  for (int s = 0; s < alpha_size; ++s) perm_[slot[lengths[s]]++] = s;
  perm_count_ = alpha_size;

  // libbz2's construction: limit_[len] is the largest code value of that length, base_[len] maps a
  // code value to its index in perm_.
  std::fill(std::begin(limit_), std::end(limit_), 0);
  std::copy(std::begin(count_below), std::end(count_below), std::begin(base_));
  int32_t vec = 0;
  for (int len = min_len_; len <= max_len_; ++len) {
    vec += per_length[len];
    limit_[len] = vec - 1;
    vec <<= 1;
  }
  for (int len = min_len_ + 1; len <= max_len_; ++len)
    base_[len] = ((limit_[len - 1] + 1) << 1) - count_below[len];

  // One symbol per kLutBits-bit prefix v, as the walk decides it: the walk stops at the first
  // length whose code (v's top len bits) is <= limit_[len], i.e. v < (limit_[len] + 1) << (kLutBits
  // - len). Sweeping v upward, each length claims the prefixes below its bound that no shorter
  // length claimed (bounds of over-subscribed sets need not grow with the length).
  constexpr uint32_t kEntries = 1u << kLutBits;
  constexpr uint16_t kNone = 0xFFFF;
  uint16_t single[kEntries];  // symbol | length << 9, or kNone: no code within kLutBits bits
  uint32_t v = 0;
  for (int len = min_len_; len <= std::min(max_len_, kLutBits); ++len) {
    const int64_t bound = std::min<int64_t>(int64_t{limit_[len] + 1} << (kLutBits - len), kEntries);
    for (; v < bound; ++v) {
      const int32_t index = static_cast<int32_t>(v >> (kLutBits - len)) - base_[len];
      single[v] = index >= 0 && index < perm_count_ ? static_cast<uint16_t>(perm_[index] | (len << 9)) : kNone;
    }
  }
  // The walk fails at every length up to kLutBits for the prefixes no such length claimed:
  // decode_slow starts beyond them there (real JSON: 1.9% of a decode walked them one by one).
  long_from_ = v;
  for (; v < kEntries; ++v) single[v] = kNone;

  // Pairs: the bits after the first code are the prefix of the next one; its entry is exact when
  // its code fits in what is left of the kLutBits bits.
  const uint32_t end_of_block = static_cast<uint32_t>(alpha_size - 1);
  for (v = 0; v < kEntries; ++v) {
    const uint16_t first = single[v];
    const uint32_t sym1 = first & 0x1FF;
    if (first == kNone || sym1 == end_of_block) {
      lut_[v] = kSlow;
      continue;
    }
    const uint32_t len1 = first >> 9;
    uint32_t e = make_entry(sym1, len1, 0, len1, 1);
    if (len1 < static_cast<uint32_t>(kLutBits)) {
      const uint16_t second = single[(v << len1) & (kEntries - 1)];
      const uint32_t sym2 = second & 0x1FF;
      const uint32_t len2 = second >> 9;
      if (second != kNone && sym2 != end_of_block && len1 + len2 <= static_cast<uint32_t>(kLutBits))
        e = make_entry(sym1, len1, sym2, len1 + len2, 2);
    }
    lut_[v] = e;
  }
}

int HuffmanTable::decode_slow(uint64_t window, int* length) const {
  const bool long_code = (window >> (64 - kLutBits)) >= long_from_;
  for (int len = long_code ? std::max(min_len_, kLutBits + 1) : min_len_; len <= max_len_; ++len) {
    const int32_t code = static_cast<int32_t>(window >> (64 - len));
    if (code <= limit_[len]) {
      const int32_t index = code - base_[len];
      if (index < 0 || index >= perm_count_) return -1;
      *length = len;
      return perm_[index];
    }
  }
  return -1;
}

}  // namespace mibz2::bz2
