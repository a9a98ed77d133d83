// scan_marks and read48_at against a bit-at-a-time reference: magics planted at every bit offset,
// at the edges of the data and of the scanned range, ranges split anywhere, near misses, and real
// libbz2 files; each at every instruction-set level the CPU runs (the vector filter and the
// portable one).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "bz2/block_scanner.h"
#include "test_support.h"

namespace mibz2::test {
namespace {

using bz2::kBlockMagic;
using bz2::kEndOfStreamMagic;
using bz2::Mark;
using bz2::MarkKind;

std::vector<Mark> reference_scan(std::span<const uint8_t> data, uint64_t from, uint64_t to) {
  std::vector<Mark> out;
  const uint64_t total = data.size() * 8;
  for (uint64_t bit = from; bit < to && bit + 48 <= total; ++bit) {
    const uint64_t v = get_bits(data, bit, 48);
    if (v == kBlockMagic) out.push_back({bit, MarkKind::kBlock});
    else if (v == kEndOfStreamMagic) out.push_back({bit, MarkKind::kEndOfStream});
  }
  return out;
}

std::vector<Mark> scan(std::span<const uint8_t> data, uint64_t from, uint64_t to) {
  std::vector<Mark> out;
  bz2::scan_marks(data, from, to, out);
  return out;
}

std::vector<Mark> scan_all(std::span<const uint8_t> data) { return scan(data, 0, data.size() * 8); }

// Each test runs with the decoder's level capped at its parameter.
class Scanner : public ::testing::TestWithParam<bz2::Isa> {
 protected:
  IsaCap cap_{GetParam()};
};

INSTANTIATE_TEST_SUITE_P(EveryLevel, Scanner, ::testing::ValuesIn(isa_levels()),
                         [](const ::testing::TestParamInfo<bz2::Isa>& info) { return std::string(isa_name(info.param)); });

TEST_P(Scanner, Read48At) {
  const Bytes data = random_bytes(30, 8);
  for (uint64_t bit = 0; bit + 48 <= data.size() * 8; ++bit) ASSERT_EQ(bz2::read48_at(data, bit), get_bits(data, bit, 48)) << bit;
  // Past the end: a value that is neither magic.
  for (uint64_t bit = data.size() * 8 - 47; bit < data.size() * 8 + 20; ++bit) {
    const uint64_t v = bz2::read48_at(data, bit);
    EXPECT_NE(v, kBlockMagic);
    EXPECT_NE(v, kEndOfStreamMagic);
  }
  Bytes magic_at_end = random_bytes(20, 3);
  set_bits(magic_at_end, magic_at_end.size() * 8 - 48, 48, kBlockMagic);
  EXPECT_EQ(bz2::read48_at(magic_at_end, magic_at_end.size() * 8 - 48), kBlockMagic);
}

TEST_P(Scanner, RandomDataMatchesReference) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const Bytes data = random_bytes(1000 + seed * 17, seed);
    EXPECT_EQ(scan_all(data), reference_scan(data, 0, data.size() * 8)) << seed;
  }
}

TEST_P(Scanner, PlantedAtEveryBitOffset) {
  for (const uint64_t magic : {kBlockMagic, kEndOfStreamMagic}) {
    const MarkKind kind = magic == kBlockMagic ? MarkKind::kBlock : MarkKind::kEndOfStream;
    for (uint64_t base : {0u, 8u, 64u, 200u, 1001u}) {
      for (uint64_t off = 0; off < 64; ++off) {
        Bytes data = random_bytes(200, base * 64 + off);
        const uint64_t bit = base + off;
        set_bits(data, bit, 48, magic);
        const auto found = scan_all(data);
        ASSERT_EQ(found, reference_scan(data, 0, data.size() * 8)) << "bit " << bit;
        ASSERT_TRUE(std::find(found.begin(), found.end(), Mark{bit, kind}) != found.end()) << "bit " << bit;
        // A range that starts or ends exactly at the mark.
        EXPECT_EQ(scan(data, bit, bit + 1), (std::vector<Mark>{{bit, kind}})) << bit;
        EXPECT_EQ(scan(data, bit + 1, data.size() * 8), reference_scan(data, bit + 1, data.size() * 8)) << bit;
        EXPECT_EQ(scan(data, 0, bit), reference_scan(data, 0, bit)) << bit;
      }
    }
  }
}

