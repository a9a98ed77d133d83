// The decoder against libbz2: every level, sizes around block boundaries, RLE1 edges, many kinds
// of content, multistream files and bzip2's rules for what may follow a stream, blocks decoded
// independently from their bit offsets, randomised blocks, and blocks made by hand where libbz2
// never writes them (count bytes above 251, periodic blocks, blocks that are not a BWT at all).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "base/byte_buffer.h"
#include "bz2/block_decoder.h"
#include "bz2/block_scanner.h"
#include "bz2/crc32.h"
#include "bz2/stream_parser.h"
#include "test_support.h"

namespace mibz2::test {
namespace {

using bz2::ErrorCode;

// Compresses with libbz2, checks libbz2 gives the data back, and that we give the same bytes.
void expect_roundtrip(const Bytes& data, int level, const std::string& what) {
  SCOPED_TRACE(what + ", level " + std::to_string(level) + ", " + std::to_string(data.size()) + " bytes");
  const Bytes file = libbz2_compress(data, level);
  const LibResult lib = libbz2_decompress(file);
  ASSERT_TRUE(lib.ok) << "libbz2 error " << lib.error;
  ASSERT_TRUE(same_bytes(lib.out, data));
  const OurResult ours = decode_ours(file);
  ASSERT_TRUE(ours.ok()) << bz2::to_string(ours.error);
  EXPECT_TRUE(same_bytes(ours.out, data));
  EXPECT_TRUE(ours.warnings.empty());
}

// Both decoders on the same file: the same verdict, and the same bytes when it decodes.
void expect_agreement(const Bytes& file, const std::string& what) {
  SCOPED_TRACE(what);
  const LibResult lib = libbz2_decompress(file);
  const OurResult ours = decode_ours(file);
  ASSERT_EQ(ours.ok(), lib.ok) << "libbz2 " << (lib.ok ? "accepts" : "rejects") << " (code " << lib.error
                               << "), we say: " << bz2::to_string(ours.error);
  if (lib.ok) {
    EXPECT_TRUE(same_bytes(ours.out, lib.out));
  }
}

size_t block_count(const Bytes& file) {
  FileLayout layout;
  EXPECT_TRUE(walk_file(file, &layout));
  return layout.blocks.size();
}

// ---- levels and sizes -------------------------------------------------------------------------

class EveryLevel : public ::testing::TestWithParam<int> {};

TEST_P(EveryLevel, TwoBlocksOfText) {
  const int level = GetParam();
  const Bytes data = text_bytes(static_cast<size_t>(level) * 100000 + 30000, 100 + level);
  const Bytes file = libbz2_compress(data, level);
  EXPECT_EQ(block_count(file), 2u);
  EXPECT_EQ(file[3], '0' + level);
  expect_roundtrip(data, level, "text");
}

TEST_P(EveryLevel, SmallInputs) {
  const int level = GetParam();
  for (size_t n : {0, 1, 2, 3, 4, 5, 17, 1000}) {
    expect_roundtrip(random_bytes(n, n), level, "random");
    expect_roundtrip(repeated_byte(n, 'z'), level, "one symbol");
  }
}

TEST_P(EveryLevel, AroundTheBlockBoundary) {
  // Bytes without runs pass RLE1 unchanged, and BZ2_bzBuffToBuffCompress fills a block with
  // 100000 * level - 18 of them (its limit of 100000 * level - 19 written bytes, plus the byte it
  // holds back in its run state): one byte more starts a second block.
  const int level = GetParam();
  const size_t boundary = static_cast<size_t>(level) * 100000 - 18;
  const Bytes pool = no_runs_bytes(boundary + 21, 500 + level);
  // Level 1 (the fastest) walks 20 bytes either side; the others the two sizes at the boundary.
  std::vector<size_t> sizes = {boundary, boundary + 1};
  if (level == 1)
    for (size_t n = boundary - 20; n <= boundary + 20; ++n)
      if (n != boundary && n != boundary + 1) sizes.push_back(n);
  for (size_t n : sizes) {
    const Bytes data(pool.begin(), pool.begin() + static_cast<std::ptrdiff_t>(n));
    const Bytes file = libbz2_compress(data, level);
    EXPECT_EQ(block_count(file), n <= boundary ? 1u : 2u) << n;
    const OurResult ours = decode_ours(file);
    ASSERT_TRUE(ours.ok()) << n << ": " << bz2::to_string(ours.error);
    ASSERT_TRUE(same_bytes(ours.out, data)) << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Levels, EveryLevel, ::testing::Range(1, 10));

// ---- RLE1 -------------------------------------------------------------------------------------

TEST(Decoder, RunLengthEdges) {
  for (size_t len : {1, 2, 3, 4, 5, 6, 7, 8, 9, 250, 251, 252, 253, 254, 255, 256, 257, 258, 259, 260, 261,
                     262, 263, 264, 509, 510, 511, 512, 513, 1000, 4999, 100000}) {
    const Bytes run = repeated_byte(len, 'x');
    expect_roundtrip(run, 9, "run " + std::to_string(len));
    const Bytes a = to_bytes("ab"), b = to_bytes("yz");
    expect_roundtrip(concat({&a, &run, &b}), 1, "run " + std::to_string(len) + " between others");
    const Bytes xs = to_bytes("xxx");
    expect_roundtrip(concat({&run, &a, &run, &xs, &run}), 5, "runs " + std::to_string(len) + " merged");
  }
}

TEST(Decoder, HugeRuns) {
  // 255 equal bytes take 5 bytes after RLE1: millions of them still fit one block.
  expect_roundtrip(repeated_byte(3000000, 0), 9, "3M zeros");
  expect_roundtrip(repeated_byte(3000000, 0xFF), 1, "3M 0xFF at level 1");
  Bytes two(2000000, 'a');
  std::fill(two.begin() + 1000001, two.end(), 'b');
  expect_roundtrip(two, 2, "two long runs");
}

TEST(Decoder, RunCrossingABlockBoundary) {
  const size_t boundary = 100000 - 18;
  const Bytes head = no_runs_bytes(boundary - 100, 41);
  const Bytes run = repeated_byte(20000, 'x');
  const Bytes tail = no_runs_bytes(1000, 42);
  const Bytes data = concat({&head, &run, &tail});
  const Bytes file = libbz2_compress(data, 1);
  FileLayout layout;
  ASSERT_TRUE(walk_file(file, &layout));
  ASSERT_EQ(layout.blocks.size(), 2u);
  // The boundary falls inside the run: the first block ends with x and the second starts with x.
  const size_t cut = layout.blocks[0].out_size;
  ASSERT_GT(cut, head.size());
  ASSERT_LT(cut, head.size() + run.size());
  expect_roundtrip(data, 1, "run across a block boundary");
}

TEST(Decoder, CountBytesLibbz2NeverWrites) {
  // bzip2 ends a run at 255 bytes (count byte 251); the format allows counts up to 255.
  for (int count = 0; count <= 255; count += (count < 248 ? 31 : 1)) {
    Bytes pre = to_bytes("qxxxx");
    pre.push_back(static_cast<uint8_t>(count));
    pre.push_back('x');  // a new run of x begins after a count byte
    pre.push_back('y');
    const Bytes file = make_stream(1, {BlockSpec{pre}});
    Bytes expected = to_bytes("q");
    expected.insert(expected.end(), 4 + count + 1, 'x');
    expected.push_back('y');
    const LibResult lib = libbz2_decompress(file);
    ASSERT_TRUE(lib.ok) << count;
    ASSERT_TRUE(same_bytes(lib.out, expected)) << count;
    const OurResult ours = decode_ours(file);
    ASSERT_TRUE(ours.ok()) << count << ": " << bz2::to_string(ours.error);
    EXPECT_TRUE(same_bytes(ours.out, expected)) << count;
  }
}

TEST(Decoder, BlockEndingInsideARunIsRejected) {
  // Four equal bytes promise a count byte. libbz2 reads one past the end of the block and reports
  // corrupt data, whatever the stored CRC says; so must we.
  for (const std::string s : {"aaaa", "baaaa", "xyzzzz", "aaaa\x03qqqq"}) {
    const Bytes pre = to_bytes(s);
    ASSERT_FALSE(rle1_decode(pre).has_value());
    for (const std::optional<uint32_t> crc :
         {std::optional<uint32_t>(), std::optional<uint32_t>(libbz2_crc(pre))}) {
      BlockSpec spec{pre};
      spec.crc = crc;
      const Bytes file = make_stream(9, {spec});
      const LibResult lib = libbz2_decompress(file);
      EXPECT_FALSE(lib.ok) << s;
      const OurResult ours = decode_ours(file);
      EXPECT_EQ(ours.error.code, ErrorCode::kUnfinishedRun) << s << ": " << bz2::to_string(ours.error);
      EXPECT_EQ(ours.error.bit_offset, 32u) << s;  // the block's start
    }
  }
}

// ---- content ----------------------------------------------------------------------------------

TEST(Decoder, KindsOfContent) {
  expect_roundtrip(random_bytes(300000, 1), 9, "random");
  expect_roundtrip(random_bytes(300000, 2), 1, "random, three blocks");
  expect_roundtrip(text_bytes(500000, 3), 9, "text");
  expect_roundtrip(all_byte_values(300, 4), 9, "all 256 values");
  expect_roundtrip(all_byte_values(1, 5), 1, "each value once");
  expect_roundtrip(repeated_byte(800000, 'a'), 9, "one symbol");
  expect_roundtrip(runs_bytes(700000, 6), 3, "runs");
  Bytes sparse(400000, 0);
  Rng rng(7);
  for (int i = 0; i < 2000; ++i) sparse[rng.below(400000)] = rng.byte();
  expect_roundtrip(sparse, 2, "sparse");
}

TEST(Decoder, PeriodicBlocks) {
  // A block that repeats a pattern has equal rotations, and then the inverse BWT permutation has
  // several cycles (for "abab": two). libbz2 walks n steps from the origin and gets the data right;
  // so must we.
  for (const std::string s : {"ab", "abab", "abcabc", "abcabcabc", "xyxyxyxyxyxy", "aab", "aabaab"}) {
    expect_roundtrip(to_bytes(s), 9, "'" + s + "'");
  }
  const Bytes unit = random_bytes(1000, 8);
  Bytes repeated;
  for (int i = 0; i < 50; ++i) repeated.insert(repeated.end(), unit.begin(), unit.end());
  expect_roundtrip(repeated, 9, "1000 random bytes 50 times");
  Bytes ab;
  for (int i = 0; i < 150000; ++i) {
    ab.push_back('a');
    ab.push_back('b');
  }
  expect_roundtrip(ab, 1, "ab 150000 times (periodic blocks of level 1)");
  expect_roundtrip(ab, 9, "ab 150000 times");
}

TEST(Decoder, PermutationWithSeveralCyclesFromAnyBwtColumn) {
  // Any column of bytes has an inverse BWT as libbz2 defines it (walk n steps from the origin),
  // even when it is not the transform of anything. For "ab" with origin 0 the walk repeats "a".
  struct Case {
    std::string bwt;
    uint32_t orig;
  };
  for (const Case& c : {Case{"ab", 0}, Case{"ab", 1}, Case{"ba", 1}, Case{"abcabc", 2}, Case{"bbaa", 0},
                        Case{"cabbca", 3}, Case{"zyxwvu", 5}}) {
    BlockSpec spec;  // pre_rle1 unused: the column and origin are given
    spec.bwt = to_bytes(c.bwt);
    spec.orig_ptr = c.orig;
    // The libbz2 walk: T[j] for j = LF(i) holds i; start at T[orig].
    const size_t n = c.bwt.size();
    std::vector<uint32_t> next(n);
    {
      uint32_t cum[257] = {};
      for (unsigned char ch : c.bwt) ++cum[ch + 1];
      for (int i = 0; i < 256; ++i) cum[i + 1] += cum[i];
      for (uint32_t i = 0; i < n; ++i) next[cum[static_cast<unsigned char>(c.bwt[i])]++] = i;
    }
    Bytes pre;
    for (uint32_t s = next[c.orig], k = 0; k < n; ++k, s = next[s]) pre.push_back(static_cast<uint8_t>(c.bwt[s]));
    const std::optional<Bytes> expected = rle1_decode(pre);
    ASSERT_TRUE(expected.has_value());
    // libbz2 hands out a block's bytes before it checks the CRC: with a wrong one it shows its walk.
    spec.crc = libbz2_crc(*expected) ^ 1;
    const LibResult probe = libbz2_decompress(make_stream(1, {spec}));
    ASSERT_FALSE(probe.ok);
    ASSERT_TRUE(same_bytes(probe.out, *expected)) << c.bwt << " " << c.orig;
    spec.crc = libbz2_crc(*expected);
    const Bytes file = make_stream(1, {spec});
    const LibResult lib = libbz2_decompress(file);
    ASSERT_TRUE(lib.ok) << c.bwt << " " << c.orig;
    ASSERT_TRUE(same_bytes(lib.out, *expected));
    const OurResult ours = decode_ours(file);
    EXPECT_TRUE(ours.ok()) << c.bwt << " origin " << c.orig << ": " << bz2::to_string(ours.error);
    EXPECT_TRUE(same_bytes(ours.out, lib.out)) << c.bwt << " origin " << c.orig;
  }
}

TEST(Decoder, HandMadeBlocksMatchLibbz2) {
  // The test's own block writer against libbz2, so the hand-made blocks elsewhere mean something.
  for (const Bytes& data : {to_bytes("a"), to_bytes("hello, world"), text_bytes(3000, 1), random_bytes(2000, 2),
                            all_byte_values(2, 3)}) {
    const Bytes pre = rle1_encode(data);
    const Bytes file = make_stream(1, {BlockSpec{pre}, BlockSpec{pre}});
    const LibResult lib = libbz2_decompress(file);
    ASSERT_TRUE(lib.ok);
    const Bytes twice = concat({&data, &data});
    ASSERT_TRUE(same_bytes(lib.out, twice));
    const OurResult ours = decode_ours(file);
    ASSERT_TRUE(ours.ok()) << bz2::to_string(ours.error);
    EXPECT_TRUE(same_bytes(ours.out, twice));
  }
  // Six tables, all alike.
  BlockSpec six{rle1_encode(text_bytes(500, 4))};
  six.tables = 6;
  expect_agreement(make_stream(2, {six}), "six tables");
}

TEST(Decoder, BlockLengthLimitOfTheLevel) {
  // A level-1 block holds at most 100000 bytes before RLE1: libbz2 rejects one byte more.
  const Bytes pool = no_runs_bytes(100001, 9);
  const Bytes exact(pool.begin(), pool.end() - 1);
  const Bytes file_ok = make_stream(1, {BlockSpec{exact}});
  expect_agreement(file_ok, "100000 bytes at level 1");
  EXPECT_TRUE(decode_ours(file_ok).ok());
  const Bytes file_long = make_stream(1, {BlockSpec{pool}});
  expect_agreement(file_long, "100001 bytes at level 1");
  EXPECT_EQ(decode_ours(file_long).error.code, ErrorCode::kBlockTooLong);
  Bytes as_level2 = file_long;
  as_level2[3] = '2';
  expect_agreement(as_level2, "100001 bytes at level 2");
  EXPECT_TRUE(decode_ours(as_level2).ok());
}

// ---- streams ----------------------------------------------------------------------------------

TEST(Decoder, MultistreamWithMixedLevels) {
  std::vector<Bytes> parts = {text_bytes(150000, 1), Bytes{}, random_bytes(1000, 2), repeated_byte(300000, 'q'),
                              runs_bytes(250000, 3), to_bytes("x"), Bytes{}};
  const int levels[] = {1, 9, 5, 2, 1, 7, 3};
  Bytes file, expected;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Bytes s = libbz2_compress(parts[i], levels[i]);
    file.insert(file.end(), s.begin(), s.end());
    expected.insert(expected.end(), parts[i].begin(), parts[i].end());
  }
  const LibResult lib = libbz2_decompress(file);
  ASSERT_TRUE(lib.ok);
  ASSERT_TRUE(same_bytes(lib.out, expected));
  const OurResult ours = decode_ours(file);
  ASSERT_TRUE(ours.ok()) << bz2::to_string(ours.error);
  EXPECT_TRUE(same_bytes(ours.out, expected));
  EXPECT_TRUE(ours.warnings.empty());

  FileLayout layout;
  ASSERT_TRUE(walk_file(file, &layout));
  EXPECT_EQ(layout.stream_bytes.size(), parts.size());
}

TEST(Decoder, EmptyStream) {
  const Bytes file = libbz2_compress({}, 9);
  EXPECT_EQ(file.size(), 14u);  // "BZh9", the end-of-stream marker and a zero CRC
  const OurResult ours = decode_ours(file);
  EXPECT_TRUE(ours.ok());
  EXPECT_TRUE(ours.out.empty());
  expect_agreement(file, "empty stream");
}

TEST(Decoder, WhatMayFollowAStream) {
  const Bytes data = text_bytes(20000, 5);
  const Bytes stream = libbz2_compress(data, 9);
  struct Case {
    std::string tail;
    bool ok;
    ErrorCode code;
  };
  const Case cases[] = {
      {"", true, ErrorCode::kOk},
      {"xyz", true, ErrorCode::kOk},  // garbage: ignored with a warning
      {std::string("\0\0\0\0", 4), true, ErrorCode::kOk},
      {"BZh0", true, ErrorCode::kOk},  // not a level digit: garbage
      {"BZx", true, ErrorCode::kOk},
      {"BZha123", true, ErrorCode::kOk},
      {"Bq", true, ErrorCode::kOk},
      {"B", false, ErrorCode::kTruncated},  // a proper prefix of a header: truncated
      {"BZ", false, ErrorCode::kTruncated},
      {"BZh", false, ErrorCode::kTruncated},
      {"BZh1", false, ErrorCode::kTruncated},  // a header and nothing more
      {"BZh9\x31\x41", false, ErrorCode::kTruncated},
      {"BZh5garbagegarbage", false, ErrorCode::kBadBlockMagic},  // a header makes it a stream
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("tail '" + c.tail + "'");
    const Bytes tail = to_bytes(c.tail);
    const Bytes file = concat({&stream, &tail});
    expect_agreement(file, "stream + tail");
    const OurResult ours = decode_ours(file);
    EXPECT_EQ(ours.ok(), c.ok);
    EXPECT_EQ(ours.error.code, c.code) << bz2::to_string(ours.error);
    EXPECT_LE(ours.error.bit_offset, file.size() * 8);
    if (c.ok) {
      EXPECT_TRUE(same_bytes(ours.out, data));
      EXPECT_EQ(ours.warnings.size(), c.tail.empty() ? 0u : 1u);
    }
  }
  // Garbage after garbage-looking bytes is still ignored, even if a real stream follows.
  const Bytes junk = to_bytes("junk");
  const Bytes hidden = concat({&stream, &junk, &stream});
  expect_agreement(hidden, "stream, junk, stream");
  EXPECT_TRUE(same_bytes(decode_ours(hidden).out, data));
}

TEST(Decoder, FilesThatAreNotBzip2) {
  struct Case {
    std::string content;
    ErrorCode code;
  };
  const Case cases[] = {
      {"", ErrorCode::kTruncated},  // bzip2: "Compressed file ends unexpectedly"
      {"B", ErrorCode::kTruncated},
      {"BZh", ErrorCode::kTruncated},
      {"BZh7", ErrorCode::kTruncated},
      {"xyz", ErrorCode::kBadStreamHeader},
      {"BZh0", ErrorCode::kBadStreamHeader},
      {"BZhA", ErrorCode::kBadStreamHeader},
      {"bzh9", ErrorCode::kBadStreamHeader},
      {"BZh9rest of it", ErrorCode::kBadBlockMagic},
  };
  for (const Case& c : cases) {
    const Bytes file = to_bytes(c.content);
    expect_agreement(file, "'" + c.content + "'");
    const OurResult ours = decode_ours(file);
    EXPECT_EQ(ours.error.code, c.code) << "'" << c.content << "': " << bz2::to_string(ours.error);
    EXPECT_LE(ours.error.bit_offset, file.size() * 8);
  }
}

TEST(Decoder, ClassifyStreamStart) {
  struct Case {
    std::string bytes;
    uint64_t at;
    bz2::StreamStart kind;
    int level;
  };
  using S = bz2::StreamStart;
  const Case cases[] = {
      {"", 0, S::kEnd, 0},           {"BZh1", 4, S::kEnd, 0},         {"BZh1", 9, S::kEnd, 0},
      {"B", 0, S::kTruncated, 0},    {"BZ", 0, S::kTruncated, 0},     {"BZh", 0, S::kTruncated, 0},
      {"xxBZ", 2, S::kTruncated, 0}, {"BZh0", 0, S::kNotBzip2, 0},    {"BZh:", 0, S::kNotBzip2, 0},
      {"xyz", 0, S::kNotBzip2, 0},   {"BX", 0, S::kNotBzip2, 0},      {"bZh1", 0, S::kNotBzip2, 0},
      {"BZh1", 0, S::kStream, 1},    {"BZh9xyz", 0, S::kStream, 9},   {"..BZh5", 2, S::kStream, 5},
  };
  for (const Case& c : cases) {
    const Bytes b = to_bytes(c.bytes);
    int level = 0;
    EXPECT_EQ(bz2::classify_stream_start(b, c.at, &level), c.kind) << "'" << c.bytes << "' at " << c.at;
    if (c.kind == S::kStream) {
      EXPECT_EQ(level, c.level) << c.bytes;
    }
  }
}

TEST(Decoder, SinkCanStopEarly) {
  const Bytes data = text_bytes(250000, 8);
  const Bytes file = libbz2_compress(data, 1);
  bz2::BlockDecoder decoder;
  size_t calls = 0;
  Bytes got;
  bz2::SequentialSink sink;
  sink.write = [&](const uint8_t* p, size_t n) {
    ++calls;
    got.insert(got.end(), p, p + n);
    return false;
  };
  const bz2::Error e = bz2::decode_sequential(file, decoder, sink);
  EXPECT_FALSE(e);
  EXPECT_EQ(calls, 1u);
  ASSERT_LT(got.size(), data.size());
  EXPECT_TRUE(std::equal(got.begin(), got.end(), data.begin()));
}

// ---- blocks on their own ----------------------------------------------------------------------

TEST(Decoder, BlockResultFields) {
  const Bytes data = no_runs_bytes(5000, 12);
  Bytes file = libbz2_compress(data, 3);
  bz2::BlockDecoder decoder;
  base::ByteBuffer out;
  bz2::BlockResult r;
  ASSERT_FALSE(decoder.decode(file, 32, 3, out, r));
  EXPECT_TRUE(r.symbols_read);
  EXPECT_TRUE(r.bytes_produced);
  EXPECT_FALSE(r.randomised);
  EXPECT_EQ(r.bwt_length, data.size());
  EXPECT_EQ(r.stored_crc, bz2::crc32(data.data(), data.size()));
  EXPECT_EQ(r.computed_crc, r.stored_crc);
  EXPECT_EQ(bz2::read48_at(file, r.end_bit), bz2::kEndOfStreamMagic);
  EXPECT_EQ((r.end_bit + 80 + 7) / 8, file.size());  // the marker, the CRC, padding to a byte
  EXPECT_TRUE(same_bytes(Bytes(out.data(), out.data() + out.size()), data));
  EXPECT_GT(decoder.memory_bytes(), 0u);

  // A wrong stored CRC: the bytes are still produced (for measuring), the error says so.
  set_bits(file, 32 + 48, 32, r.stored_crc ^ 0x00010000u);
  out.clear();
  const bz2::Error e = decoder.decode(file, 32, 3, out, r);
  EXPECT_EQ(e.code, ErrorCode::kBlockCrcMismatch);
  EXPECT_TRUE(r.bytes_produced);
  EXPECT_EQ(r.computed_crc, bz2::crc32(data.data(), data.size()));
  EXPECT_TRUE(same_bytes(Bytes(out.data(), out.data() + out.size()), data));
  expect_agreement(file, "wrong block CRC");

  // Appends to what the buffer holds.
  out.clear();
  const uint8_t marker[3] = {1, 2, 3};
  out.append(marker, 3);
  set_bits(file, 32 + 48, 32, r.computed_crc);
  ASSERT_FALSE(decoder.decode(file, 32, 3, out, r));
  ASSERT_EQ(out.size(), 3 + data.size());
  EXPECT_EQ(out.data()[2], 3);
  EXPECT_TRUE(std::equal(data.begin(), data.end(), out.data() + 3));

  // Not a block magic at the given bit.
  EXPECT_EQ(decoder.decode(file, 33, 3, out, r).code, ErrorCode::kBadBlockMagic);
  EXPECT_EQ(decoder.decode(file, 0, 3, out, r).code, ErrorCode::kBadBlockMagic);
}

TEST(Decoder, OneDecoderKeepsItsTablesForEveryBlockOfItsLevel) {
  // The first block of a level sizes the tables for the level's longest block, so that longer
  // blocks after it do not grow them again (each growth was a fresh mapping, and unmapping the old
  // one interrupts every other thread of the process: InverseBwt::reserve). Blocks of 1000 bytes
  // up to nearly the longest of level 9, then a level-1 block, through one decoder.
  const Bytes pool = no_runs_bytes(899000, 21);
  bz2::BlockDecoder decoder;
  size_t held = 0;
  for (const auto& [n, level] : {std::pair<size_t, int>{1000, 9}, {250000, 9}, {899000, 9}, {99000, 1}}) {
    SCOPED_TRACE(std::to_string(n) + " bytes at level " + std::to_string(level));
    const Bytes data(pool.begin(), pool.begin() + static_cast<std::ptrdiff_t>(n));
    const Bytes file = libbz2_compress(data, level);
    ASSERT_EQ(block_count(file), 1u);
    base::ByteBuffer out;
    bz2::BlockResult r;
    ASSERT_FALSE(decoder.decode(file, 32, level, out, r));
    EXPECT_TRUE(same_bytes(Bytes(out.data(), out.data() + out.size()), data));
    if (held == 0) held = decoder.memory_bytes();
    EXPECT_EQ(decoder.memory_bytes(), held);
  }
}

TEST(Decoder, EveryBlockDecodesOnItsOwnFromScannedOffsets) {
  Bytes file, expected;
  for (int level : {1, 2, 1}) {
    const Bytes data = level == 2 ? runs_bytes(450000, 77) : text_bytes(230000, 78 + expected.size());
    const Bytes s = libbz2_compress(data, level);
    file.insert(file.end(), s.begin(), s.end());
    expected.insert(expected.end(), data.begin(), data.end());
  }
  std::vector<bz2::Mark> marks;
  bz2::scan_marks(file, 0, file.size() * 8, marks);
  std::map<uint64_t, bz2::MarkKind> at;
  for (const bz2::Mark& m : marks) at[m.bit] = m.kind;

  // Walk the chain through the marks: a stream's first block follows its header; a block's end is
  // the next block or an end-of-stream marker; the next stream starts at the next byte.
  struct Found {
    uint64_t bit;
    int level;
  };
  std::vector<Found> blocks;
  uint64_t byte = 0;
  bz2::BlockDecoder walker;
  base::ByteBuffer scratch;
  int streams = 0;
  while (byte < file.size()) {
    int level = 0;
    ASSERT_EQ(bz2::classify_stream_start(file, byte, &level), bz2::StreamStart::kStream);
    ++streams;
    uint64_t bit = byte * 8 + 32;
    for (;;) {
      ASSERT_TRUE(at.count(bit)) << "no mark at bit " << bit;
      if (at[bit] == bz2::MarkKind::kEndOfStream) break;
      blocks.push_back({bit, level});
      bz2::BlockResult r;
      scratch.clear();
      ASSERT_FALSE(walker.decode(file, bit, level, scratch, r));
      bit = r.end_bit;
    }
    byte = (bit + 80 + 7) / 8;
  }
  EXPECT_EQ(streams, 3);
  ASSERT_GE(blocks.size(), 7u);

  // Decode them back to front, each with a decoder of its own and with a shared one: the same.
  std::vector<Bytes> pieces(blocks.size());
  bz2::BlockDecoder shared;
  for (size_t i = blocks.size(); i-- > 0;) {
    bz2::BlockDecoder own;
    base::ByteBuffer a, b;
    bz2::BlockResult ra, rb;
    ASSERT_FALSE(own.decode(file, blocks[i].bit, blocks[i].level, a, ra)) << i;
    ASSERT_FALSE(shared.decode(file, blocks[i].bit, blocks[i].level, b, rb)) << i;
    pieces[i].assign(a.data(), a.data() + a.size());
    ASSERT_TRUE(same_bytes(Bytes(b.data(), b.data() + b.size()), pieces[i])) << i;
    EXPECT_TRUE(at.count(ra.end_bit)) << "block " << i << " ends at bit " << ra.end_bit << ", no mark there";
  }
  Bytes joined;
  for (const Bytes& p : pieces) joined.insert(joined.end(), p.begin(), p.end());
  EXPECT_TRUE(same_bytes(joined, expected));
}

// ---- randomised blocks ------------------------------------------------------------------------

// The recipe: data with no runs whose masked form has none either, compressed masked into one
// block; then the block says "randomised" and carries the CRC of the unmasked data.
void check_randomised(size_t n, uint64_t seed) {
  SCOPED_TRACE(std::to_string(n) + " bytes");
  const Bytes data = no_runs_bytes(n, seed);
  const Bytes mask = randomisation_mask(n);
  Bytes masked = data;
  size_t flipped = 0;
  for (size_t k = 0; k < n; ++k) {
    masked[k] ^= mask[k];
    flipped += mask[k];
  }
  ASSERT_GT(flipped, 0u);
  Bytes file = libbz2_compress(masked, 9);
  FileLayout layout;
  ASSERT_TRUE(walk_file(file, &layout));
  ASSERT_EQ(layout.blocks.size(), 1u);
  ASSERT_EQ(layout.blocks[0].bwt_length, n);  // RLE1 changed nothing
  const uint64_t rand_bit = 4 * 8 + 48 + 32;
  ASSERT_EQ(get_bits(file, rand_bit, 1), 0u);
  set_bits(file, rand_bit, 1, 1);
  const uint32_t crc = libbz2_crc(data);
  set_bits(file, 4 * 8 + 48, 32, crc);
  set_bits(file, layout.eos_bits[0] + 48, 32, bz2::combine_stream_crc(0, crc));

  const LibResult lib = libbz2_decompress(file);
  ASSERT_TRUE(lib.ok) << lib.error;
  ASSERT_TRUE(same_bytes(lib.out, data));
  const OurResult ours = decode_ours(file);
  ASSERT_TRUE(ours.ok()) << bz2::to_string(ours.error);
  EXPECT_TRUE(same_bytes(ours.out, data));

  bz2::BlockDecoder decoder;
  base::ByteBuffer out;
  bz2::BlockResult r;
  ASSERT_FALSE(decoder.decode(file, 32, 9, out, r));
  EXPECT_TRUE(r.randomised);
}

TEST(Decoder, RandomisedBlockSmall) { check_randomised(3000, 1); }

TEST(Decoder, RandomisedBlockPastTheTableWrap) {
  // Each of the 512 table entries flips one byte; 400000 bytes use the table more than once.
  const Bytes mask = randomisation_mask(400000);
  ASSERT_GT(std::count(mask.begin(), mask.end(), 1), 512);
  check_randomised(400000, 2);
}

TEST(Decoder, RandomisedBlocksWithRuns) {
  // Hand-made randomised blocks where the mask meets runs and count bytes: only libbz2 decides.
  for (uint64_t seed = 0; seed < 6; ++seed) {
    const Bytes data = runs_bytes(20000 + seed * 3000, seed);
    BlockSpec spec{rle1_encode(data)};
    spec.randomised = true;
    const Bytes file = make_stream(9, {spec});
    const LibResult lib = libbz2_decompress(file);
    ASSERT_TRUE(lib.ok) << seed;
    ASSERT_TRUE(same_bytes(lib.out, data)) << seed;
    const OurResult ours = decode_ours(file);
    ASSERT_TRUE(ours.ok()) << seed << ": " << bz2::to_string(ours.error);
    EXPECT_TRUE(same_bytes(ours.out, data)) << seed;
  }
}

}  // namespace
}  // namespace mibz2::test
