// MSB-first bit reader over an in-memory byte range, as bzip2 stores its bits.
//
// The next unread bit is bit 63 of `buf_`; `count_` bits are valid. A refill tops the buffer up to
// at least 56 bits with one unaligned 64-bit load while 8 bytes remain (the branch-free refill of
// libdeflate, mirrored for MSB-first order), and byte by byte near the end. Past the end it shifts
// in zero bits; `overrun()` tells the caller the input was truncated, so no read is ever out of
// bounds and a truncated block is reported instead of being decoded from invented bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace mibz2::bz2 {

inline uint64_t load_be64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return __builtin_bswap64(v);
}

class BitReader {
 public:
  // Reads `data` starting `start_bit` bits into it.
  BitReader(std::span<const uint8_t> data, uint64_t start_bit) : data_(data.data()), size_(data.size()) {
    seek(start_bit);
  }

  // Moves to an absolute bit position (relative to the start of the data).
  void seek(uint64_t bit) {
    pos_ = bit / 8;
    buf_ = 0;
    count_ = 0;
    refill();
    consume(static_cast<unsigned>(bit % 8));
  }

  // Guarantees at least 56 valid bits.
  inline void refill() {
    if (pos_ + 8 <= size_) [[likely]] {
      buf_ |= load_be64(data_ + pos_) >> count_;
      pos_ += (63 - count_) >> 3;
      count_ |= 56;
    } else {
      refill_slow();
    }
  }

  // The next n bits (1..32) without consuming them; requires count() >= n.
  inline uint32_t peek(unsigned n) const { return static_cast<uint32_t>(buf_ >> (64 - n)); }
  // The buffered bits as they stand, next bit at bit 63 (for table lookups of variable width).
  inline uint64_t window() const { return buf_; }
  inline void consume(unsigned n) {
    buf_ <<= n;
    count_ -= n;
  }
  inline unsigned count() const { return count_; }

  // Reads n bits (1..32), refilling as needed.
  inline uint32_t read(unsigned n) {
    if (count_ < n) refill();
    const uint32_t v = peek(n);
    consume(n);
    return v;
  }
  inline uint32_t read_bit() { return read(1); }
  inline uint64_t read48() {
    const uint64_t hi = read(24);
    return (hi << 24) | read(24);
  }

  // Absolute bit position of the next unread bit, relative to the start of the data.
  uint64_t position() const { return static_cast<uint64_t>(pos_) * 8 - count_; }
  // True once a bit beyond the end of the data has been consumed.
  bool overrun() const { return position() > size_bits(); }
  uint64_t size_bits() const { return static_cast<uint64_t>(size_) * 8; }

 private:
  void refill_slow() {
    // Past the end, zero bytes are shifted in and pos_ keeps counting them (it is never used to
    // read there), so position() and overrun() see the invented bits.
    while (count_ <= 56) {
      const uint64_t byte = pos_ < size_ ? data_[pos_] : 0;
      buf_ |= byte << (56 - count_);
      ++pos_;
      count_ += 8;
    }
  }

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;     // next byte to load
  uint64_t buf_ = 0;   // next bit at bit 63
  unsigned count_ = 0; // valid bits in buf_
};

}  // namespace mibz2::bz2