TEST_P(Scanner, ManyMarksBackToBack) {
  // Marks of both kinds packed with no gap, at an odd bit phase, several per 8-byte load.
  Bytes data = random_bytes(400, 4);
  std::vector<Mark> planted;
  for (uint64_t bit = 3; bit + 48 <= 300 * 8; bit += 48) {
    const bool block = (bit / 48) % 3 != 1;
    set_bits(data, bit, 48, block ? kBlockMagic : kEndOfStreamMagic);
    planted.push_back({bit, block ? MarkKind::kBlock : MarkKind::kEndOfStream});
  }
  const auto found = scan_all(data);
  EXPECT_EQ(found, reference_scan(data, 0, data.size() * 8));
  for (const Mark& m : planted) EXPECT_TRUE(std::find(found.begin(), found.end(), m) != found.end()) << m.bit;
}

TEST_P(Scanner, NearMissesAreNoMarks) {
  // Each magic with one bit flipped, at every bit phase: the vector filter passes many of them (a
  // flip past its three bytes, or in a bit it does not look at), the exact check must not.
  for (const uint64_t magic : {kBlockMagic, kEndOfStreamMagic}) {
    for (unsigned flip = 0; flip < 48; ++flip) {
      Bytes data(300, 0);
      for (uint64_t bit = 5, k = 0; bit + 48 <= data.size() * 8; bit += 48 + 8 + (k++ % 8))
        set_bits(data, bit, 48, magic ^ (uint64_t{1} << flip));
      ASSERT_EQ(scan_all(data), reference_scan(data, 0, data.size() * 8)) << "flip " << flip;
    }
  }
  // Bytes whose nibbles come from different patterns (the low from one magic, the high from the
  // other) at the same phase: each byte passes the nibble tables, the whole is no mark.
  for (unsigned k = 0; k < 8; ++k) {
    Bytes data = random_bytes(200, 40 + k);
    for (size_t p = 10; p + 8 < data.size(); p += 24) {
      Bytes block(8, 0);
      Bytes eos(8, 0);
      set_bits(block, k, 48, kBlockMagic);
      set_bits(eos, k, 48, kEndOfStreamMagic);
      for (size_t j = 0; j < 7; ++j)
        data[p + j] = static_cast<uint8_t>(((p / 24) % 2 ? (block[j] & 0xF0) | (eos[j] & 0x0F)
                                                            : (eos[j] & 0xF0) | (block[j] & 0x0F)));
    }
    ASSERT_EQ(scan_all(data), reference_scan(data, 0, data.size() * 8)) << "phase " << k;
  }
}

TEST_P(Scanner, AtTheEdgesOfTheData) {
  for (size_t size = 0; size <= 24; ++size) {
    for (const uint64_t magic : {kBlockMagic, kEndOfStreamMagic}) {
      for (uint64_t bit = 0; bit + 48 <= size * 8; ++bit) {
        Bytes data = random_bytes(size, size * 1000 + bit);
        set_bits(data, bit, 48, magic);
        ASSERT_EQ(scan_all(data), reference_scan(data, 0, size * 8)) << "size " << size << " bit " << bit;
      }
      if (size >= 6) {
        // A pattern cut off by the end of the data is no mark.
        for (uint64_t cut = 1; cut < 48; ++cut) {
          Bytes data(size + 6, 0);
          set_bits(data, size * 8 + cut - 48, 48, magic);
          data.resize(size);
          const auto found = scan_all(data);
          ASSERT_EQ(found, reference_scan(data, 0, size * 8));
        }
      }
    }
  }
  // Ranges past the end are clamped, empty and inverted ranges find nothing.
  Bytes data = random_bytes(64, 1);
  set_bits(data, 64 * 8 - 48, 48, kEndOfStreamMagic);
  EXPECT_EQ(scan(data, 0, ~uint64_t{0}), (std::vector<Mark>{{64 * 8 - 48, MarkKind::kEndOfStream}}));
  EXPECT_TRUE(scan(data, 100, 100).empty());
  EXPECT_TRUE(scan(data, 200, 100).empty());
  EXPECT_TRUE(scan(data, 64 * 8, 64 * 8 + 100).empty());
}

