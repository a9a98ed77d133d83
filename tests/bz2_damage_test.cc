// Damaged input: truncation anywhere, bit flips in headers, tables, selectors, data and trailers,
// overwritten bytes, spliced streams and hand-made invalid blocks. The decoder must never crash
// (these tests also run under ASan/UBSan), must fail exactly where libbz2 fails and must give
// libbz2's bytes where libbz2 succeeds; an error names a bit inside the file.
#include <bzlib.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>

#include "bz2/block_scanner.h"
#include "bz2/stream_parser.h"
#include "test_support.h"

namespace mibz2::test {
namespace {

using bz2::ErrorCode;

struct Tally {
  int accepted = 0;
  int rejected = 0;
};

// Both decoders on one damaged file. Returns false on disagreement (after recording a failure).
bool agree(const Bytes& file, const std::string& what, Tally* tally = nullptr) {
  const LibResult lib = libbz2_decompress(file);
  const OurResult ours = decode_ours(file);
  if (ours.ok() != lib.ok) {
    ADD_FAILURE() << what << ": libbz2 " << (lib.ok ? "accepts" : "rejects") << " (code " << lib.error
                  << "), we " << (ours.ok() ? "accept" : "reject: " + bz2::to_string(ours.error));
    return false;
  }
  if (lib.ok) {
    const auto same = same_bytes(ours.out, lib.out);
    if (!same) {
      ADD_FAILURE() << what << ": both accept, different bytes: " << same.message();
      return false;
    }
    if (tally) ++tally->accepted;
    return true;
  }
  if (tally) ++tally->rejected;
  if (ours.error.bit_offset > file.size() * 8) {
    ADD_FAILURE() << what << ": error beyond the end of the " << file.size() << "-byte file: "
                  << bz2::to_string(ours.error);
    return false;
  }
  // Input that ends early is reported as such when libbz2 sees it the same way.
  if (lib.error == BZ_UNEXPECTED_EOF && ours.error.code != ErrorCode::kTruncated) {
    ADD_FAILURE() << what << ": libbz2 needs more input, we say " << bz2::to_string(ours.error);
    return false;
  }
  return true;
}

Bytes small_multistream() {
  Bytes file;
  const Bytes a = libbz2_compress(text_bytes(3000, 1), 9);
  const Bytes b = libbz2_compress(runs_bytes(2500, 2), 1);
  const Bytes c = libbz2_compress(random_bytes(400, 3), 4);
  return concat({&a, &b, &c});
}

// ---- truncation -------------------------------------------------------------------------------

TEST(Damage, TruncatedAtEveryByteOfASmallFile) {
  const Bytes file = small_multistream();
  FileLayout layout;
  ASSERT_TRUE(walk_file(file, &layout));
  ASSERT_EQ(layout.stream_bytes.size(), 3u);
  Tally tally;
  for (size_t len = 0; len < file.size(); ++len) {
    const Bytes cut(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(len));
    if (!agree(cut, "truncated to " + std::to_string(len) + " bytes", &tally)) break;
  }
  // Cuts at the two inner stream boundaries leave valid files; every other cut is an error.
  EXPECT_EQ(tally.accepted, 2);
  EXPECT_EQ(tally.rejected, static_cast<int>(file.size()) - 2);
}

TEST(Damage, TruncatedMultiBlockFile) {
  const Bytes file = libbz2_compress(text_bytes(230000, 4), 1);
  FileLayout layout;
  ASSERT_TRUE(walk_file(file, &layout));
  ASSERT_EQ(layout.blocks.size(), 3u);
  std::set<size_t> cuts;
  Rng rng(5);
  for (int i = 0; i < 120; ++i) cuts.insert(rng.below(static_cast<uint32_t>(file.size())));
  for (const BlockSpan& b : layout.blocks) {
    for (int d = -3; d <= 24; ++d) cuts.insert(static_cast<size_t>(static_cast<int64_t>(b.start_bit / 8) + d));
    for (int d = -4; d <= 4; ++d) cuts.insert(static_cast<size_t>(static_cast<int64_t>(b.end_bit / 8) + d));
  }
  for (size_t d = 1; d <= 16; ++d) cuts.insert(file.size() - d);
  Tally tally;
  for (size_t len : cuts) {
    if (len >= file.size()) continue;
    const Bytes cut(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(len));
    if (!agree(cut, "truncated to " + std::to_string(len) + " bytes", &tally)) break;
  }
  EXPECT_EQ(tally.accepted, 0);
  EXPECT_GT(tally.rejected, 150);
}

// ---- bit flips --------------------------------------------------------------------------------

TEST(Damage, EveryBitOfTheHeadersOfASmallBlock) {
  // One block of text: the first 256 bytes hold the stream header, the block header, the symbol
  // map, the selectors and the code lengths of all tables, and the first symbols; the last 16
  // the end of the data, the end-of-stream marker, the stream CRC and the padding.
  const Bytes file = libbz2_compress(text_bytes(10000, 6), 9);
  ASSERT_GT(file.size(), 400u);
  std::vector<uint64_t> bits;
  for (uint64_t b = 0; b < 256 * 8; ++b) bits.push_back(b);
  for (uint64_t b = (file.size() - 16) * 8; b < file.size() * 8; ++b) bits.push_back(b);
  Tally tally;
  for (uint64_t bit : bits) {
    Bytes damaged = file;
    flip_bit(damaged, bit);
    if (!agree(damaged, "bit " + std::to_string(bit) + " flipped", &tally)) break;
  }
  // Flips in the padding after the stream CRC change nothing, '9' -> '1' or '8' still fits the
  // block: some flips are harmless, most are fatal.
  EXPECT_GT(tally.accepted, 0);
  EXPECT_GT(tally.rejected, 2000);
}

TEST(Damage, SampledBitsOfMultiBlockFiles) {
  // Two blocks of mixed content: flips through each block's header, map, selectors and tables,
  // its last symbols, the end-of-stream marker and CRC, and anywhere at random.
  const Bytes a = text_bytes(90000, 7);
  const Bytes b = random_bytes(20000, 8);
  const Bytes c = runs_bytes(60000, 9);
  const Bytes file = libbz2_compress(concat({&a, &b, &c}), 1);
  FileLayout layout;
  ASSERT_TRUE(walk_file(file, &layout));
  ASSERT_EQ(layout.blocks.size(), 2u);
  std::set<uint64_t> bits;
  Rng rng(10);
  for (const BlockSpan& s : layout.blocks) {
    for (uint64_t d = 0; d < 160 * 8; d += 5) bits.insert(s.start_bit + d);
    for (uint64_t d = 1; d <= 24; ++d) bits.insert(s.end_bit - d);
  }
  for (uint64_t e : layout.eos_bits)
    for (uint64_t d = 0; d < 80; ++d) bits.insert(e + d);
  for (int i = 0; i < 120; ++i) bits.insert(rng.next() % (file.size() * 8));
  Tally tally;
  for (uint64_t bit : bits) {
    if (bit >= file.size() * 8) continue;
    Bytes damaged = file;
    flip_bit(damaged, bit);
    if (!agree(damaged, "bit " + std::to_string(bit) + " flipped", &tally)) break;
  }
  EXPECT_GT(tally.rejected, 500);
}

TEST(Damage, OverwrittenBytesAndBursts) {
  const Bytes file = small_multistream();
  Rng rng(11);
  for (int i = 0; i < 400; ++i) {
    Bytes damaged = file;
    const size_t at = rng.below(static_cast<uint32_t>(file.size()));
    const size_t len = 1 + rng.below(i % 4 == 0 ? 64 : 3);
    for (size_t k = at; k < std::min(file.size(), at + len); ++k) {
      damaged[k] = i % 3 == 0 ? 0 : (i % 3 == 1 ? 0xFF : rng.byte());
    }
    if (!agree(damaged, "bytes " + std::to_string(at) + ".." + std::to_string(at + len) + " overwritten")) break;
  }
}

TEST(Damage, WrongCrcs) {
  const Bytes data = text_bytes(250000, 12);
  const Bytes file = libbz2_compress(data, 1);
  FileLayout layout;
  ASSERT_TRUE(walk_file(file, &layout));
  ASSERT_EQ(layout.blocks.size(), 3u);
  // A wrong block CRC: the block's bytes are not served.
  for (size_t i = 0; i < layout.blocks.size(); ++i) {
    Bytes damaged = file;
    flip_bit(damaged, layout.blocks[i].start_bit + 48 + 31);
    ASSERT_TRUE(agree(damaged, "block CRC"));
    const OurResult ours = decode_ours(damaged);
    EXPECT_EQ(ours.error.code, ErrorCode::kBlockCrcMismatch);
    EXPECT_EQ(ours.error.bit_offset, layout.blocks[i].start_bit);
    EXPECT_EQ(ours.out.size(), layout.blocks[i].out_offset);  // the blocks before it only
  }
  // A wrong stream CRC.
  Bytes damaged = file;
  flip_bit(damaged, layout.eos_bits[0] + 48 + 5);
  ASSERT_TRUE(agree(damaged, "stream CRC"));
  const OurResult ours = decode_ours(damaged);
  EXPECT_EQ(ours.error.code, ErrorCode::kStreamCrcMismatch);
  EXPECT_EQ(ours.error.bit_offset, layout.eos_bits[0] + 48);
}

TEST(Damage, SplicedStreams) {
  // Cut a block out of a stream (the stream CRC no longer matches), repeat one, swap two, and
  // lower the level digit below what the blocks need.
  const Bytes file = libbz2_compress(text_bytes(320000, 13), 1);
  FileLayout layout;
  ASSERT_TRUE(walk_file(file, &layout));
  ASSERT_EQ(layout.blocks.size(), 4u);
  auto copy_bits = [&](BitWriter& w, uint64_t from, uint64_t to) {
    for (uint64_t b = from; b < to;) {
      const unsigned n = static_cast<unsigned>(std::min<uint64_t>(32, to - b));
      w.put(get_bits(file, b, n), n);
      b += n;
    }
  };
  auto rebuild = [&](const std::vector<size_t>& order) {
    BitWriter w;
    copy_bits(w, 0, 32);
    for (size_t i : order) copy_bits(w, layout.blocks[i].start_bit, layout.blocks[i].end_bit);
    copy_bits(w, layout.eos_bits[0], layout.eos_bits[0] + 80);
    return w.finish();
  };
  const Bytes same = rebuild({0, 1, 2, 3});
  EXPECT_TRUE(agree(same, "rebuilt unchanged"));
  EXPECT_TRUE(decode_ours(same).ok());
  for (const auto& order : std::vector<std::vector<size_t>>{{0, 2, 3}, {0, 1, 1, 2, 3}, {1, 0, 2, 3}, {0, 1, 2}}) {
    const Bytes spliced = rebuild(order);
    std::string name = "blocks";
    for (size_t i : order) {
      name += ' ';
      name += std::to_string(i);
    }
    EXPECT_TRUE(agree(spliced, name));
    EXPECT_EQ(decode_ours(spliced).error.code, ErrorCode::kStreamCrcMismatch) << name;
  }
  Bytes raised = file;
  raised[3] = '9';  // a level-1 stream marked level 9: the blocks still fit
  EXPECT_TRUE(agree(raised, "level 1 stream marked level 9"));
  EXPECT_TRUE(decode_ours(raised).ok());
  const Bytes big = libbz2_compress(text_bytes(250000, 14), 3);
  Bytes lowered = big;
  lowered[3] = '2';
  EXPECT_TRUE(agree(lowered, "level 3 stream marked level 2"));
  EXPECT_EQ(decode_ours(lowered).error.code, ErrorCode::kBlockTooLong);
}

// ---- hand-made invalid blocks -----------------------------------------------------------------

// "BZh9" and a block header, then `body`, then 64 bytes of one bits (so nothing is truncated).
Bytes craft(const std::function<void(BitWriter&)>& body) {
  BitWriter w;
  w.put_bytes("BZh9");
  w.put(bz2::kBlockMagic, 48);
  w.put(0x12345678, 32);  // block CRC
  w.put(0, 1);            // not randomised
  w.put(0, 24);           // origPtr
  body(w);
  for (int i = 0; i < 16; ++i) w.put(0xFFFFFFFFu, 32);
  return w.finish();
}

// Symbol map with 'a' and 'b': the alphabet is RUNA, RUNB, MTF index 1, EOB.
void two_symbol_map(BitWriter& w) {
  w.put(0x0200, 16);  // group 6: bytes 0x60..0x6F
  w.put(0x6000, 16);  // 0x61 'a', 0x62 'b'
}

// Two tables of four symbols of length 2 each, one selector.
void small_tables(BitWriter& w, unsigned selectors = 1) {
  w.put(2, 3);
  w.put(selectors, 15);
  for (unsigned i = 0; i < selectors; ++i) w.put(0, 1);
  for (int t = 0; t < 2; ++t) {
    w.put(2, 5);
    for (int s = 0; s < 4; ++s) w.put(0, 1);
  }
}

void expect_invalid(const Bytes& file, ErrorCode code, const std::string& what) {
  SCOPED_TRACE(what);
  const LibResult lib = libbz2_decompress(file);
  EXPECT_FALSE(lib.ok);
  EXPECT_EQ(lib.error, BZ_DATA_ERROR);
  const OurResult ours = decode_ours(file);
  EXPECT_EQ(ours.error.code, code) << bz2::to_string(ours.error);
  // Inside the block: after its start, before the end of the file.
  EXPECT_GE(ours.error.bit_offset, 32u);
  EXPECT_LE(ours.error.bit_offset, file.size() * 8);
}

TEST(Damage, HandMadeInvalidHeaders) {
  expect_invalid(craft([](BitWriter& w) { w.put(0, 16); }), ErrorCode::kNoSymbolsInUse, "empty symbol map");
  expect_invalid(craft([](BitWriter& w) {
                   w.put(0x8000, 16);
                   w.put(0, 16);
                 }),
                 ErrorCode::kNoSymbolsInUse, "a group marked used with no byte in it");
  for (unsigned tables : {0u, 1u, 7u}) {
    expect_invalid(craft([&](BitWriter& w) {
                     two_symbol_map(w);
                     w.put(tables, 3);
                   }),
                   ErrorCode::kBadTableCount, std::to_string(tables) + " tables");
  }
  expect_invalid(craft([](BitWriter& w) {
                   two_symbol_map(w);
                   w.put(2, 3);
                   w.put(0, 15);
                 }),
                 ErrorCode::kBadSelectorCount, "0 selectors");
  expect_invalid(craft([](BitWriter& w) {
                   two_symbol_map(w);
                   w.put(2, 3);
                   w.put(1, 15);
                   w.put(0b110, 3);  // MTF index 2 with two tables
                 }),
                 ErrorCode::kBadSelector, "selector names table 3 of 2");
  expect_invalid(craft([](BitWriter& w) {
                   two_symbol_map(w);
                   w.put(6, 3);
                   w.put(1, 15);
                   w.put(0b1111110, 7);  // MTF index 6 with six tables
                 }),
                 ErrorCode::kBadSelector, "selector names table 7 of 6");
  // The error stands right after the one bit too many (the selectors start at bit 187: "BZh9",
  // the block header, the symbol map, the table and selector counts), also after good selectors
  // that moved every table through the selector MTF.
  for (unsigned tables = 2; tables <= 6; ++tables) {
    const Bytes file = craft([&](BitWriter& w) {
      two_symbol_map(w);
      w.put(tables, 3);
      w.put(tables + 1, 15);
      for (unsigned j = 0; j < tables; ++j) w.put((1u << (j + 1)) - 2, j + 1);  // j one bits, a zero: index j
    });
    SCOPED_TRACE(std::to_string(tables) + " tables");
    uint64_t bad_at = 187;
    for (unsigned j = 0; j < tables; ++j) bad_at += j + 1;
    bad_at += tables;  // the last selector: `tables` one bits (the body is followed by one bits)
    expect_invalid(file, ErrorCode::kBadSelector, "selector past the tables after good ones");
    EXPECT_EQ(decode_ours(file).error.bit_offset, bad_at);
  }
  struct Length {
    unsigned start;
    uint64_t steps;
    unsigned step_bits;
    std::string what;
  };
  for (const Length& l : {Length{0, 0, 0, "code length 0"}, Length{21, 0, 0, "code length 21"},
                          Length{31, 0, 0, "code length 31"}, Length{20, 0b10, 2, "code length 20 + 1"},
                          Length{1, 0b11, 2, "code length 1 - 1"}, Length{19, 0b1010, 4, "code length 19 + 2"}}) {
    expect_invalid(craft([&](BitWriter& w) {
                     two_symbol_map(w);
                     w.put(2, 3);
                     w.put(1, 15);
                     w.put(0, 1);
                     w.put(l.start, 5);
                     w.put(l.steps, l.step_bits);
                   }),
                   ErrorCode::kBadCodeLength, l.what);
  }
  // The second table's lengths go bad after the first table was fine.
  expect_invalid(craft([](BitWriter& w) {
                   two_symbol_map(w);
                   w.put(2, 3);
                   w.put(1, 15);
                   w.put(0, 1);
                   w.put(2, 5);
                   for (int s = 0; s < 4; ++s) w.put(0, 1);
                   w.put(20, 5);
                   w.put(0b0, 1);
                   w.put(0b10, 2);  // symbol 1: 21
                 }),
                 ErrorCode::kBadCodeLength, "second table, second symbol");
}

TEST(Damage, HandMadeInvalidSymbols) {
  // Four symbols of 3 bits: codes 000..011 are taken, 1xx match nothing.
  expect_invalid(craft([](BitWriter& w) {
                   two_symbol_map(w);
                   w.put(2, 3);
                   w.put(1, 15);
                   w.put(0, 1);
                   for (int t = 0; t < 2; ++t) {
                     w.put(3, 5);
                     for (int s = 0; s < 4; ++s) w.put(0, 1);
                   }
                   w.put(0b111, 3);
                 }),
                 ErrorCode::kBadHuffmanCode, "a code no symbol has");
  // 22 RUNA symbols: the run weight reaches 2^21, beyond any block.
  expect_invalid(craft([](BitWriter& w) {
                   two_symbol_map(w);
                   small_tables(w);
                   for (int i = 0; i < 22; ++i) w.put(0b00, 2);
                 }),
                 ErrorCode::kRunTooLong, "22 RUNA in a row");
  // 20 RUNB: a run of 2 * (2^20 - 1) bytes, more than a level-9 block holds.
  expect_invalid(craft([](BitWriter& w) {
                   two_symbol_map(w);
                   small_tables(w);
                   for (int i = 0; i < 20; ++i) w.put(0b01, 2);
                   w.put(0b11, 2);  // EOB
                 }),
                 ErrorCode::kBlockTooLong, "20 RUNB in a row");
  // More symbols than the selectors cover: 51 symbols with one selector.
  expect_invalid(craft([](BitWriter& w) {
                   two_symbol_map(w);
                   small_tables(w, 1);
                   for (int i = 0; i < 51; ++i) w.put(0b10, 2);  // MTF index 1
                 }),
                 ErrorCode::kTooManySelectorsUsed, "51 symbols, one selector");
  // An empty block: EOB first. origPtr 0 is not below the length 0.
  expect_invalid(craft([](BitWriter& w) {
                   two_symbol_map(w);
                   small_tables(w);
                   w.put(0b11, 2);
                 }),
                 ErrorCode::kBadOrigPtr, "empty block");
}

TEST(Damage, OriginPointerOutOfRange) {
  const Bytes pre = rle1_encode(text_bytes(2000, 15));
  for (uint32_t orig : {static_cast<uint32_t>(pre.size()), static_cast<uint32_t>(pre.size()) + 1, 900010u,
                        0xFFFFFFu}) {
    BlockSpec spec(pre);
    spec.orig_ptr = orig;
    expect_invalid(make_stream(9, {spec}), ErrorCode::kBadOrigPtr, "origPtr " + std::to_string(orig));
  }
  BlockSpec last(pre);
  last.orig_ptr = static_cast<uint32_t>(pre.size()) - 1;  // in range: decodes (to other bytes)
  last.crc = 0;
  const Bytes file = make_stream(9, {last});
  EXPECT_TRUE(agree(file, "origPtr n - 1 with a wrong CRC"));
  EXPECT_EQ(decode_ours(file).error.code, ErrorCode::kBlockCrcMismatch);
}

TEST(Damage, SelectorCountsBeyondTheLimit) {
  // libbz2 reads up to 32767 selectors and ignores those past 18002; so do we. Too few is fatal.
  const Bytes pre = rle1_encode(text_bytes(3000, 16));
  for (uint32_t selectors : {18001u, 18002u, 18003u, 20000u, 32767u}) {
    BlockSpec spec(pre);
    spec.selectors = selectors;
    const Bytes file = make_stream(9, {spec});
    EXPECT_TRUE(agree(file, std::to_string(selectors) + " selectors"));
    EXPECT_TRUE(decode_ours(file).ok()) << selectors;
  }
  BlockSpec few(pre);
  few.selectors = 3;
  expect_invalid(make_stream(9, {few}), ErrorCode::kTooManySelectorsUsed, "3 selectors");
}

}  // namespace
}  // namespace mibz2::test
