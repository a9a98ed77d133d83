// The CRC-32 of bzip2: polynomial 0x04C11DB7, MSB-first (not the reflected zlib CRC), initial value
// and final xor 0xFFFFFFFF. Computed slicing-by-8 (eight table lookups per eight bytes).
#pragma once

#include <cstddef>
#include <cstdint>

namespace mibz2::bz2 {

class Crc32 {
 public:
  void update(const uint8_t* data, size_t size) { state_ = crc32_update(state_, data, size); }
  uint32_t value() const { return ~state_; }

  // Raw state update (state starts at 0xFFFFFFFF and is inverted at the end).
  static uint32_t crc32_update(uint32_t state, const uint8_t* data, size_t size);

 private:
  uint32_t state_ = 0xFFFFFFFFu;
};

inline uint32_t crc32(const uint8_t* data, size_t size) {
  return ~Crc32::crc32_update(0xFFFFFFFFu, data, size);
}

// A stream's combined CRC folds in each block CRC in order.
inline uint32_t combine_stream_crc(uint32_t combined, uint32_t block_crc) {
  return ((combined << 1) | (combined >> 31)) ^ block_crc;
}

}  // namespace mibz2::bz2
