// Huffman decoding tables for one bzip2 coding table.
//
// bzip2 codes are canonical: symbols sorted by code length, then by symbol. The reference decoder
// (libbz2) walks lengths upward comparing against `limit`; it accepts incomplete and even
// over-subscribed length sets and defines what they decode to. We keep exactly that definition
// (the same limit/base/perm arithmetic) so that we accept precisely what libbz2 accepts, and we
// make it fast with a lookup table on the first kLutBits bits that was filled by running that very
// definition: codes up to kLutBits bits resolve with one load, longer ones take the exact slow walk.
#pragma once

#include <cstdint>

namespace mibz2::bz2 {

inline constexpr int kMaxCodeLength = 20;    // format limit on a code length
inline constexpr int kMaxAlphabetSize = 258; // 256 MTF values + RUNA/RUNB - 1 + EOB
inline constexpr int kLutBits = 10;          // 1 KiB entries, 2 KiB a table: six tables fit L1

class HuffmanTable {
 public:
  // lengths[i] in 1..20 for each of alpha_size symbols (validated by the caller).
  void build(const uint8_t* lengths, int alpha_size);

  // Entry for the next kLutBits bits: symbol in bits 0..8, code length in bits 9..13, or
  // kLongCode when the code is longer than kLutBits (or invalid): call decode_slow then.
  static constexpr uint16_t kLongCode = 0;
  uint16_t lookup(uint64_t window) const { return lut_[window >> (64 - kLutBits)]; }
  static int entry_symbol(uint16_t e) { return e & 0x1FF; }
  static int entry_length(uint16_t e) { return e >> 9; }

  // The exact libbz2 walk over a 64-bit window holding at least 20 valid bits. Returns the symbol
  // and sets *length, or returns -1 if no code matches within 20 bits.
  int decode_slow(uint64_t window, int* length) const;

 private:
  uint16_t lut_[1 << kLutBits];
  int32_t limit_[kMaxCodeLength + 2];
  int32_t base_[kMaxCodeLength + 2];
  int32_t perm_[kMaxAlphabetSize];
  int32_t perm_count_ = 0;
  int min_len_ = 0;
  int max_len_ = 0;
};

}  // namespace mibz2::bz2
