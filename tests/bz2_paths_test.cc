// The decoder's fast paths against libbz2 and against each other: every instruction-set level
// the CPU has (portable, AVX2, AVX-512) on the same inputs; the Huffman lookup table (pairs,
// long codes, the slow walk) against the exact walk; RLE1 in random pieces against its
// definition; hand-made blocks with 2..6 tables, codes up to 20 bits and incomplete or
// over-subscribed code sets.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "base/byte_buffer.h"
#include "bz2/block_decoder.h"
#include "bz2/cpu_dispatch.h"
#include "bz2/crc32.h"
#include "bz2/huffman.h"
#include "bz2/run_length.h"
#include "test_support.h"

namespace mibz2::test {
namespace {

using bz2::ErrorCode;
using bz2::Isa;

// Decodes `file` at every level: each must agree with libbz2 (accept with the same bytes, or
// reject), and all levels must report the same error.
void expect_every_level_agrees(const Bytes& file, const std::string& what) {
  SCOPED_TRACE(what);
  const LibResult lib = libbz2_decompress(file);
  bool first = true;
  bz2::Error first_error;
  for (Isa level : isa_levels()) {
    SCOPED_TRACE(isa_name(level));
    IsaCap cap(level);
    bz2::BlockDecoder decoder;  // fresh scratch for each level
    const OurResult ours = decode_ours(file, &decoder);
    ASSERT_EQ(ours.ok(), lib.ok) << "libbz2 " << (lib.ok ? "accepts" : "rejects") << " (code " << lib.error
                                 << "), we say: " << bz2::to_string(ours.error);
    if (lib.ok) {
      EXPECT_TRUE(same_bytes(ours.out, lib.out));
    }
    if (first) {
      first_error = ours.error;
      first = false;
    } else {
      EXPECT_EQ(ours.error.code, first_error.code) << bz2::to_string(ours.error);
      EXPECT_EQ(ours.error.bit_offset, first_error.bit_offset) << bz2::to_string(ours.error);
    }
  }
}

void expect_roundtrip_every_level(const Bytes& data, int level, const std::string& what) {
  expect_every_level_agrees(libbz2_compress(data, level), what);
}

TEST(DecoderPaths, LevelsReported) {
  // Not an assertion about the machine: says which paths this run covers.
  std::string covered;
  for (Isa level : isa_levels()) covered += std::string(" ") + isa_name(level);
  std::printf("instruction-set levels checked:%s\n", covered.c_str());
  EXPECT_FALSE(isa_levels().empty());
}

TEST(DecoderPaths, SmallAndUniformBlocks) {
  expect_roundtrip_every_level(to_bytes("x"), 9, "one byte");
  expect_roundtrip_every_level(to_bytes("ab"), 9, "two bytes");
  expect_roundtrip_every_level(repeated_byte(1, 0), 1, "one zero byte");
  expect_roundtrip_every_level(repeated_byte(4, 'a'), 1, "a run of four (count byte 0)");
  expect_roundtrip_every_level(repeated_byte(5, 'a'), 1, "a run of five");
  expect_roundtrip_every_level(repeated_byte(1000000, 'z'), 9, "a million equal bytes");
  expect_roundtrip_every_level(repeated_byte(46000000, 0), 9, "46 MB of zeros (one block)");
  expect_roundtrip_every_level(all_byte_values(1, 3), 9, "each byte value once");
  expect_roundtrip_every_level(all_byte_values(400, 4), 9, "each byte value 400 times");
}

TEST(DecoderPaths, MaximalBlocks) {
  // libbz2's largest level-9 block: 899981 bytes before RLE1 (bytes without runs, so RLE1 keeps
  // them all); then the format's limit, 900000, in a hand-made block, and one byte more.
  const Bytes pool = no_runs_bytes(900001, 5);
  const Bytes plain(pool.begin(), pool.begin() + 899981);
  const Bytes file = libbz2_compress(plain, 9);
  FileLayout layout;
  ASSERT_TRUE(walk_file(file, &layout));
  ASSERT_EQ(layout.blocks.size(), 1u);
  EXPECT_EQ(layout.blocks[0].bwt_length, 899981u);
  expect_every_level_agrees(file, "libbz2's largest block");
  const Bytes limit(pool.begin(), pool.begin() + 900000);
  expect_every_level_agrees(make_stream(9, {BlockSpec{limit}}), "900000 bytes, hand-made");
  expect_every_level_agrees(make_stream(9, {BlockSpec{pool}}), "900001 bytes, hand-made");
  {
    IsaCap cap(Isa::kPortable);
    EXPECT_EQ(decode_ours(make_stream(9, {BlockSpec{pool}})).error.code, ErrorCode::kBlockTooLong);
  }
  // Text and runs filling the block, and a second block after it.
  expect_roundtrip_every_level(text_bytes(1900000, 6), 9, "text, three blocks");
  expect_roundtrip_every_level(runs_bytes(2500000, 7), 9, "runs, several blocks");
  expect_roundtrip_every_level(random_bytes(950000, 8), 9, "random bytes");
}

TEST(DecoderPaths, MtfMovesFromEveryDepth) {
  // The vector paths keep the front of the MTF list in registers (32 and 32 more bytes with AVX2,
  // 64 with AVX-512) and shift the rest in memory in 16-byte moves: random bytes over k distinct values
  // make MTF indices up to k - 1, so each k puts the deepest moves just at, past, or well past
  // those edges, and at every length of the last partial move.
  for (uint32_t k : {16u, 17u, 18u, 31u, 32u, 33u, 47u, 48u, 49u, 63u, 64u, 65u, 66u, 80u, 81u, 97u, 200u, 256u}) {
    Rng rng(k);
    Bytes data(60000);
    for (uint8_t& b : data) b = static_cast<uint8_t>(rng.below(k) * (256 / k) + (k > 128 ? 0 : 7));
    expect_roundtrip_every_level(data, 1, std::to_string(k) + " distinct byte values");
  }
}

TEST(DecoderPaths, EveryTableCountFromLibbz2) {
  // libbz2 chooses the number of tables by the symbol count: < 200 two, < 600 three, < 1200
  // four, < 2400 five, else six. Random bytes make about one symbol per byte.
  for (size_t n : {50, 400, 900, 1800, 5000}) {
    expect_roundtrip_every_level(random_bytes(n, n), 9, std::to_string(n) + " random bytes");
  }
}

TEST(DecoderPaths, RandomisedBlocks) {
  // The randomised bit set on blocks libbz2 made of masked bytes (as in the decoder tests).
  for (size_t n : {size_t{3000}, size_t{400000}}) {
    const Bytes data = no_runs_bytes(n, n + 1);
    const Bytes mask = randomisation_mask(n);
    Bytes masked = data;
    for (size_t k = 0; k < n; ++k) masked[k] ^= mask[k];
    Bytes file = libbz2_compress(masked, 9);
    FileLayout layout;
    ASSERT_TRUE(walk_file(file, &layout));
    ASSERT_EQ(layout.blocks.size(), 1u);
    const uint64_t rand_bit = 4 * 8 + 48 + 32;
    set_bits(file, rand_bit, 1, 1);
    const uint32_t crc = libbz2_crc(data);
    set_bits(file, 4 * 8 + 48, 32, crc);
    set_bits(file, layout.eos_bits[0] + 48, 32, bz2::combine_stream_crc(0, crc));
    ASSERT_TRUE(libbz2_decompress(file).ok);
    expect_every_level_agrees(file, "randomised, " + std::to_string(n) + " bytes");
  }
}

// ---- hand-made tables ---------------------------------------------------------------------

// Lengths for `alpha` symbols: a complete code whose lengths run from short to max_len, shuffled
// over the symbols.
std::vector<uint8_t> complete_lengths(int alpha, int max_len, uint64_t seed) {
  // Lengths 1, 2, 3, ... up to max_len - 1 for the first symbols, then the rest share what is
  // left: Kraft sum at most 1.
  std::vector<uint8_t> lens;
  double budget = 1.0;
  int len = 1;
  while (static_cast<int>(lens.size()) < alpha) {
    const int left = alpha - static_cast<int>(lens.size());
    if (len >= max_len || budget - std::ldexp(1.0, -len) < left * std::ldexp(1.0, -max_len)) {
      len = std::max(len, 1);
      // Remaining symbols at the longest length that still fits them all.
      int l = max_len;
      while (l > len && left * std::ldexp(1.0, -(l - 1)) <= budget) --l;
      for (int i = 0; i < left; ++i) lens.push_back(static_cast<uint8_t>(l));
      break;
    }
    lens.push_back(static_cast<uint8_t>(len));
    budget -= std::ldexp(1.0, -len);
    ++len;
  }
  Rng rng(seed);
  for (size_t i = lens.size(); i > 1; --i) std::swap(lens[i - 1], lens[rng.below(static_cast<uint32_t>(i))]);
  return lens;
}

TEST(DecoderPaths, EveryTableCountWithLongCodes) {
  // 2..6 tables with different length sets (codes up to 20 bits: the slow walk), groups cycling
  // over the tables in a pattern that moves every selector through the selector MTF.
  const Bytes data = text_bytes(20000, 11);
  const Bytes pre = rle1_encode(data);
  for (int tables = 2; tables <= 6; ++tables) {
    for (int max_len : {5, 9, 11, 12, 17, 20}) {
      BlockSpec spec{pre};
      const int alpha = block_alphabet_size(spec);
      if (max_len < 20 && (1 << max_len) < alpha) continue;
      for (int t = 0; t < tables; ++t)
        spec.code_lengths.push_back(complete_lengths(alpha, max_len, static_cast<uint64_t>(100 * tables + 10 * t + max_len)));
      for (int g = 0; g < 37; ++g) spec.group_tables.push_back(static_cast<uint8_t>((g * 7 + g / 3) % tables));
      expect_every_level_agrees(make_stream(1, {spec}),
                                std::to_string(tables) + " tables, codes up to " + std::to_string(max_len) + " bits");
    }
  }
}

TEST(DecoderPaths, TheBlockEndsAtEveryPlaceOfAGroupAfterShortAndLongCodes) {
  // The symbol decoder looks up four entries per refill while a group has room for four pairs,
  // one at a time near the group's end. Blocks of 1 to 160 symbols put the end of the block at
  // every place of the first three groups; codes of 1 to 13 bits (random bytes: most codes are
  // long, a few short; text: mostly short) put pairs, single codes and slow codes at every place
  // of the four lookups.
  for (size_t n = 1; n <= 160; ++n) {
    BlockSpec spec{rle1_encode(n % 2 ? random_bytes(n, 1000 + n) : text_bytes(n, 1000 + n))};
    const int alpha = block_alphabet_size(spec);
    for (int t = 0; t < 2; ++t)
      spec.code_lengths.push_back(complete_lengths(alpha, 13, static_cast<uint64_t>(7 * n + t)));
    for (int g = 0; g < 4; ++g) spec.group_tables.push_back(static_cast<uint8_t>(g % 2));
    const Bytes file = make_stream(1, {spec});
    ASSERT_TRUE(libbz2_decompress(file).ok) << n << " bytes";
    expect_every_level_agrees(file, std::to_string(n) + " bytes");
  }
  // Short codes for the frequent symbols (the run symbols and small MTF indices: two to a lookup)
  // and long ones (one to a lookup, or the slow walk) for the rest make every mix, so the four
  // lookups start at every place of a group, the last possible one (eight symbols before its end)
  // too: with 5-bit codes mostly pairs, with 4-bit ones mostly single codes.
  for (int short_bits = 4; short_bits <= 5; ++short_bits) {
    for (uint64_t seed = 0; seed < 4; ++seed) {
      BlockSpec spec{rle1_encode(text_bytes(30000, 12 + seed))};
      const int alpha = block_alphabet_size(spec);
      const int n_short = std::min(alpha - 1, (1 << short_bits) - 1);
      int long_bits = short_bits;
      while ((alpha - n_short) > (1 << (long_bits - short_bits))) ++long_bits;  // Kraft sum <= 1
      std::vector<uint8_t> lens(static_cast<size_t>(alpha), static_cast<uint8_t>(long_bits));
      for (int k = 0; k < n_short; ++k) lens[static_cast<size_t>(k)] = static_cast<uint8_t>(short_bits);
      spec.code_lengths = {lens, lens};  // the format's least number of tables
      const Bytes file = make_stream(1, {spec});
      ASSERT_TRUE(libbz2_decompress(file).ok);
      expect_every_level_agrees(file, std::to_string(short_bits) + "-bit short codes, seed " + std::to_string(seed));
    }
  }
}

TEST(DecoderPaths, IncompleteAndOversubscribedCodeSets) {
  // Length sets that are no prefix code: libbz2 defines what they decode to (its limit/base
  // walk), or rejects the block. The lookup table must agree with that walk everywhere.
  const Bytes pre = rle1_encode(text_bytes(3000, 12));
  Rng rng(13);
  for (int round = 0; round < 60; ++round) {
    BlockSpec spec{pre};
    const int alpha = block_alphabet_size(spec);
    const int tables = 2 + static_cast<int>(rng.below(5));
    for (int t = 0; t < tables; ++t) {
      std::vector<uint8_t> lens(static_cast<size_t>(alpha));
      const int lo = 1 + static_cast<int>(rng.below(8));
      const int hi = std::min(20, lo + static_cast<int>(rng.below(13)));
      for (uint8_t& l : lens) l = static_cast<uint8_t>(lo + static_cast<int>(rng.below(static_cast<uint32_t>(hi - lo + 1))));
      spec.code_lengths.push_back(lens);
    }
    for (int g = 0; g < 5; ++g) spec.group_tables.push_back(static_cast<uint8_t>(rng.below(static_cast<uint32_t>(tables))));
    expect_every_level_agrees(make_stream(1, {spec}), "random length set, round " + std::to_string(round));
  }
}

TEST(DecoderPaths, DamageIsReportedAlikeOnEveryLevel) {
  // Flipped bits and truncations of a file with several tables and long runs: every level accepts
  // or rejects as libbz2 does, with the same error at the same bit.
  Bytes data = text_bytes(60000, 41);
  const Bytes runs = runs_bytes(30000, 42);
  data.insert(data.end(), runs.begin(), runs.end());
  const Bytes file = libbz2_compress(data, 1);
  Rng rng(43);
  for (int round = 0; round < 150; ++round) {
    Bytes bad = file;
    const uint64_t bit = 32 + 48 + rng.below(static_cast<uint32_t>(file.size() * 8 - 32 - 48));
    flip_bit(bad, bit);
    if (round % 3 == 0) flip_bit(bad, 32 + 48 + rng.below(static_cast<uint32_t>(file.size() * 8 - 80)));
    expect_every_level_agrees(bad, "bit " + std::to_string(bit) + ", round " + std::to_string(round));
  }
  for (int round = 0; round < 40; ++round) {
    const size_t keep = 4 + rng.below(static_cast<uint32_t>(file.size() - 4));
    expect_every_level_agrees(Bytes(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(keep)),
                              "truncated to " + std::to_string(keep) + " bytes");
  }
}

// ---- the lookup table against the exact walk ----------------------------------------------

// libbz2's decode walk written out (BZ2_hbCreateDecodeTables, then GET_MTF_VAL from the shortest
// length up): the reference for HuffmanTable::decode_slow. An index past the alphabet is no code.
int libbz2_walk(const std::vector<uint8_t>& lens, uint64_t window, int* length) {
  const int alpha = static_cast<int>(lens.size());
  const int min_len = *std::min_element(lens.begin(), lens.end());
  const int max_len = *std::max_element(lens.begin(), lens.end());
  std::vector<int32_t> perm;
  for (int len = min_len; len <= max_len; ++len)
    for (int s = 0; s < alpha; ++s)
      if (lens[static_cast<size_t>(s)] == len) perm.push_back(s);
  int32_t base[bz2::kMaxCodeLength + 3] = {};
  for (uint8_t l : lens) base[l + 1]++;
  for (int i = 1; i < bz2::kMaxCodeLength + 3; ++i) base[i] += base[i - 1];
  int32_t limit[bz2::kMaxCodeLength + 3] = {};
  int32_t vec = 0;
  for (int len = min_len; len <= max_len; ++len) {
    vec += base[len + 1] - base[len];
    limit[len] = vec - 1;
    vec <<= 1;
  }
  for (int len = max_len; len > min_len; --len) base[len] = ((limit[len - 1] + 1) << 1) - base[len];
  for (int len = min_len; len <= max_len; ++len) {
    const int32_t code = static_cast<int32_t>(window >> (64 - len));
    if (code <= limit[len]) {
      const int32_t index = code - base[len];
      if (index < 0 || index >= alpha) return -1;
      *length = len;
      return perm[static_cast<size_t>(index)];
    }
  }
  return -1;
}

// Lengths for a table of 3 to 258 symbols: a complete code (round 0 of every `kinds`) with codes
// of up to 1..20 bits, else random lengths from lo (1 to max_lo) to at most lo + 10: incomplete or
// over-subscribed. Empty when no complete code of at most 20 bits was made.
std::vector<uint8_t> random_length_set(Rng& rng, int round, int kinds, int max_lo) {
  const int alpha = 3 + static_cast<int>(rng.below(256));
  std::vector<uint8_t> lens;
  if (round % kinds == 0) {
    lens = complete_lengths(alpha, 1 + static_cast<int>(rng.below(20)), static_cast<uint64_t>(round));
    if (std::any_of(lens.begin(), lens.end(), [](uint8_t l) { return l < 1 || l > 20; })) lens.clear();
    return lens;
  }
  lens.resize(static_cast<size_t>(alpha));
  const int lo = 1 + static_cast<int>(rng.below(static_cast<uint32_t>(max_lo)));
  const int hi = std::min(20, lo + static_cast<int>(rng.below(11)));
  for (uint8_t& l : lens) l = static_cast<uint8_t>(lo + static_cast<int>(rng.below(static_cast<uint32_t>(hi - lo + 1))));
  return lens;
}

// Window w of a table's test: each of the table's prefixes first, with random bits after it, then
// random windows.
uint64_t test_window(Rng& rng, int w) {
  const uint64_t window = rng.next();
  if (w >= (1 << bz2::kLutBits)) return window;
  return (uint64_t{static_cast<uint32_t>(w)} << (64 - bz2::kLutBits)) | (rng.next() >> bz2::kLutBits);
}

TEST(HuffmanTable, SlowWalkAgreesWithLibbz2sWalkOnEveryWindow) {
  // Complete, incomplete and over-subscribed length sets, codes of 1 to 20 bits.
  Rng rng(22);
  for (int round = 0; round < 300; ++round) {
    const std::vector<uint8_t> lens = random_length_set(rng, round, 3, round % 3 == 1 ? 10 : 20);
    if (lens.empty()) continue;
    bz2::HuffmanTable table;
    table.build(lens.data(), static_cast<int>(lens.size()));
    for (int w = 0; w < 3000; ++w) {
      const uint64_t window = test_window(rng, w);
      int got_len = -1;
      int want_len = -1;
      const int got = table.decode_slow(window, &got_len);
      const int want = libbz2_walk(lens, window, &want_len);
      ASSERT_EQ(got, want) << "round " << round << " window " << w;
      if (want >= 0) {
        ASSERT_EQ(got_len, want_len) << "round " << round << " window " << w;
      }
    }
  }
}

TEST(HuffmanTable, LookupAgreesWithTheWalkOnEveryWindow) {
  Rng rng(21);
  for (int round = 0; round < 200; ++round) {
    const std::vector<uint8_t> lens = random_length_set(rng, round, 2, 10);
    if (lens.empty()) continue;
    const int alpha = static_cast<int>(lens.size());
    bz2::HuffmanTable table;
    table.build(lens.data(), alpha);
    const int eob = alpha - 1;
    for (int w = 0; w < 3000; ++w) {
      const uint64_t window = test_window(rng, w);
      const uint32_t e = table.lookup(window);
      int len1 = 0;
      const int sym1 = table.decode_slow(window, &len1);
      if (e == bz2::HuffmanTable::kSlow) {
        EXPECT_TRUE(sym1 < 0 || len1 > bz2::kLutBits || sym1 == eob) << "round " << round << " window " << w;
        continue;
      }
      ASSERT_GE(sym1, 0);
      EXPECT_EQ(bz2::HuffmanTable::entry_symbol1(e), static_cast<uint32_t>(sym1));
      EXPECT_EQ(bz2::HuffmanTable::entry_length1(e), static_cast<uint32_t>(len1));
      EXPECT_NE(sym1, eob);
      const uint32_t count = bz2::HuffmanTable::entry_count(e);
      ASSERT_TRUE(count == 1 || count == 2);
      if (count == 1) {
        EXPECT_EQ(bz2::HuffmanTable::entry_length(e), static_cast<uint32_t>(len1));
        // A second code that would have fitted is paired, unless it is the end of the block.
        int len2 = 0;
        const int sym2 = table.decode_slow(window << len1, &len2);
        EXPECT_TRUE(sym2 < 0 || sym2 == eob || len1 + len2 > bz2::kLutBits) << "round " << round;
      } else {
        int len2 = 0;
        const int sym2 = table.decode_slow(window << len1, &len2);
        EXPECT_EQ(bz2::HuffmanTable::entry_symbol2(e), static_cast<uint32_t>(sym2));
        EXPECT_EQ(bz2::HuffmanTable::entry_length(e), static_cast<uint32_t>(len1 + len2));
        EXPECT_NE(sym2, eob);
        EXPECT_LE(len1 + len2, bz2::kLutBits);
      }
    }
  }
}

// ---- RLE1 in pieces -----------------------------------------------------------------------

TEST(RunLengthPaths, RandomPiecesAgreeWithTheDefinition) {
  // Inputs rich in the edges: runs of 3..5 and of 255..260, count bytes equal to the run's byte,
  // runs crossing piece boundaries, pieces of 1..3 bytes (the byte machine only) and long ones.
  Rng rng(31);
  for (int round = 0; round < 300; ++round) {
    Bytes plain;
    const size_t n = 1 + rng.below(round < 100 ? 200 : 20000);
    while (plain.size() < n) {
      const uint8_t b = static_cast<uint8_t>(rng.below(4) == 0 ? rng.byte() : 'a' + rng.below(3));
      const uint32_t kind = rng.below(10);
      const size_t len = kind < 5 ? 1 + rng.below(6) : (kind < 8 ? 250 + rng.below(12) : 1 + rng.below(600));
      plain.insert(plain.end(), len, b);
    }
    Bytes pre = rle1_encode(plain);
    // Sometimes end inside a run of four (awaiting its count byte).
    const bool unfinished = round % 7 == 0;
    if (unfinished) pre.insert(pre.end(), 4, 'q');
    const std::optional<Bytes> expected = rle1_decode(pre);
    ASSERT_EQ(expected.has_value(), !unfinished);
    for (Isa level : isa_levels()) {
      SCOPED_TRACE(isa_name(level));
      IsaCap cap(level);
      bz2::RunLengthDecoder rle(false);
      base::ByteBuffer out;
      Bytes input = pre;
      for (size_t done = 0; done < input.size();) {
        const size_t piece = std::min<size_t>(input.size() - done, rng.below(4) == 0 ? 1 + rng.below(3) : 1 + rng.below(3000));
        rle.feed(input.data() + done, piece, out);
        done += piece;
      }
      ASSERT_EQ(rle.awaiting_count(), unfinished) << "round " << round;
      if (!unfinished) {
        ASSERT_TRUE(same_bytes(Bytes(out.data(), out.data() + out.size()), *expected)) << "round " << round;
      }
    }
  }
}

// The most a piece can expand: a count byte first (four equal bytes carried from the piece before),
// then four equal bytes and a count of 255 every five bytes. The room reserved ahead must cover
// it with the vector stores' overshoot: before the fix it was 220 bytes short (ASan saw the
// write past the buffer).
TEST(RunLengthPaths, APieceOfCountsOnlyStaysWithinTheRoomItReserved) {
  Bytes piece{255};
  while (piece.size() + 5 <= 4096) piece.insert(piece.end(), {'b', 'b', 'b', 'b', 255});
  const Bytes prime(4, 'a');
  Bytes pre = prime;
  pre.insert(pre.end(), piece.begin(), piece.end());
  const std::optional<Bytes> expected = rle1_decode(pre);
  ASSERT_TRUE(expected);
  for (Isa level : isa_levels()) {
    SCOPED_TRACE(isa_name(level));
    IsaCap cap(level);
    // Room for exactly what the old formula reserved for a 4096-byte piece: no growth, so any
    // byte written past it is past the allocation.
    for (size_t room : {size_t{212189}, size_t{212189} + 64, size_t{100000}}) {
      SCOPED_TRACE(room);
      bz2::RunLengthDecoder rle(false);
      base::ByteBuffer out;
      out.reserve_exact(prime.size() + room);
      Bytes in = prime;
      rle.feed(in.data(), in.size(), out);
      ASSERT_TRUE(rle.awaiting_count());
      Bytes rest = piece;
      rle.feed(rest.data(), rest.size(), out);
      EXPECT_LE(out.size(), out.capacity());
      ASSERT_TRUE(same_bytes(Bytes(out.data(), out.data() + out.size()), *expected));
    }
  }
}

}  // namespace
}  // namespace mibz2::test
