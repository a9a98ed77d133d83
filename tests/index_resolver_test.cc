// The resolution of an index build on its own (index/block_resolver.h): candidates made by hand, as
// the scan and the decoders of the builder would describe them, fed to a BlockResolver on one thread
// with nothing decoded and nothing read. Each case of the builder's (a clean stream, streams of
// other levels, false magics, every kind of damage, truncation, trailing garbage, what is not
// bzip2) is checked in its records, flags, notes and result.
#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

#include "bz2/crc32.h"
#include "index/block_resolver.h"
#include "io/source_bytes.h"

namespace mibz2::index {
namespace {

using bz2::ErrorCode;
using bz2::StreamStart;
using Kind = BlockResolver::Need::Kind;

constexpr uint64_t kHeaderBits = bz2::kStreamHeaderBits;  // "BZhN"
constexpr uint64_t kEosBits = bz2::kEndOfStreamBits;      // marker and combined CRC

// ---- candidates as the scan and the decoders describe them ------------------------------------

// A block mark at `bit` that decoded cleanly to `size` bytes, ending at `end_bit` where a mark starts.
Candidate good_block(uint64_t bit, uint64_t end_bit, uint32_t crc, uint64_t size) {
  Candidate c;
  c.bit = bit;
  c.kind = bz2::MarkKind::kBlock;
  c.state = Candidate::State::kDone;
  c.block.end_bit = end_bit;
  c.block.stored_crc = crc;
  c.block.computed_crc = crc;
  c.block.bwt_length = static_cast<uint32_t>(size);
  c.block.symbols_read = true;
  c.block.bytes_produced = true;
  c.size = size;
  c.next_is_mark = true;
  return c;
}

// A block mark whose decode failed with `code`: with its extent known when `end_bit` is given.
Candidate bad_block(uint64_t bit, ErrorCode code, uint64_t end_bit = 0) {
  Candidate c;
  c.bit = bit;
  c.kind = bz2::MarkKind::kBlock;
  c.state = Candidate::State::kDone;
  c.error = {code, bit + 100};
  if (end_bit) {
    c.block.end_bit = end_bit;
    c.block.symbols_read = true;
    c.block.bwt_length = 1000;
    c.next_is_mark = true;
  }
  return c;
}

// A block mark not decoded yet.
Candidate pending_block(uint64_t bit) {
  Candidate c;
  c.bit = bit;
  c.kind = bz2::MarkKind::kBlock;
  return c;
}

// An end-of-stream marker with its combined CRC, followed by `after`.
Candidate end_of_stream(uint64_t bit, uint32_t crc, StreamBoundary after = {StreamStart::kEnd, 0}) {
  Candidate c;
  c.bit = bit;
  c.kind = bz2::MarkKind::kEndOfStream;
  c.state = Candidate::State::kDone;
  c.eos_complete = true;
  c.eos_crc = crc;
  c.after_eos = after;
  return c;
}

uint32_t combined(std::initializer_list<uint32_t> crcs) {
  uint32_t c = 0;
  for (uint32_t crc : crcs) c = bz2::combine_stream_crc(c, crc);
  return c;
}

// The bytes a file of `bits` takes.
uint64_t bytes_of(uint64_t bits) { return (bits + 7) / 8; }

// Candidates in file order (moved: they own their decoded bytes).
template <class... C>
std::vector<Candidate> marks(C&&... c) {
  std::vector<Candidate> v;
  (v.push_back(std::forward<C>(c)), ...);
  return v;
}

// Feeds the whole file as one scanned piece (every candidate already decoded), resolves, and
// returns the result; the resolution must have finished.
BuildResult resolve_all(std::vector<Candidate> found, uint64_t file_size, StreamBoundary start,
                        ResolvedBlockSink* sink = nullptr) {
  BlockResolver r(sink);
  r.add_scanned(std::move(found), file_size, true, &start);
  r.resolve(file_size);
  EXPECT_TRUE(r.finished());
  EXPECT_EQ(r.need().kind, Kind::kNothing);
  return r.finished() ? r.take_result() : BuildResult{};
}

// The resolver waits for the decode of candidate `seq`, which comes back as `c`.
void decoded(BlockResolver& r, uint64_t seq, Candidate c, uint64_t file_size) {
  ASSERT_EQ(r.need().kind, Kind::kDecode);
  ASSERT_EQ(r.need().candidate, seq);
  *r.candidate(seq) = std::move(c);
  r.resolve(file_size);
}

constexpr StreamBoundary kLevel9{StreamStart::kStream, 9};

void expect_record(const BlockRecord& rec, uint64_t first_bit, uint64_t end_bit, uint64_t out_offset, uint32_t crc,
                   int level, uint8_t flags) {
  EXPECT_EQ(rec.first_bit, first_bit);
  EXPECT_EQ(rec.end_bit(), end_bit);
  EXPECT_EQ(rec.out_offset, out_offset);
  EXPECT_EQ(rec.crc, crc);
  EXPECT_EQ(rec.level(), level);
  EXPECT_EQ(rec.flags, flags);
}

// ---- sound files ------------------------------------------------------------------------------

TEST(BlockResolver, CleanStreamAsksForScanThenEachDecodeInOrder) {
  // "BZh9", two blocks, the end-of-stream marker.
  const uint64_t b0 = kHeaderBits, b1 = 5000, eos = 9000, size = bytes_of(eos + kEosBits);
  BlockResolver r;
  EXPECT_EQ(r.need().kind, Kind::kScan);  // nothing is known before the first scan
  r.resolve(size);
  EXPECT_EQ(r.need().kind, Kind::kScan);
  r.add_scanned(marks(pending_block(b0), pending_block(b1), end_of_stream(eos, combined({11, 0x2222}))), size, true,
                &kLevel9);
  r.resolve(size);
  ASSERT_EQ(r.need().kind, Kind::kDecode);
  EXPECT_EQ(r.need().candidate, 0u);
  EXPECT_EQ(r.resolved_bits(), b0);

  // Decodes that come out of order wait for the one before them.
  *r.candidate(1) = good_block(b1, eos, 0x2222, 700);
  r.resolve(size);
  ASSERT_EQ(r.need().kind, Kind::kDecode);
  EXPECT_EQ(r.need().candidate, 0u);
  EXPECT_EQ(r.blocks_resolved(), 0u);

  decoded(r, 0, good_block(b0, b1, 11, 900), size);
  ASSERT_TRUE(r.finished());
  EXPECT_EQ(r.need().kind, Kind::kNothing);
  EXPECT_EQ(r.candidate(2), nullptr);  // a finished resolution keeps no candidate
  const BuildResult res = r.take_result();
  EXPECT_TRUE(res.ok());
  EXPECT_TRUE(res.error.ok());
  EXPECT_TRUE(res.notes.empty());
  ASSERT_EQ(res.index.blocks.size(), 2u);
  expect_record(res.index.blocks[0], b0, b1, 0, 11, 9, BlockRecord::kStreamStart);
  expect_record(res.index.blocks[1], b1, eos, 900, 0x2222, 9, 0);
  EXPECT_EQ(res.index.decompressed_size, 1600u);
  EXPECT_EQ(res.index.stream_count, 1u);
  EXPECT_EQ(res.index.flags, 0u);
  EXPECT_EQ(res.index.damaged_blocks, 0u);
  EXPECT_EQ(res.index.trailing_bytes, 0u);
  EXPECT_EQ(res.index.truncated_at_bit, 0u);
}

TEST(BlockResolver, PiecesScannedOneAfterAnotherAreAskedForWhenTheCursorPassesThem) {
  const uint64_t b0 = kHeaderBits, b1 = 40000, eos = 90000, size = bytes_of(eos + kEosBits);
  BlockResolver r;
  // The first piece ends before the second block starts.
  r.add_scanned(marks(good_block(b0, b1, 1, 10)), b1 / 8 - 100, false, &kLevel9);
  r.resolve(size);
  EXPECT_EQ(r.need().kind, Kind::kScan);
  EXPECT_EQ(r.blocks_resolved(), 1u);
  EXPECT_EQ(r.resolved_bits(), b1);
  EXPECT_EQ(r.end_seq(), 1u);
  // Candidates are numbered on from the piece before.
  r.add_scanned(marks(pending_block(b1), end_of_stream(eos, combined({1, 2}))), size, true, nullptr);
  EXPECT_EQ(r.end_seq(), 3u);
  r.resolve(size);
  EXPECT_EQ(r.first_seq(), 1u);
  decoded(r, 1, good_block(b1, eos, 2, 20), size);
  ASSERT_TRUE(r.finished());
  const BuildResult res = r.take_result();
  EXPECT_TRUE(res.ok());
  EXPECT_EQ(res.index.blocks.size(), 2u);
  EXPECT_EQ(res.index.decompressed_size, 30u);
}

TEST(BlockResolver, TwoStreamsOfOtherLevels) {
  // "BZh1" block eos "BZh5" block eos: the second stream starts at the byte after the first's marker.
  const uint64_t eos_a = 3000, stream_b = bytes_of(eos_a + kEosBits);
  const uint64_t b_b = stream_b * 8 + kHeaderBits, eos_b = b_b + 4000, size = bytes_of(eos_b + kEosBits);
  const BuildResult res = resolve_all(
      marks(good_block(kHeaderBits, eos_a, 5, 100), end_of_stream(eos_a, combined({5}), {StreamStart::kStream, 5}),
            good_block(b_b, eos_b, 6, 200), end_of_stream(eos_b, combined({6}))),
      size, {StreamStart::kStream, 1});
  EXPECT_TRUE(res.ok());
  EXPECT_TRUE(res.notes.empty());
  ASSERT_EQ(res.index.blocks.size(), 2u);
  expect_record(res.index.blocks[0], kHeaderBits, eos_a, 0, 5, 1, BlockRecord::kStreamStart);
  expect_record(res.index.blocks[1], b_b, eos_b, 100, 6, 5, BlockRecord::kStreamStart);
  EXPECT_EQ(res.index.stream_count, 2u);
  EXPECT_EQ(res.index.decompressed_size, 300u);
}

TEST(BlockResolver, FalseMagicInsideABlockIsPassedWithoutItsDecode) {
  const uint64_t b1 = 8000, eos = 12000, size = bytes_of(eos + kEosBits);
  BlockResolver r;
  r.add_scanned(marks(good_block(kHeaderBits, b1, 1, 10), pending_block(3000), end_of_stream(5000, 77),
                      good_block(b1, eos, 2, 20), end_of_stream(eos, combined({1, 2}))),
                size, true, &kLevel9);
  r.resolve(size);
  // The marks inside the first block were never waited for: they start before its end.
  ASSERT_TRUE(r.finished());
  const BuildResult res = r.take_result();
  EXPECT_TRUE(res.ok());
  EXPECT_TRUE(res.notes.empty());
  ASSERT_EQ(res.index.blocks.size(), 2u);
  EXPECT_EQ(res.index.blocks[1].first_bit, b1);
}

// ---- damage -----------------------------------------------------------------------------------

// A stream of `level` whose first block (from bit 32) is `first`, then a sound block of 700 bytes
// from kSecond and the end-of-stream marker with `eos_crc`.
constexpr uint64_t kSecond = 5000, kEos = 9000;
BuildResult first_block_then_a_sound_one(Candidate first, int level, uint32_t eos_crc) {
  return resolve_all(marks(std::move(first), good_block(kSecond, kEos, 0x2222, 700), end_of_stream(kEos, eos_crc)),
                     bytes_of(kEos + kEosBits), {StreamStart::kStream, level});
}

// The first block's record is damaged with `flags`, the sound one follows it at `out_offset`, and
// the notes are `notes`.
void expect_damaged_then_sound(const BuildResult& res, uint32_t first_crc, uint8_t flags, uint64_t out_offset,
                               int level, const std::vector<std::string>& notes) {
  EXPECT_TRUE(res.ok());
  ASSERT_EQ(res.index.blocks.size(), 2u);
  expect_record(res.index.blocks[0], kHeaderBits, kSecond, 0, first_crc, level, BlockRecord::kStreamStart | flags);
  expect_record(res.index.blocks[1], kSecond, kEos, out_offset, 0x2222, level, 0);
  EXPECT_EQ(res.index.decompressed_size, out_offset + 700);
  EXPECT_EQ(res.index.damaged_blocks, 1u);
  const uint32_t undecodable = (flags & BlockRecord::kUndecodable) ? uint32_t{BlockIndex::kHasUndecodable} : 0u;
  EXPECT_EQ(res.index.flags, BlockIndex::kHasDamage | undecodable);
  EXPECT_EQ(res.notes, notes);
}

TEST(BlockResolver, CrcMismatchFollowedByAMarkKeepsItsPlaceAndSize) {
  Candidate bad = good_block(kHeaderBits, kSecond, 11, 900);
  bad.error = {ErrorCode::kBlockCrcMismatch, kHeaderBits};
  bad.block.computed_crc = 12;
  // The stored CRCs still make the combined one: the stream's CRC matches.
  expect_damaged_then_sound(first_block_then_a_sound_one(std::move(bad), 9, combined({11, 0x2222})), 11,
                            BlockRecord::kCrcMismatch, 900, 9,
                            {"block 0 at bit 32 (byte 4) is damaged: CRC mismatch (900 bytes at decompressed offset 0 "
                             "will read as I/O errors)"});
}

TEST(BlockResolver, CrcMismatchNotFollowedByAMarkIsADamagedStretch) {
  Candidate bad = good_block(kHeaderBits, kSecond - 3, 11, 900);
  bad.error = {ErrorCode::kBlockCrcMismatch, kHeaderBits};
  bad.next_is_mark = false;
  expect_damaged_then_sound(
      first_block_then_a_sound_one(std::move(bad), 9, combined({11, 0x2222})), 0, BlockRecord::kUndecodable, 900000, 9,
      {"block 0 at bit 32 (byte 4) cannot be decoded: block CRC mismatch at bit 32 (byte 4 + 0); searching for the "
       "next good block",
       "damaged stretch at compressed bit 32 (byte 4) .. bit 5000 (byte 625) stands as block 0 of 900000 unreadable "
       "bytes; decompressed offsets after it are shifted by an unknown amount"});
}

TEST(BlockResolver, UndecodableBlockOfKnownExtentStandsWithANominalSize) {
  // Its CRC is unknown, so the stream's cannot be checked: a wrong one is no further damage.
  expect_damaged_then_sound(
      first_block_then_a_sound_one(bad_block(kHeaderBits, ErrorCode::kBadOrigPtr, kSecond), 3, 0xdeadbeef), 0,
      BlockRecord::kUndecodable, 300000, 3,
      {"block 0 at bit 32 (byte 4) cannot be decoded: BWT origin pointer beyond the block length at bit 132 (byte 16 "
       "+ 4); it stands as 300000 unreadable bytes and offsets after it are shifted"});
}

TEST(BlockResolver, BlockLongerThanItsStreamLevelIsUndecodable) {
  // Decoded as level 9 (as the builder decodes every candidate): too long for level 1.
  expect_damaged_then_sound(
      first_block_then_a_sound_one(good_block(kHeaderBits, kSecond, 11, 150000), 1, combined({11, 0x2222})), 0,
      BlockRecord::kUndecodable, 100000, 1,
      {"block 0 at bit 32 (byte 4) cannot be decoded: block longer than its stream level 1 allows; it stands as "
       "100000 unreadable bytes and offsets after it are shifted"});
}

TEST(BlockResolver, DamagedStretchIsResynchronisedAtTheNextGoodBlock) {
  const uint64_t b2 = 9000, eos = 12000, size = bytes_of(eos + kEosBits);
  BlockResolver r;
  // Block 0's tables are broken (extent unknown); a false magic inside the stretch fails too; the
  // block at b2 decodes.
  r.add_scanned(marks(bad_block(kHeaderBits, ErrorCode::kBadHuffmanCode), pending_block(4000), pending_block(b2),
                      end_of_stream(eos, 0x1234)),
                size, true, &kLevel9);
  r.resolve(size);
  // The stretch ends only at a candidate that decodes: each is waited for in turn.
  decoded(r, 1, bad_block(4000, ErrorCode::kBadSelector), size);
  decoded(r, 2, good_block(b2, eos, 33, 500), size);
  ASSERT_TRUE(r.finished());
  const BuildResult res = r.take_result();
  EXPECT_TRUE(res.ok());
  ASSERT_EQ(res.index.blocks.size(), 2u);
  expect_record(res.index.blocks[0], kHeaderBits, b2, 0, 0, 9, BlockRecord::kStreamStart | BlockRecord::kUndecodable);
  expect_record(res.index.blocks[1], b2, eos, 900000, 33, 9, 0);
  EXPECT_EQ(res.index.flags, BlockIndex::kHasDamage | BlockIndex::kHasUndecodable);
  ASSERT_EQ(res.notes.size(), 2u);
  EXPECT_EQ(res.notes[0].rfind("block 0 at bit 32 (byte 4) cannot be decoded: ", 0), 0u) << res.notes[0];
  EXPECT_EQ(res.notes[1],
            "damaged stretch at compressed bit 32 (byte 4) .. bit 9000 (byte 1125) stands as block 0 of 900000 "
            "unreadable bytes; decompressed offsets after it are shifted by an unknown amount");
}

TEST(BlockResolver, NoMarkWhereOneMustStartIsResynchronisedAtAPlausibleEndOfStream) {
  // Block 0 ends where no mark is (its end bit was damaged): the stretch ends at the marker.
  const uint64_t eos = 9000, size = bytes_of(eos + kEosBits);
  Candidate b0 = good_block(kHeaderBits, 5000, 11, 900);
  const BuildResult res = resolve_all(marks(std::move(b0), end_of_stream(eos, 0x1234)), size, kLevel9);
  EXPECT_TRUE(res.ok());
  ASSERT_EQ(res.index.blocks.size(), 2u);
  expect_record(res.index.blocks[1], 5000, eos, 900, 0, 9, BlockRecord::kUndecodable);
  ASSERT_EQ(res.notes.size(), 2u);
  EXPECT_EQ(res.notes[0], "no block or end-of-stream marker at bit 5000 (byte 625) where one must start");
  EXPECT_EQ(res.notes[1].rfind("damaged stretch at compressed bit 5000 (byte 625) .. bit 9000 (byte 1125)", 0), 0u);
  EXPECT_EQ(res.index.stream_count, 1u);
}

TEST(BlockResolver, NewStreamAfterDamageStartsAtTheBlockAfterItsHeader) {
  // Stream A (level 9) is damaged from its first block on, through its end; a block right after a
  // "BZh2" header starts stream B, judged by level 2.
  const uint64_t b_b = 20000, eos_b = 26000, size = bytes_of(eos_b + kEosBits);
  Candidate first_of_b = good_block(b_b, eos_b, 44, 250000);  // too long for level 2
  first_of_b.header_before = StreamStart::kStream;
  first_of_b.header_level = 2;
  Candidate second_try = good_block(b_b, eos_b, 44, 1500);
  second_try.header_before = StreamStart::kStream;
  second_try.header_level = 2;
  {
    // Too long for level 2 (though not for 9): not where the damage ends; nothing after it decodes.
    const BuildResult res = resolve_all(marks(bad_block(kHeaderBits, ErrorCode::kBadTableCount), std::move(first_of_b),
                                              end_of_stream(eos_b, combined({44}))),
                                        size, kLevel9);
    // The end-of-stream marker is plausible: the stretch ends there, in stream A.
    ASSERT_EQ(res.index.blocks.size(), 1u);
    EXPECT_EQ(res.index.stream_count, 1u);
  }
  const BuildResult res = resolve_all(marks(bad_block(kHeaderBits, ErrorCode::kBadTableCount), std::move(second_try),
                                            end_of_stream(eos_b, combined({44}))),
                                      size, kLevel9);
  EXPECT_TRUE(res.ok());
  ASSERT_EQ(res.index.blocks.size(), 2u);
  expect_record(res.index.blocks[0], kHeaderBits, b_b, 0, 0, 9, BlockRecord::kStreamStart | BlockRecord::kUndecodable);
  expect_record(res.index.blocks[1], b_b, eos_b, 900000, 44, 2, BlockRecord::kStreamStart);
  EXPECT_EQ(res.index.stream_count, 2u);
  // Stream B's CRC is checked: it began cleanly.
  EXPECT_EQ(res.index.flags, BlockIndex::kHasDamage | BlockIndex::kHasUndecodable);
  EXPECT_EQ(res.index.damaged_blocks, 1u);
}

TEST(BlockResolver, NothingDecodableAfterDamageEndsTheFile) {
  const uint64_t size = 2000;
  const BuildResult res =
      resolve_all(marks(bad_block(kHeaderBits, ErrorCode::kBadTableCount), bad_block(6000, ErrorCode::kBadHuffmanCode)),
                  size, kLevel9);
  EXPECT_TRUE(res.ok());
  ASSERT_EQ(res.index.blocks.size(), 1u);
  expect_record(res.index.blocks[0], kHeaderBits, size * 8, 0, 0, 9,
                BlockRecord::kStreamStart | BlockRecord::kTruncated);
  EXPECT_EQ(res.index.truncated_at_bit, kHeaderBits);
  EXPECT_EQ(res.index.decompressed_size, 900000u);
  ASSERT_EQ(res.notes.size(), 2u);
  EXPECT_EQ(res.notes[1],
            "no decodable block after bit 32 (byte 4); a nominal 900000 bytes at decompressed offset 0 read as I/O "
            "errors");
}

// ---- truncation -------------------------------------------------------------------------------

// A level-9 stream of one sound block (900 bytes, from bit 32), then the file (`size` bytes) is
// cut at `cut_bit`: the rest stands as one truncated record of a nominal size, with one note.
void expect_cut_after_one_block(const BuildResult& res, uint64_t first_end, uint64_t cut_bit, uint64_t size,
                                const std::string& why) {
  EXPECT_TRUE(res.ok());  // a truncated file is indexed (and reads fail where it was cut)
  ASSERT_EQ(res.index.blocks.size(), 2u);
  expect_record(res.index.blocks[0], kHeaderBits, first_end, 0, 11, 9, BlockRecord::kStreamStart);
  expect_record(res.index.blocks[1], cut_bit, size * 8, 900, 0, 9, BlockRecord::kTruncated);
  EXPECT_EQ(res.index.truncated_at_bit, cut_bit);
  EXPECT_EQ(res.index.decompressed_size, 900900u);
  EXPECT_EQ(res.index.flags, BlockIndex::kHasDamage);
  EXPECT_EQ(res.index.damaged_blocks, 1u);
  EXPECT_EQ(res.index.stream_count, 1u);
  ASSERT_EQ(res.notes.size(), 1u);
  EXPECT_EQ(res.notes[0], why + "; a nominal 900000 bytes at decompressed offset 900 read as I/O errors");
}

TEST(BlockResolver, FileCutInsideABlock) {
  const uint64_t b1 = 5000, size = bytes_of(7000);
  const BuildResult res =
      resolve_all(marks(good_block(kHeaderBits, b1, 11, 900), bad_block(b1, ErrorCode::kTruncated)), size, kLevel9);
  expect_cut_after_one_block(res, b1, b1, size,
                             "file ends inside block 1 which starts at bit 5000 (byte 625) (truncated file)");
}

TEST(BlockResolver, FileCutBeforeTheEndOfStreamMarker) {
  const uint64_t b1 = 5000, size = bytes_of(b1 + 20);  // less than a mark after the block
  const BuildResult res = resolve_all(marks(good_block(kHeaderBits, b1, 11, 900)), size, kLevel9);
  expect_cut_after_one_block(
      res, b1, b1, size,
      "file ends at bit 5000 (byte 625) inside stream 1 before its end-of-stream marker (truncated file)");
}

TEST(BlockResolver, FileCutInsideTheEndOfStreamMarker) {
  const uint64_t eos = 5000, size = bytes_of(eos + 60);
  Candidate cut = end_of_stream(eos, 0);
  cut.eos_complete = false;
  const BuildResult res = resolve_all(marks(good_block(kHeaderBits, eos, 11, 900), std::move(cut)), size, kLevel9);
  expect_cut_after_one_block(res, eos, eos, size,
                             "file ends inside the end-of-stream marker at bit 5000 (byte 625) (truncated file)");
}

TEST(BlockResolver, FileCutInsideTheNextStreamHeader) {
  const uint64_t eos = 5000, next = bytes_of(eos + kEosBits), size = next + 2;  // "BZ"
  const BuildResult res = resolve_all(
      marks(good_block(kHeaderBits, eos, 11, 900), end_of_stream(eos, combined({11}), {StreamStart::kTruncated, 0})),
      size, kLevel9);
  expect_cut_after_one_block(res, eos, next * 8, size,
                             "file ends inside a stream header at byte " + std::to_string(next) + " (truncated file)");
}

// ---- stream CRCs ------------------------------------------------------------------------------

TEST(BlockResolver, EmptyStreamWithACombinedCrcOtherThanZero) {
  const uint64_t size = bytes_of(kHeaderBits + kEosBits);
  const BuildResult res = resolve_all(marks(end_of_stream(kHeaderBits, 0x00c0ffee)), size, {StreamStart::kStream, 4});
  EXPECT_TRUE(res.ok());
  ASSERT_EQ(res.index.blocks.size(), 1u);
  expect_record(res.index.blocks[0], kHeaderBits, kHeaderBits + kEosBits, 0, 0, 4,
                BlockRecord::kStreamStart | BlockRecord::kStreamCrcMismatch | BlockRecord::kUndecodable);
  EXPECT_EQ(res.index.decompressed_size, 400000u);
  EXPECT_EQ(res.index.flags, BlockIndex::kHasDamage | BlockIndex::kHasUndecodable | BlockIndex::kStreamCrcMismatch);
  ASSERT_EQ(res.notes.size(), 1u);
  EXPECT_EQ(res.notes[0],
            "empty stream 1 with a combined CRC of 0x00c0ffee at bit 80 (byte 10): a nominal 400000 bytes read as "
            "I/O errors");
}

TEST(BlockResolver, EmptyStreamWithACombinedCrcOfZeroIsSound) {
  const uint64_t size = bytes_of(kHeaderBits + kEosBits);
  const BuildResult res = resolve_all(marks(end_of_stream(kHeaderBits, 0)), size, kLevel9);
  EXPECT_TRUE(res.ok());
  EXPECT_TRUE(res.index.blocks.empty());
  EXPECT_EQ(res.index.stream_count, 1u);
  EXPECT_TRUE(res.notes.empty());
}

TEST(BlockResolver, StreamCrcMismatchMarksTheStreamsLastBlock) {
  const uint64_t b1 = 5000, eos = 9000, size = bytes_of(eos + kEosBits);
  const BuildResult res = resolve_all(marks(good_block(kHeaderBits, b1, 11, 900), good_block(b1, eos, 0x2222, 700),
                                            end_of_stream(eos, combined({0x2222, 11}))),
                                      size, kLevel9);
  EXPECT_TRUE(res.ok());
  ASSERT_EQ(res.index.blocks.size(), 2u);
  EXPECT_EQ(res.index.blocks[0].flags, BlockRecord::kStreamStart);
  expect_record(res.index.blocks[1], b1, eos, 900, 0x2222, 9, BlockRecord::kStreamCrcMismatch);
  EXPECT_EQ(res.index.damaged_blocks, 1u);
  EXPECT_EQ(res.index.flags, BlockIndex::kHasDamage | BlockIndex::kStreamCrcMismatch);
  EXPECT_EQ(res.index.decompressed_size, 1600u);
  ASSERT_EQ(res.notes.size(), 1u);
  char expected[200];
  std::snprintf(expected, sizeof expected,
                "stream 1 combined CRC mismatch at bit 9048 (byte 1131) (stored 0x%08x, blocks give 0x%08x): its last "
                "block, block 1, reads as I/O errors",
                combined({0x2222, 11}), combined({11, 0x2222}));
  EXPECT_EQ(res.notes[0], expected);
}

TEST(BlockResolver, StreamCrcMismatchOnADamagedLastBlockCountsItOnce) {
  const uint64_t eos = 5000, size = bytes_of(eos + kEosBits);
  Candidate bad = good_block(kHeaderBits, eos, 11, 900);
  bad.error = {ErrorCode::kBlockCrcMismatch, kHeaderBits};
  const BuildResult res = resolve_all(marks(std::move(bad), end_of_stream(eos, 0x77)), size, kLevel9);
  ASSERT_EQ(res.index.blocks.size(), 1u);
  EXPECT_EQ(res.index.blocks[0].flags,
            BlockRecord::kStreamStart | BlockRecord::kCrcMismatch | BlockRecord::kStreamCrcMismatch);
  EXPECT_EQ(res.index.damaged_blocks, 1u);
  EXPECT_EQ(res.notes.size(), 2u);
}

// ---- what follows the last stream, and what is not bzip2 ----------------------------------------

TEST(BlockResolver, TrailingGarbageIsCounted) {
  const uint64_t eos = 5000, end = bytes_of(eos + kEosBits), size = end + 16;
  const BuildResult res = resolve_all(
      marks(good_block(kHeaderBits, eos, 11, 900), end_of_stream(eos, combined({11}), {StreamStart::kNotBzip2, 0})),
      size, kLevel9);
  EXPECT_TRUE(res.ok());
  EXPECT_EQ(res.index.trailing_bytes, 16u);
  EXPECT_EQ(res.index.flags, 0u);
  ASSERT_EQ(res.notes.size(), 1u);
  EXPECT_EQ(res.notes[0], "trailing garbage after the last stream ignored: 16 bytes at byte " + std::to_string(end));
}

TEST(BlockResolver, TrailingGarbageOfASourceReadOnceIsNotMeasured) {
  const uint64_t eos = 5000, end = bytes_of(eos + kEosBits);
  const BuildResult res = resolve_all(
      marks(good_block(kHeaderBits, eos, 11, 900), end_of_stream(eos, combined({11}), {StreamStart::kNotBzip2, 0})),
      io::SourceBytes::kUnknownSize, kLevel9);
  EXPECT_TRUE(res.ok());
  EXPECT_EQ(res.index.trailing_bytes, 1u);
  ASSERT_EQ(res.notes.size(), 1u);
  EXPECT_EQ(res.notes[0], "trailing garbage after the last stream ignored, from byte " + std::to_string(end));
}

// A file whose start is no usable bzip2: no index, bad input (EILSEQ), and the words that say why.
TEST(BlockResolver, AStartThatIsNotBzip2IsBadInput) {
  const struct {
    uint64_t size;
    StreamStart start;
    const char* why;
  } cases[] = {
      {13, StreamStart::kNotBzip2, "not a bzip2 file (no \"BZh1\"..\"BZh9\" header)"},
      {0, StreamStart::kEnd, "empty file (no bzip2 stream header)"},
      {3, StreamStart::kTruncated, "file ends inside the bzip2 stream header"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.why);
    const BuildResult res = resolve_all(marks(), c.size, {c.start, 0});
    EXPECT_FALSE(res.ok());
    EXPECT_EQ(res.error.message(), c.why);
    EXPECT_EQ(res.error.code(), EILSEQ);
    EXPECT_TRUE(res.index.blocks.empty());
    EXPECT_EQ(res.index.stream_count, 0u);
  }
}

// ---- the sink, and an end from outside ----------------------------------------------------------

class RecordingSink final : public ResolvedBlockSink {
 public:
  struct Handed {
    size_t block;
    BlockRecord record;
    size_t bytes;
  };
  bool has_room(uint64_t, size_t) const override { return true; }
  void on_block(size_t block, const BlockRecord& record, base::ByteBuffer bytes) override {
    EXPECT_FALSE(finished);
    handed.push_back({block, record, bytes.size()});
  }
  void on_finished() override {
    EXPECT_FALSE(finished);
    finished = true;
  }
  void blocks_handed() override {}
  std::vector<Handed> handed;
  bool finished = false;
};

base::ByteBuffer bytes_of_size(size_t n) {
  base::ByteBuffer b;
  b.resize_uninitialized(n);
  return b;
}

TEST(BlockResolver, SinkGetsEachBlockInOrderWithItsBytesButDamagedOnes) {
  const uint64_t b1 = 5000, b2 = 9000, eos = 12000, size = bytes_of(eos + kEosBits);
  Candidate c0 = good_block(kHeaderBits, b1, 11, 900);
  c0.bytes = bytes_of_size(900);
  Candidate c1 = good_block(b1, b2, 0x2222, 700);
  c1.error = {ErrorCode::kBlockCrcMismatch, b1};
  c1.bytes = bytes_of_size(700);  // never handed: the block is damaged
  Candidate c2 = good_block(b2, eos, 33, 300);
  c2.bytes = bytes_of_size(300);
  RecordingSink sink;
  const BuildResult res =
      resolve_all(marks(std::move(c0), std::move(c1), std::move(c2), end_of_stream(eos, combined({11, 0x2222, 33}))),
                  size, kLevel9, &sink);
  EXPECT_TRUE(res.ok());
  EXPECT_TRUE(sink.finished);
  ASSERT_EQ(sink.handed.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(sink.handed[i].block, i);
    EXPECT_EQ(sink.handed[i].record.first_bit, res.index.blocks[i].first_bit);
    EXPECT_EQ(sink.handed[i].record.flags, res.index.blocks[i].flags);
  }
  EXPECT_EQ(sink.handed[0].bytes, 900u);
  EXPECT_EQ(sink.handed[1].bytes, 0u);
  EXPECT_EQ(sink.handed[2].bytes, 300u);
}

TEST(BlockResolver, FailEndsTheBuildWithItsErrorOnce) {
  const uint64_t b1 = 5000, eos = 9000, size = bytes_of(eos + kEosBits);
  RecordingSink sink;
  BlockResolver r(&sink);
  r.add_scanned(marks(good_block(kHeaderBits, b1, 11, 900), pending_block(b1), end_of_stream(eos, 0)), size, true,
                &kLevel9);
  r.resolve(size);
  ASSERT_EQ(r.need().kind, Kind::kDecode);
  r.fail(base::Status::os_error(EIO, "read error at byte 600 (a read of 20 bytes): Input/output error (EIO)"));
  EXPECT_TRUE(r.finished());
  EXPECT_TRUE(sink.finished);
  EXPECT_EQ(r.candidate(1), nullptr);  // a decode that comes back now finds its candidate gone
  EXPECT_EQ(r.first_seq(), 3u);
  r.fail(base::Status::error(ECANCELED, "cancelled"));              // too late: the first end stands
  r.add_scanned(marks(pending_block(20000)), size, true, nullptr);  // kept by no one
  EXPECT_EQ(r.end_seq(), 3u);
  const BuildResult res = r.take_result();
  EXPECT_FALSE(res.ok());
  EXPECT_EQ(res.error.message(), "read error at byte 600 (a read of 20 bytes): Input/output error (EIO)");
  EXPECT_EQ(res.error.code(), EIO);
  ASSERT_EQ(res.index.blocks.size(), 1u);
  EXPECT_EQ(res.index.decompressed_size, 900u);
}

}  // namespace
}  // namespace mibz2::index
