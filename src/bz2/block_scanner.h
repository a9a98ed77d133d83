// Finds bzip2 block magics (0x314159265359) and end-of-stream markers (0x177245385090) at any bit
// offset. A mark found here is only a candidate: the 48-bit pattern can occur by chance inside
// compressed data, so the index accepts a block only when it decodes and chains to the next one.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace mibz2::bz2 {

inline constexpr uint64_t kBlockMagic = 0x314159265359ull;
inline constexpr uint64_t kEndOfStreamMagic = 0x177245385090ull;

enum class MarkKind : uint8_t { kBlock, kEndOfStream };

struct Mark {
  uint64_t bit;  // offset of the first bit of the 48-bit pattern
  MarkKind kind;
  bool operator==(const Mark&) const = default;
};

// Appends, in increasing order, every mark whose first bit lies in [from_bit, to_bit) and whose
// 48 bits lie inside `data`. Bytes after to_bit are read only to complete a pattern, so adjacent
// ranges can be scanned independently (and in parallel) with no mark found twice or missed.
void scan_marks(std::span<const uint8_t> data, uint64_t from_bit, uint64_t to_bit,
                std::vector<Mark>& out);

// The 48 bits starting at `bit`, or a value that matches no magic if they run past the end.
uint64_t read48_at(std::span<const uint8_t> data, uint64_t bit);

}  // namespace mibz2::bz2
