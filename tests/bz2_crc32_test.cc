// The bzip2 CRC: known values, the slicing-by-8 path against libbz2's own bytewise table and a
// bit-at-a-time definition, incremental updates, and the CRCs stored in real libbz2 output.
#include <gtest/gtest.h>

#include <cstring>

#include "bz2/crc32.h"
#include "test_support.h"

namespace mibz2::test {
namespace {

// The definition: polynomial 0x04C11DB7, MSB first, one bit at a time.
uint32_t crc_bitwise(const uint8_t* p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    c ^= uint32_t{p[i]} << 24;
    for (int k = 0; k < 8; ++k) c = (c & 0x80000000u) ? (c << 1) ^ 0x04C11DB7u : c << 1;
  }
  return ~c;
}

TEST(Crc32, KnownVectors) {
  const std::string check = "123456789";
  EXPECT_EQ(bz2::crc32(reinterpret_cast<const uint8_t*>(check.data()), check.size()), 0xFC891918u);
  EXPECT_EQ(bz2::crc32(nullptr, 0), 0u);
  const uint8_t zero = 0;
  EXPECT_EQ(bz2::crc32(&zero, 1), 0xB1F7404Bu);  // CRC-32/BZIP2 of one zero byte
  const std::string fox = "The quick brown fox jumps over the lazy dog";
  EXPECT_EQ(bz2::crc32(reinterpret_cast<const uint8_t*>(fox.data()), fox.size()), 0x459DEE61u);
}

TEST(Crc32, EveryLengthAndAlignmentMatchesReferences) {
  // Lengths 0..100 cover the bytewise tail alone (< 8) and every split between the slicing loop
  // and the tail; starts 0..7 make the 8-byte loads unaligned in every way.
  const Bytes data = random_bytes(128, 1);
  for (size_t start = 0; start < 8; ++start) {
    for (size_t len = 0; len <= 100; ++len) {
      const uint8_t* p = data.data() + start;
      const uint32_t expected = libbz2_crc({p, len});
      ASSERT_EQ(expected, crc_bitwise(p, len)) << "references disagree: start " << start << " len " << len;
      ASSERT_EQ(bz2::crc32(p, len), expected) << "start " << start << " len " << len;
    }
  }
}

TEST(Crc32, SlicingPathEqualsBytewisePath) {
  // Feeding one byte at a time only ever takes the bytewise loop; one call takes the slicing loop.
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const Bytes data = random_bytes(1 + seed * 37, seed);
    uint32_t bytewise = 0xFFFFFFFFu;
    for (uint8_t b : data) bytewise = bz2::Crc32::crc32_update(bytewise, &b, 1);
    EXPECT_EQ(bz2::Crc32::crc32_update(0xFFFFFFFFu, data.data(), data.size()), bytewise);
  }
}

TEST(Crc32, IncrementalUpdatesEqualOneCall) {
  const Bytes data = text_bytes(300, 7);
  const uint32_t whole = bz2::crc32(data.data(), data.size());
  for (size_t cut1 = 0; cut1 <= data.size(); cut1 += 7) {
    for (size_t cut2 = cut1; cut2 <= data.size(); cut2 += 13) {
      bz2::Crc32 c;
      c.update(data.data(), cut1);
      c.update(data.data() + cut1, cut2 - cut1);
      c.update(data.data() + cut2, data.size() - cut2);
      ASSERT_EQ(c.value(), whole) << cut1 << " " << cut2;
    }
  }
  bz2::Crc32 empty;
  EXPECT_EQ(empty.value(), 0u);
}

TEST(Crc32, LargeBuffers) {
  for (const Bytes& data : {random_bytes(1 << 20, 3), runs_bytes(300000, 4), repeated_byte(100000, 0xFF)}) {
    EXPECT_EQ(bz2::crc32(data.data(), data.size()), libbz2_crc(data));
  }
}

TEST(Crc32, IsalEqualsPortableAndLibbz2) {
  // crc32_update is ISA-L's folding code, crc32_update_portable the slicing-by-8 loop: every length
  // 0..600 at every start 0..63 (ISA-L has separate paths below 16, 64 and 256 bytes and for
  // unaligned heads), continuing from arbitrary states, and long buffers.
  const Bytes data = random_bytes(700, 9);
  for (size_t start = 0; start < 64; ++start) {
    for (size_t len = 0; len <= 600; ++len) {
      const uint8_t* p = data.data() + start;
      const uint32_t state = 0x9E3779B9u * static_cast<uint32_t>(start * 601 + len + 1);
      ASSERT_EQ(bz2::Crc32::crc32_update(state, p, len), bz2::Crc32::crc32_update_portable(state, p, len))
          << "start " << start << " len " << len;
    }
  }
  for (size_t len : {size_t{1} << 20, size_t{900000}, size_t{46000001}}) {
    const Bytes big = random_bytes(len, len);
    const uint32_t isal = bz2::crc32(big.data(), big.size());
    EXPECT_EQ(isal, ~bz2::Crc32::crc32_update_portable(0xFFFFFFFFu, big.data(), big.size()));
    if (len < 2000000) {
      EXPECT_EQ(isal, libbz2_crc(big));
    }
  }
}

TEST(Crc32, CombineStreamCrc) {
  EXPECT_EQ(bz2::combine_stream_crc(0, 0x12345678u), 0x12345678u);
  EXPECT_EQ(bz2::combine_stream_crc(0x80000000u, 0), 1u);  // rotate left, top bit wraps
  EXPECT_EQ(bz2::combine_stream_crc(1, 0), 2u);
  EXPECT_EQ(bz2::combine_stream_crc(0xFFFFFFFFu, 0xFFFFFFFFu), 0u);
  EXPECT_EQ(bz2::combine_stream_crc(0x40000001u, 0x00000001u), 0x80000003u);
}

TEST(Crc32, MatchesCrcsStoredByLibbz2) {
  // A three-block stream: each stored block CRC is the CRC of that block's bytes, and the stream
  // CRC after the end-of-stream marker folds them in order.
  const Bytes data = text_bytes(250000, 11);
  const Bytes file = libbz2_compress(data, 1);
  FileLayout layout;
  ASSERT_TRUE(walk_file(file, &layout));
  ASSERT_EQ(layout.blocks.size(), 3u);
  ASSERT_EQ(layout.eos_bits.size(), 1u);
  uint32_t combined = 0;
  size_t offset = 0;
  for (const BlockSpan& b : layout.blocks) {
    // The stored CRC as the file has it, right after the block magic.
    EXPECT_EQ(get_bits(file, b.start_bit + 48, 32), b.stored_crc);
    ASSERT_LE(offset + b.out_size, data.size());
    EXPECT_EQ(bz2::crc32(data.data() + offset, b.out_size), b.stored_crc);
    offset += b.out_size;
    combined = bz2::combine_stream_crc(combined, b.stored_crc);
  }
  EXPECT_EQ(offset, data.size());
  EXPECT_EQ(get_bits(file, layout.eos_bits[0] + 48, 32), combined);
}

}  // namespace
}  // namespace mibz2::test
