// BitReader against a bit-at-a-time reference: every start offset, every read width, the end of
// the data (zeros shifted in, overrun() exactly when a bit past the end was consumed), seeks.
#include <gtest/gtest.h>

#include "bz2/bit_reader.h"
#include "test_support.h"

namespace mibz2::test {
namespace {

using bz2::BitReader;

TEST(BitReader, ReadsAtEveryBitOffsetWithEveryWidth) {
  const Bytes data = random_bytes(96, 21);
  const uint64_t total = data.size() * 8;
  for (uint64_t start = 0; start < 200; ++start) {
    for (unsigned first_width = 1; first_width <= 32; first_width += 5) {
      BitReader br(data, start);
      ASSERT_EQ(br.position(), start);
      uint64_t pos = start;
      unsigned w = first_width;
      while (pos + w <= total) {
        const uint32_t got = br.read(w);
        ASSERT_EQ(got, get_bits(data, pos, w)) << "start " << start << " at " << pos << " width " << w;
        pos += w;
        ASSERT_EQ(br.position(), pos);
        ASSERT_FALSE(br.overrun());
        w = w % 32 + 1;
      }
    }
  }
}

TEST(BitReader, Read48AndSingleBits) {
  const Bytes data = random_bytes(40, 5);
  for (uint64_t start = 0; start + 48 <= data.size() * 8; start += 3) {
    BitReader br(data, start);
    EXPECT_EQ(br.read48(), get_bits(data, start, 48)) << start;
  }
  BitReader br(data, 0);
  for (uint64_t i = 0; i < data.size() * 8; ++i) ASSERT_EQ(br.read_bit(), get_bit(data, i) ? 1u : 0u) << i;
  EXPECT_FALSE(br.overrun());
  EXPECT_EQ(br.position(), data.size() * 8);
}

TEST(BitReader, PeekWindowConsumeAfterRefill) {
  const Bytes data = random_bytes(64, 9);
  BitReader br(data, 13);
  uint64_t pos = 13;
  for (int round = 0; round < 40 && pos + 40 < data.size() * 8; ++round) {
    br.refill();
    ASSERT_GE(br.count(), 56u);
    EXPECT_EQ(br.window() >> 8, get_bits(data, pos, 56));
    const unsigned n = 1 + static_cast<unsigned>(round % 20);
    EXPECT_EQ(br.peek(n), get_bits(data, pos, n));
    br.consume(n);
    pos += n;
    EXPECT_EQ(br.position(), pos);
  }
}

TEST(BitReader, EndOfDataZerosAndOverrun) {
  for (size_t size = 0; size <= 20; ++size) {
    // Nonzero bytes follow the span in memory: the reader must not see them.
    Bytes backing = random_bytes(size + 16, 100 + size);
    for (size_t i = size; i < backing.size(); ++i) backing[i] = 0xFF;
    const std::span<const uint8_t> data(backing.data(), size);
    const uint64_t total = size * 8;
    for (uint64_t start = 0; start <= total; ++start) {
      for (unsigned w : {1u, 3u, 8u, 17u, 32u}) {
        BitReader br(data, start);
        uint64_t pos = start;
        for (int k = 0; k < 6; ++k) {
          const uint32_t got = br.read(w);
          uint32_t expected = 0;
          for (unsigned i = 0; i < w; ++i)
            expected = (expected << 1) | ((pos + i < total && get_bit(data, pos + i)) ? 1u : 0u);
          ASSERT_EQ(got, expected) << "size " << size << " start " << start << " w " << w << " k " << k;
          pos += w;
          ASSERT_EQ(br.position(), pos);
          ASSERT_EQ(br.overrun(), pos > total) << "size " << size << " pos " << pos;
          ASSERT_EQ(br.size_bits(), total);
        }
      }
    }
  }
}

TEST(BitReader, OverrunExactlyAtTheBoundary) {
  const Bytes data = random_bytes(10, 2);
  BitReader br(data, 0);
  br.read(32);
  br.read(32);
  br.read(15);
  EXPECT_FALSE(br.overrun());
  br.read(1);  // the last bit of the data
  EXPECT_FALSE(br.overrun());
  EXPECT_EQ(br.position(), 80u);
  EXPECT_EQ(br.read(1), 0u);
  EXPECT_TRUE(br.overrun());
}

TEST(BitReader, SeekForwardAndBack) {
  const Bytes data = random_bytes(300, 77);
  const uint64_t total = data.size() * 8;
  Rng rng(5);
  BitReader br(data, 0);
  for (int i = 0; i < 2000; ++i) {
    const uint64_t to = rng.below(static_cast<uint32_t>(total - 32));
    br.seek(to);
    ASSERT_EQ(br.position(), to);
    ASSERT_FALSE(br.overrun());
    const unsigned w = 1 + rng.below(32);
    ASSERT_EQ(br.read(w), get_bits(data, to, w)) << "seek " << to << " width " << w;
  }
  // Seeking past the end reads zeros and reports the overrun.
  br.seek(total - 4);
  EXPECT_EQ(br.read(8), static_cast<uint32_t>(get_bits(data, total - 4, 4) << 4));
  EXPECT_TRUE(br.overrun());
  br.seek(0);
  EXPECT_FALSE(br.overrun());
  EXPECT_EQ(br.read(16), get_bits(data, 0, 16));
}

TEST(BitReader, EmptyData) {
  BitReader br(std::span<const uint8_t>(), 0);
  EXPECT_FALSE(br.overrun());
  EXPECT_EQ(br.read(32), 0u);
  EXPECT_TRUE(br.overrun());
}

}  // namespace
}  // namespace mibz2::test
