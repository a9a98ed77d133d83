#include "bz2/huffman.h"

#include <algorithm>
#include <iterator>

namespace mibz2::bz2 {

void HuffmanTable::build(const uint8_t* lengths, int alpha_size) {
  min_len_ = 32;
  max_len_ = 0;
  for (int i = 0; i < alpha_size; ++i) {
    min_len_ = std::min<int>(min_len_, lengths[i]);
    max_len_ = std::max<int>(max_len_, lengths[i]);
  }
  // perm: symbols ordered by (length, symbol).
  perm_count_ = 0;
  for (int len = min_len_; len <= max_len_; ++len)
    for (int s = 0; s < alpha_size; ++s)
      if (lengths[s] == len) perm_[perm_count_++] = s;

  // count[len] accumulated into base_ as in the canonical construction; limit_[len] is the largest
  // code value of that length, base_[len] maps a code value to its index in perm_.
  int32_t count_below[kMaxCodeLength + 2] = {};  // symbols with length < len
  for (int i = 0; i < alpha_size; ++i) count_below[lengths[i] + 1]++;
  for (int len = 1; len < kMaxCodeLength + 2; ++len) count_below[len] += count_below[len - 1];
  std::fill(std::begin(limit_), std::end(limit_), 0);
  std::copy(std::begin(count_below), std::end(count_below), std::begin(base_));
  int32_t vec = 0;
  for (int len = min_len_; len <= max_len_; ++len) {
    vec += count_below[len + 1] - count_below[len];
    limit_[len] = vec - 1;
    vec <<= 1;
  }
  for (int len = min_len_ + 1; len <= max_len_; ++len)
    base_[len] = ((limit_[len - 1] + 1) << 1) - count_below[len];

  // Fill the lookup table by running the exact walk on every kLutBits-bit prefix.
  for (uint32_t v = 0; v < (1u << kLutBits); ++v) {
    uint16_t entry = kLongCode;
    for (int len = min_len_; len <= std::min(max_len_, kLutBits); ++len) {
      const int32_t code = static_cast<int32_t>(v >> (kLutBits - len));
      if (code <= limit_[len]) {
        const int32_t index = code - base_[len];
        if (index >= 0 && index < perm_count_)
          entry = static_cast<uint16_t>(perm_[index] | (len << 9));
        break;
      }
    }
    lut_[v] = entry;
  }
}

int HuffmanTable::decode_slow(uint64_t window, int* length) const {
  for (int len = min_len_; len <= max_len_; ++len) {
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
