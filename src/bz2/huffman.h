// Huffman decoding tables for one bzip2 coding table.
//
// bzip2 codes are canonical: symbols sorted by code length, then by symbol. The reference decoder
// (libbz2) walks lengths upward comparing against `limit`; it accepts incomplete and even
// over-subscribed length sets and defines what they decode to. We keep exactly that definition
// (the same limit/base/perm arithmetic) so that we accept precisely what libbz2 accepts, and we
// make it fast with a lookup table on the next kLutBits bits that was filled from that very
// definition: one load yields one symbol, or two when both codes fit in kLutBits bits; longer
// codes, invalid bit patterns and the end-of-block symbol take the exact slow walk.
#pragma once

#include <cstdint>

namespace mibz2::bz2 {

inline constexpr int kMaxCodeLength = 20;    // format limit on a code length
inline constexpr int kMaxAlphabetSize = 258; // 256 MTF values + RUNA/RUNB - 1 + EOB
// 2^10 entries of 4 bytes: 4 KiB a table, 24 KiB for six, which L1 (48 KiB here) holds beside
// the symbol batch (a block switches tables every 50 symbols). Measured against 11 bits (8 KiB a
// table, more pairs): in-process decode, sum of per-block minimum CPU times, 2-3 alternations:
// real JSON 0.750 -> 0.740 s, linux tar 1.153 -> 1.090 s; 12 bits was slower than 11.
inline constexpr int kLutBits = 10;

class HuffmanTable {
 public:
  // lengths[i] in 1..20 for each of alpha_size symbols (validated by the caller). The last symbol
  // (alpha_size - 1) is the end-of-block symbol.
  void build(const uint8_t* lengths, int alpha_size);

  // Entry for the next kLutBits bits:
  //   bits 0..5    length of both codes (the first code's length when the count is 1): in the
  //                low bits, so that the entry itself is the count of the 64-bit shift that
  //                consumes them (x86 takes a shift count modulo 64), one operation less on the
  //                chain lookup -> shift -> next lookup that bounds the decode
  //   bits 6..10   length of the first code
  //   bits 11..12  count: 1 or 2 symbols
  //   bits 13..21  first symbol
  //   bits 22..30  second symbol (when the count is 2)
  // 0 (kSlow): call decode_slow (a code longer than kLutBits, no code at all, or the end-of-block
  // symbol first). The end-of-block symbol is never a second symbol, so a fast entry never ends
  // the block.
  static constexpr uint32_t kSlow = 0;
  const uint32_t* lut() const { return lut_; }
  uint32_t lookup(uint64_t window) const { return lut_[window >> (64 - kLutBits)]; }
  static uint32_t entry_length(uint32_t e) { return e & 0x3F; }
  static uint32_t entry_length1(uint32_t e) { return (e >> 6) & 0x1F; }
  static uint32_t entry_count(uint32_t e) { return (e >> 11) & 0x3; }
  static uint32_t entry_symbol1(uint32_t e) { return (e >> 13) & 0x1FF; }
  static uint32_t entry_symbol2(uint32_t e) { return (e >> 22) & 0x1FF; }
  static constexpr uint32_t make_entry(uint32_t sym1, uint32_t len1, uint32_t sym2, uint32_t len, uint32_t count) {
    return len | (len1 << 6) | (count << 11) | (sym1 << 13) | (sym2 << 22);
  }

  // The exact libbz2 walk over a 64-bit window holding at least 20 valid bits (beginning beyond
  // kLutBits where no shorter code can match). Returns the symbol and sets *length, or returns -1
  // if no code matches within 20 bits.
  int decode_slow(uint64_t window, int* length) const;

 private:
  uint32_t lut_[1 << kLutBits];
  int32_t limit_[kMaxCodeLength + 2];
  int32_t base_[kMaxCodeLength + 2];
  int32_t perm_[kMaxAlphabetSize];
  int32_t perm_count_ = 0;
  int min_len_ = 0;
  int max_len_ = 0;
  // The kLutBits-bit prefixes from this one up are no code of kLutBits bits or fewer.
  uint64_t long_from_ = 0;
};

}  // namespace mibz2::bz2