Bytes data_with_marks(size_t size, uint64_t seed, std::vector<uint64_t>* bits) {
  Bytes data = random_bytes(size, seed);
  Rng rng(seed);
  uint64_t bit = rng.below(200);
  while (bit + 48 <= size * 8) {
    set_bits(data, bit, 48, rng.below(2) ? kBlockMagic : kEndOfStreamMagic);
    bits->push_back(bit);
    bit += 48 + rng.below(300);
  }
  return data;
}

TEST_P(Scanner, AdjacentRangesFindExactlyTheWholeScan) {
  std::vector<uint64_t> marks;
  const Bytes data = data_with_marks(600, 12, &marks);
  const uint64_t total = data.size() * 8;
  const auto whole = scan_all(data);
  ASSERT_EQ(whole, reference_scan(data, 0, total));
  ASSERT_GE(whole.size(), marks.size());
  // Two ranges, cut at every bit around each mark and at every bit of the first bytes.
  std::set<uint64_t> cuts;
  for (uint64_t m : marks)
    for (uint64_t d = 0; d < 70; ++d) {
      if (m + d <= total) cuts.insert(m + d);
      if (m >= d) cuts.insert(m - d);
    }
  for (uint64_t c = 0; c < 128; ++c) cuts.insert(c);
  for (uint64_t c = total - 128; c <= total; ++c) cuts.insert(c);
  for (uint64_t cut : cuts) {
    auto parts = scan(data, 0, cut);
    bz2::scan_marks(data, cut, total, parts);
    ASSERT_EQ(parts, whole) << "cut at " << cut;
  }
  // Many ranges of random sizes, including empty and one-bit ranges.
  Rng rng(3);
  for (int round = 0; round < 200; ++round) {
    std::vector<Mark> parts;
    uint64_t from = 0;
    while (from < total) {
      const uint64_t len = rng.below(4) == 0 ? rng.below(3) : rng.below(700);
      const uint64_t to = std::min(total, from + len);
      bz2::scan_marks(data, from, to, parts);
      from = to;
    }
    ASSERT_EQ(parts, whole) << "round " << round;
  }
}

TEST_P(Scanner, FindsEveryBlockOfRealFiles) {
  // Multi-block streams of three levels, concatenated: the block starts and end-of-stream markers
  // the decoder walks through must all be among the scanner's marks, with the right kind.
  Bytes file;
  for (int level : {1, 2, 5}) {
    const Bytes data = level == 2 ? random_bytes(250000, 9) : text_bytes(level * 100000 + 150000, level);
    const Bytes part = libbz2_compress(data, level);
    file.insert(file.end(), part.begin(), part.end());
  }
  FileLayout layout;
  ASSERT_TRUE(walk_file(file, &layout));
  ASSERT_GE(layout.blocks.size(), 6u);
  ASSERT_EQ(layout.eos_bits.size(), 3u);

  const auto marks = scan_all(file);
  EXPECT_EQ(marks, reference_scan(file, 0, file.size() * 8));
  const std::set<std::pair<uint64_t, MarkKind>> found = [&] {
    std::set<std::pair<uint64_t, MarkKind>> s;
    for (const Mark& m : marks) s.insert({m.bit, m.kind});
    return s;
  }();
  for (const BlockSpan& b : layout.blocks) {
    EXPECT_TRUE(found.count({b.start_bit, MarkKind::kBlock})) << "block at bit " << b.start_bit;
    // Each block ends where the next block or an end-of-stream marker starts.
    EXPECT_TRUE(found.count({b.end_bit, MarkKind::kBlock}) || found.count({b.end_bit, MarkKind::kEndOfStream}))
        << "block ending at bit " << b.end_bit;
  }
  for (uint64_t e : layout.eos_bits) EXPECT_TRUE(found.count({e, MarkKind::kEndOfStream})) << e;
  // Whatever else was found is a chance match inside compressed data; there are few.
  EXPECT_LE(marks.size(), layout.blocks.size() + layout.eos_bits.size() + 2);

  // The same in pieces of the file, cut at arbitrary bits.
  std::vector<Mark> parts;
  const uint64_t total = file.size() * 8;
  for (uint64_t from = 0; from < total; from += 77777) bz2::scan_marks(file, from, std::min(total, from + 77777), parts);
  EXPECT_EQ(parts, marks);
}

}  // namespace
}  // namespace mibz2::test
