// Indexes of damaged sources: a block whose CRC fails keeps its place and size (marked); a block
// whose tables are broken stands with a nominal size (marked undecodable) and the blocks after it
// are still found, with correct bytes at shifted offsets; a file cut anywhere ends at its last
// complete block; trailing garbage is counted; what is not bzip2 at all is refused with a reason.
// Every build runs under a watchdog (build_guarded): the build must always finish.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <thread>

#include "bz2/stream_parser.h"
#include "catalog_test_support.h"
#include "index/index_format.h"
#include "index/index_store.h"

namespace mibz2::test {
namespace {

using index::BlockIndex;
using index::BlockRecord;

// Two streams: five level-1 blocks, then two level-2 blocks.
struct Base {
  Bytes plain;
  Bytes file;
  FileLayout layout;
  BlockIndex index;
  size_t stream_b_first_block = 0;
};

const Base& base() {
  static const Base b = [] {
    Base x;
    const Bytes a = text_bytes(420000, 21), c = text_bytes(250000, 22);
    const Bytes fa = libbz2_compress(a, 1), fc = libbz2_compress(c, 2);
    x.plain = concat({&a, &c});
    x.file = concat({&fa, &fc});
    if (!walk_file(x.file, &x.layout)) std::abort();
    index::BuildResult r = build_guarded(x.file, 1);
    if (!r.ok()) std::abort();
    x.index = r.index;
    for (size_t i = 0; i < x.layout.blocks.size(); ++i)
      if (x.layout.blocks[i].stream == 1) {
        x.stream_b_first_block = i;
        break;
      }
    return x;
  }();
  return b;
}

Bytes slice(const Bytes& b, uint64_t off, uint64_t len) {
  return Bytes(b.begin() + static_cast<std::ptrdiff_t>(off), b.begin() + static_cast<std::ptrdiff_t>(off + len));
}

bool any_note_has(const std::vector<std::string>& notes, const std::string& what) {
  return std::any_of(notes.begin(), notes.end(), [&](const std::string& n) { return n.find(what) != std::string::npos; });
}

std::string all_notes(const std::vector<std::string>& notes) {
  std::string s;
  for (const auto& n : notes) s += "\n  " + n;
  return s;
}

// The blocks of the damaged file other than `damaged` hold the original bytes; `shift` is how far
// blocks after `damaged` moved in the decompressed file.
void expect_other_blocks_intact(const Bytes& file, const BlockIndex& idx, const std::vector<size_t>& damaged,
                                int64_t shift_after_last_damaged = 0) {
  const Base& b = base();
  IndexedBytes reader(file, idx);
  ASSERT_EQ(idx.blocks.size(), b.index.blocks.size());
  const size_t last_damaged = *std::max_element(damaged.begin(), damaged.end());
  for (size_t i = 0; i < idx.blocks.size(); ++i) {
    if (std::find(damaged.begin(), damaged.end(), i) != damaged.end()) {
      EXPECT_FALSE(reader.range(idx.blocks[i].out_offset, 1).has_value()) << "damaged block " << i << " served";
      continue;
    }
    const BlockSpan& orig = b.layout.blocks[i];
    const int64_t shift = i > last_damaged ? shift_after_last_damaged : 0;
    ASSERT_EQ(static_cast<int64_t>(idx.blocks[i].out_offset), static_cast<int64_t>(orig.out_offset) + shift) << i;
    const std::optional<Bytes> got = reader.range(idx.blocks[i].out_offset, orig.out_size);
    ASSERT_TRUE(got.has_value()) << "block " << i;
    EXPECT_TRUE(same_bytes(*got, slice(b.plain, orig.out_offset, orig.out_size))) << "block " << i;
  }
}

std::vector<size_t> interesting_blocks() {
  const Base& b = base();
  const size_t n = b.layout.blocks.size();
  // First, middle, last of stream A, first of stream B, last of the file.
  return {0, 2, b.stream_b_first_block - 1, b.stream_b_first_block, n - 1};
}

TEST(IndexDamage, BaseFileShape) {
  const Base& b = base();
  ASSERT_EQ(b.layout.stream_bytes.size(), 2u);
  ASSERT_EQ(b.stream_b_first_block, 5u);
  ASSERT_EQ(b.layout.blocks.size(), 7u);
  EXPECT_TRUE(index_matches_layout(b.index, b.layout, b.plain.size()));
}

TEST(IndexDamage, CrcMismatchBlockKeepsItsPlaceAndSize) {
  const Base& b = base();
  for (size_t k : interesting_blocks()) {
    SCOPED_TRACE("block " + std::to_string(k));
    const std::optional<uint64_t> bit = find_crc_only_flip(b.file, b.layout.blocks[k]);
    ASSERT_TRUE(bit.has_value()) << "no data bit found whose flip only breaks the CRC";
    Bytes bad = b.file;
    flip_bit(bad, *bit);
    EXPECT_EQ(decode_ours(bad).error.code, bz2::ErrorCode::kBlockCrcMismatch);
    EXPECT_FALSE(libbz2_decompress(bad).ok);

    const index::BuildResult r = build_guarded(bad, 1);
    ASSERT_TRUE(r.ok()) << r.error;
    BlockIndex want = b.index;
    mark_damaged(want, k, BlockRecord::kCrcMismatch);
    want.damaged_blocks = 1;
    want.flags = BlockIndex::kHasDamage;
    EXPECT_TRUE(same_index(r.index, want));
    EXPECT_TRUE(r.index.blocks[k].crc_mismatch());
    EXPECT_FALSE(r.index.blocks[k].undecodable());
    EXPECT_EQ(r.index.block_size(k), b.layout.blocks[k].out_size);
    ASSERT_EQ(r.notes.size(), 1u) << all_notes(r.notes);
    EXPECT_TRUE(any_note_has(r.notes, "block " + std::to_string(k))) << all_notes(r.notes);
    EXPECT_TRUE(any_note_has(r.notes, "CRC")) << all_notes(r.notes);
    expect_other_blocks_intact(bad, r.index, {k});
  }
}

// The index an undecodable block k gives: its record keeps its extent, stands for a nominal
// level * 100000 bytes, and everything after it moves by the difference.
BlockIndex undecodable_expectation(size_t k, int64_t* shift) {
  const Base& b = base();
  BlockIndex want = b.index;
  const BlockSpan& s = b.layout.blocks[k];
  const uint64_t nominal = static_cast<uint64_t>(s.level) * 100000;
  *shift = static_cast<int64_t>(nominal) - static_cast<int64_t>(s.out_size);
  const BlockRecord old = want.blocks[k];
  want.blocks.mutable_at(k) = BlockRecord::make(s.start_bit, s.level,
                                     BlockRecord::kUndecodable | (old.stream_start() ? BlockRecord::kStreamStart : 0),
                                     old.out_offset, old.bit_length, 0);
  mark_damaged(want, k, 0);
  for (size_t i = k + 1; i < want.blocks.size(); ++i)
    want.blocks.mutable_at(i).out_offset = static_cast<uint64_t>(static_cast<int64_t>(want.blocks[i].out_offset) + *shift);
  want.decompressed_size = static_cast<uint64_t>(static_cast<int64_t>(want.decompressed_size) + *shift);
  want.damaged_blocks = 1;
  want.flags = BlockIndex::kHasDamage | BlockIndex::kHasUndecodable;
  return want;
}

TEST(IndexDamage, BrokenTablesMakeAnUndecodableBlockAndLaterBlocksStay) {
  const Base& b = base();
  for (size_t k : interesting_blocks()) {
    SCOPED_TRACE("block " + std::to_string(k));
    const std::optional<uint64_t> bit = find_early_failure_flip(b.file, b.layout.blocks[k]);
    ASSERT_TRUE(bit.has_value()) << "no table bit found whose flip stops the decode early";
    Bytes bad = b.file;
    flip_bit(bad, *bit);
    EXPECT_FALSE(decode_ours(bad).ok());

    const index::BuildResult r = build_guarded(bad, 1);
    ASSERT_TRUE(r.ok()) << r.error;
    int64_t shift = 0;
    const BlockIndex want = undecodable_expectation(k, &shift);
    EXPECT_TRUE(same_index(r.index, want)) << all_notes(r.notes);
    EXPECT_EQ(r.index.block_size(k), static_cast<uint64_t>(b.layout.blocks[k].level) * 100000);
    EXPECT_TRUE(any_note_has(r.notes, "cannot be decoded")) << all_notes(r.notes);
    expect_other_blocks_intact(bad, r.index, {k}, shift);
  }
}

TEST(IndexDamage, BadOriginPointerIsUndecodableWithAKnownExtent) {
  // The symbols are read (so the block's end is known) but the inverse BWT cannot start.
  const Base& b = base();
  for (size_t k : interesting_blocks()) {
    SCOPED_TRACE("block " + std::to_string(k));
    const BlockSpan& s = b.layout.blocks[k];
    Bytes bad = b.file;
    set_bits(bad, s.start_bit + 48 + 32 + 1, 24, s.bwt_length + 5);
    bz2::BlockDecoder decoder;
    base::ByteBuffer out;
    bz2::BlockResult res;
    const bz2::Error e = decoder.decode(bad, s.start_bit, s.level, out, res);
    ASSERT_EQ(e.code, bz2::ErrorCode::kBadOrigPtr) << bz2::to_string(e);
    ASSERT_TRUE(res.symbols_read);

    const index::BuildResult r = build_guarded(bad, 1);
    ASSERT_TRUE(r.ok()) << r.error;
    int64_t shift = 0;
    const BlockIndex want = undecodable_expectation(k, &shift);
    EXPECT_TRUE(same_index(r.index, want)) << all_notes(r.notes);
    expect_other_blocks_intact(bad, r.index, {k}, shift);
  }
}

TEST(IndexDamage, TwoDamagedBlocks) {
  const Base& b = base();
  const std::optional<uint64_t> crc_bit = find_crc_only_flip(b.file, b.layout.blocks[1]);
  const std::optional<uint64_t> table_bit = find_early_failure_flip(b.file, b.layout.blocks[5]);
  ASSERT_TRUE(crc_bit && table_bit);
  Bytes bad = b.file;
  flip_bit(bad, *crc_bit);
  flip_bit(bad, *table_bit);
  const index::BuildResult r = build_guarded(bad, 1);
  ASSERT_TRUE(r.ok()) << r.error;
  int64_t shift = 0;
  BlockIndex want = undecodable_expectation(5, &shift);
  mark_damaged(want, 1, BlockRecord::kCrcMismatch);
  want.damaged_blocks = 2;
  EXPECT_TRUE(same_index(r.index, want)) << all_notes(r.notes);
  // One note for the CRC mismatch; two for the undecodable block (the failure, then the resync).
  EXPECT_EQ(r.notes.size(), 3u) << all_notes(r.notes);
  expect_other_blocks_intact(bad, r.index, {1, 5}, shift);
}

TEST(IndexDamage, StreamCrcMismatchMakesTheStreamsLastBlockUnreadable) {
  const Base& b = base();
  Bytes bad = b.file;
  flip_bit(bad, b.layout.eos_bits[0] + 48 + 7);  // in stream A's combined CRC
  const index::BuildResult r = build_guarded(bad, 1);
  ASSERT_TRUE(r.ok()) << r.error;
  BlockIndex want = b.index;
  want.flags = BlockIndex::kStreamCrcMismatch | BlockIndex::kHasDamage;
  mark_damaged(want, b.stream_b_first_block - 1, BlockRecord::kStreamCrcMismatch);
  want.damaged_blocks = 1;
  EXPECT_TRUE(same_index(r.index, want));
  EXPECT_TRUE(any_note_has(r.notes, "combined CRC")) << all_notes(r.notes);
}

// ---- truncation -----------------------------------------------------------------------------------

// What the index of the base file cut to `cut` bytes must be: the blocks that are whole, then (when
// the cut is inside a stream) one truncated record for the rest, a nominal block of the stream's
// level that is never served.
BlockIndex truncated_expectation(uint64_t cut) {
  const Base& b = base();
  const uint64_t cut_bits = cut * 8;
  BlockIndex want;
  auto truncated_at = [&](uint64_t bit, int level, bool first_of_stream) {
    want.truncated_at_bit = bit;
    const uint8_t flags = BlockRecord::kTruncated | (first_of_stream ? BlockRecord::kStreamStart : 0);
    want.blocks.push_back(BlockRecord::make(bit, level, flags, want.decompressed_size, cut_bits - bit, 0));
    want.newlines.push_back(index::kUnknownNewlines);
    want.decompressed_size += index::nominal_block_size(level);
    want.damaged_blocks = 1;
    want.flags = BlockIndex::kHasDamage;
    return want;
  };
  for (size_t s = 0; s < b.layout.stream_bytes.size(); ++s) {
    const uint64_t header = b.layout.stream_bytes[s] * 8;
    if (cut_bits == header && s > 0) {  // ends exactly between streams: whole streams, no damage
      want.line_count = sed_lines(std::span(b.plain).first(want.decompressed_size));
      return want;
    }
    // A cut header: the rest is judged by the stream before it.
    if (cut_bits < header + bz2::kStreamHeaderBits) return truncated_at(header, want.blocks.back().level(), false);
    want.stream_count = s + 1;
    bool first = true;
    int level = 0;
    for (size_t i = 0; i < b.layout.blocks.size(); ++i) {
      const BlockSpan& blk = b.layout.blocks[i];
      if (blk.stream != s) continue;
      level = blk.level;
      if (blk.end_bit > cut_bits) return truncated_at(blk.start_bit, blk.level, first);
      want.blocks.push_back(b.index.blocks[i]);
      want.newlines.push_back(b.index.newlines[i]);
      want.decompressed_size += blk.out_size;
      first = false;
    }
    if (b.layout.eos_bits[s] + bz2::kEndOfStreamBits > cut_bits) return truncated_at(b.layout.eos_bits[s], level, first);
  }
  want.line_count = sed_lines(b.plain);
  return want;
}

TEST(IndexDamage, FileCutAnywhereEndsInAnUnreadableNominalBlock) {
  const Base& b = base();
  std::vector<uint64_t> cuts;
  for (const BlockSpan& s : b.layout.blocks) {
    const uint64_t first = s.start_bit / 8, end = (s.end_bit + 7) / 8;
    for (uint64_t c : {first + 1, first + 4, (first + end) / 2, end - 2, end - 1, end, end + 1, end + 3}) cuts.push_back(c);
  }
  for (size_t s = 0; s < b.layout.stream_bytes.size(); ++s) {
    const uint64_t eos = b.layout.eos_bits[s] / 8;
    for (uint64_t c : {eos + 1, eos + 6, eos + 8}) cuts.push_back(c);
    const uint64_t hdr = b.layout.stream_bytes[s];
    for (uint64_t c : {hdr, hdr + 1, hdr + 2, hdr + 3, hdr + 4, hdr + 5}) cuts.push_back(c);
  }
  cuts.push_back(b.file.size() - 1);
  cuts.push_back(b.file.size());
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());

  for (uint64_t cut : cuts) {
    SCOPED_TRACE("cut to " + std::to_string(cut) + " of " + std::to_string(b.file.size()) + " bytes");
    const Bytes part = slice(b.file, 0, cut);
    const index::BuildResult r = build_guarded(part, 1);
    if (cut < 4) {
      EXPECT_FALSE(r.ok());
      EXPECT_FALSE(r.error.message().empty());
      continue;
    }
    ASSERT_TRUE(r.ok()) << r.error;
    const BlockIndex want = truncated_expectation(cut);
    EXPECT_TRUE(same_index(r.index, want)) << all_notes(r.notes);
    if (want.truncated_at_bit) {
      EXPECT_TRUE(any_note_has(r.notes, "truncated") || any_note_has(r.notes, "ends")) << all_notes(r.notes);
    } else {
      EXPECT_TRUE(r.notes.empty()) << all_notes(r.notes);
    }
    // What is whole reads back as the original's prefix; the truncated rest never reads.
    IndexedBytes reader(part, r.index);
    const uint64_t good = want.truncated_at_bit ? want.blocks.back().out_offset : want.decompressed_size;
    const std::optional<Bytes> got = reader.range(0, good);
    ASSERT_TRUE(got.has_value());
    EXPECT_TRUE(same_bytes(*got, slice(b.plain, 0, good)));
    if (want.truncated_at_bit) {
      EXPECT_FALSE(reader.range(good, 1).has_value());
    }
  }
}

// ---- garbage and non-bzip2 --------------------------------------------------------------------------

TEST(IndexDamage, TrailingGarbageIsCountedAndIgnored) {
  const Base& b = base();
  Bytes random = random_bytes(5000, 5);
  random[0] = 'x';
  const std::vector<std::pair<std::string, Bytes>> garbage = {
      {"text", to_bytes("this is trailing garbage\n")},
      {"zeros", Bytes(1000, 0)},
      {"one byte", to_bytes("\n")},
      {"level digit 0", to_bytes("BZh0 looks like a header")},
      {"random", random},
  };
  for (const auto& [name, g] : garbage) {
    SCOPED_TRACE(name);
    const Bytes file = concat({&b.file, &g});
    const LibResult lib = libbz2_decompress(file);
    ASSERT_TRUE(lib.ok) << "bzip2 ignores it too";
    const index::BuildResult r = build_guarded(file, 1);
    ASSERT_TRUE(r.ok()) << r.error;
    BlockIndex want = b.index;
    want.trailing_bytes = g.size();
    EXPECT_TRUE(same_index(r.index, want));
    EXPECT_TRUE(any_note_has(r.notes, "trailing garbage")) << all_notes(r.notes);
  }
}

TEST(IndexDamage, NotBzip2OrEmptyIsRefusedWithAReason) {
  const Bytes stream = libbz2_compress(text_bytes(1000, 1), 9);
  Bytes prefixed = to_bytes("junk before the stream ");
  prefixed.insert(prefixed.end(), stream.begin(), stream.end());
  Bytes random = random_bytes(100000, 77);
  random[0] = 0;
  const std::vector<std::tuple<std::string, Bytes, std::string>> cases = {
      {"empty", {}, "empty"},
      {"text", to_bytes("hello, world\n"), "not a bzip2"},
      {"one zero byte", Bytes(1, 0), "not a bzip2"},
      {"B", to_bytes("B"), "ends inside"},
      {"BZ", to_bytes("BZ"), "ends inside"},
      {"BZh", to_bytes("BZh"), "ends inside"},
      {"BZh0", to_bytes("BZh0 and more"), "not a bzip2"},
      {"gzip", Bytes{0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 3}, "not a bzip2"},
      {"random", random, "not a bzip2"},
      {"stream after junk", prefixed, "not a bzip2"},
  };
  TempDir dir;
  index::IndexStore store((dir.path() / "idx").string());
  for (const auto& [name, data, phrase] : cases) {
    SCOPED_TRACE(name);
    const index::BuildResult r = build_guarded(data, 1);
    EXPECT_FALSE(r.ok());
    EXPECT_NE(r.error.message().find(phrase), std::string::npos) << r.error;
    EXPECT_TRUE(r.index.blocks.empty());

    const std::string path = dir.write(name + ".bz2", data).string();
    const catalog::IndexStatus o = obtain_guarded(path, store, 1);
    EXPECT_FALSE(o.ready());
    EXPECT_FALSE(o.error.message().empty());
    EXPECT_FALSE(o.index);
    EXPECT_FALSE(o.origin.saved);
    EXPECT_FALSE(std::filesystem::exists(store.path_for(identity_of(path)))) << "no index is saved for a file that is not bzip2";
  }
}

TEST(IndexDamage, HeaderFollowedByNothingUsableFinishes) {
  // A stream header and then nothing, or garbage: no blocks, and bzip2 -d rejects it.
  Bytes junk = to_bytes("BZh9");
  const Bytes noise = random_bytes(20000, 3);
  junk.insert(junk.end(), noise.begin(), noise.end());
  for (const Bytes& data : {to_bytes("BZh9"), junk}) {
    const index::BuildResult r = build_guarded(data, 1);
    if (!r.ok()) {
      EXPECT_FALSE(r.error.message().empty());
      continue;
    }
    // Nothing readable: one nominal block that reads as errors, never an empty file.
    ASSERT_EQ(r.index.blocks.size(), 1u);
    EXPECT_TRUE(r.index.blocks[0].truncated());
    EXPECT_EQ(r.index.blocks[0].start_bit(), 32u);
    EXPECT_EQ(r.index.blocks[0].end_bit(), data.size() * 8);
    EXPECT_EQ(r.index.decompressed_size, 900000u);
    EXPECT_EQ(r.index.damaged_blocks, 1u);
    EXPECT_EQ(r.index.truncated_at_bit, 32u);
    EXPECT_FALSE(r.notes.empty());
  }
}

TEST(IndexDamage, DamagedSourceThroughTheCatalog) {
  const Base& b = base();
  const std::optional<uint64_t> crc_bit = find_crc_only_flip(b.file, b.layout.blocks[2]);
  const std::optional<uint64_t> table_bit = find_early_failure_flip(b.file, b.layout.blocks[4]);
  ASSERT_TRUE(crc_bit && table_bit);
  Bytes bad = b.file;
  flip_bit(bad, *crc_bit);
  flip_bit(bad, *table_bit);
  const Bytes tail = to_bytes("garbage");
  bad = concat({&bad, &tail});
  TempDir dir;
  index::IndexStore store((dir.path() / "idx").string());
  const std::string path = dir.write("damaged.bz2", bad).string();
  const catalog::IndexStatus o = obtain_guarded(path, store, 1);
  ASSERT_TRUE(o.ready()) << o.error;
  EXPECT_TRUE(o.origin.built);
  EXPECT_TRUE(o.origin.saved);
  EXPECT_EQ(o.origin.notes.size(), 4u) << all_notes(o.origin.notes);  // CRC; undecodable and resync; garbage
  EXPECT_TRUE(o.index->blocks[2].crc_mismatch());
  EXPECT_TRUE(o.index->blocks[4].undecodable());
  EXPECT_EQ(o.index->damaged_blocks, 2u);
  EXPECT_EQ(o.index->trailing_bytes, tail.size());
  // The damage survives the round trip through the index file.
  const catalog::IndexStatus again = obtain_guarded(path, store, 1);
  ASSERT_TRUE(again.ready());
  EXPECT_FALSE(again.origin.built);
  EXPECT_TRUE(same_index(*again.index, *o.index));
}

// ---- random damage ---------------------------------------------------------------------------------

// Which part of the base file a bit belongs to.
enum class Part { kStreamHeader, kBlock, kEndOfStream, kPadding };
Part part_of(uint64_t bit, size_t* block) {
  const Base& b = base();
  for (size_t s = 0; s < b.layout.stream_bytes.size(); ++s) {
    const uint64_t h = b.layout.stream_bytes[s] * 8;
    if (bit >= h && bit < h + bz2::kStreamHeaderBits) return Part::kStreamHeader;
    if (bit >= b.layout.eos_bits[s] && bit < b.layout.eos_bits[s] + bz2::kEndOfStreamBits) return Part::kEndOfStream;
  }
  for (size_t i = 0; i < b.layout.blocks.size(); ++i)
    if (bit >= b.layout.blocks[i].start_bit && bit < b.layout.blocks[i].end_bit) {
      *block = i;
      return Part::kBlock;
    }
  return Part::kPadding;
}

// One random bit flipped: the build finishes, the index is well formed, every block it says is good
// decodes from its record, and every block the flip did not touch is found where it was, with its
// bytes.
void check_random_flip(uint64_t bit, const index::BuildResult& r) {
  const Base& b = base();
  size_t hit = SIZE_MAX;
  const Part part = part_of(bit, &hit);
  SCOPED_TRACE("bit " + std::to_string(bit) + " in " +
               (part == Part::kBlock ? "block " + std::to_string(hit)
                : part == Part::kStreamHeader ? std::string("a stream header")
                : part == Part::kEndOfStream ? std::string("an end-of-stream marker")
                                             : std::string("padding")) +
               all_notes(r.notes));
  if (!r.ok()) {
    // Only a broken first header makes the whole file unusable.
    EXPECT_LT(bit, 32u) << r.error;
    return;
  }
  Bytes bad = b.file;
  flip_bit(bad, bit);
  BlockIndex idx = r.index;
  idx.source.size = bad.size();
  const base::Result<BlockIndex> parsed = index::parse(index::serialize(idx));
  ASSERT_TRUE(parsed.ok()) << "malformed index: " << parsed.status();
  uint64_t sum = 0;
  for (size_t i = 0; i < idx.blocks.size(); ++i) sum += idx.block_size(i);
  EXPECT_EQ(sum, idx.decompressed_size);

  IndexedBytes reader(bad, r.index);
  std::map<uint64_t, size_t> by_start;
  for (size_t i = 0; i < r.index.blocks.size(); ++i) by_start[r.index.blocks[i].start_bit()] = i;
  for (size_t i = 0; i < r.index.blocks.size(); ++i) reader.block(i);  // fails the test if it does not decode
  // Stream headers and end-of-stream markers hold the structure together; when one is hit the
  // blocks after it may be lost (bzip2 itself stops there), so only block damage is checked further.
  if (part == Part::kStreamHeader || part == Part::kEndOfStream) return;
  for (size_t i = 0; i < b.layout.blocks.size(); ++i) {
    if (i == hit) continue;
    const BlockSpan& orig = b.layout.blocks[i];
    auto it = by_start.find(orig.start_bit);
    ASSERT_NE(it, by_start.end()) << "block " << i << " lost";
    const BlockRecord& rec = r.index.blocks[it->second];
    EXPECT_FALSE(rec.damaged()) << "block " << i;
    EXPECT_EQ(rec.end_bit(), orig.end_bit) << "block " << i;
    const Bytes* got = reader.block(it->second);
    ASSERT_TRUE(got) << "block " << i;
    EXPECT_TRUE(same_bytes(*got, slice(b.plain, orig.out_offset, orig.out_size))) << "block " << i;
  }
  if (part == Part::kBlock) {
    auto it = by_start.find(b.layout.blocks[hit].start_bit);
    ASSERT_NE(it, by_start.end()) << "the damaged block has no record";
    const BlockRecord& rec = r.index.blocks[it->second];
    // Damaged, or (a flip that changes nothing the decoder checks, e.g. the randomised bit's
    // neighbours) decodes from its record all the same.
    if (!rec.damaged()) {
      EXPECT_TRUE(reader.block(it->second) != nullptr);
    }
    EXPECT_EQ(r.index.blocks.size(), b.layout.blocks.size());
  }
}

TEST(IndexDamage, RandomBitFlipsAlwaysGiveAWellFormedIndex) {
  const Base& b = base();
  Rng rng(0xF11B);
  const size_t rounds = scaled(160, 40);
  for (size_t k = 0; k < rounds; ++k) {
    // Every tenth flip in a header or marker, the rest anywhere.
    uint64_t bit;
    if (k % 10 == 0) {
      const size_t s = rng.below(2);
      bit = k % 20 == 0 ? b.layout.stream_bytes[s] * 8 + rng.below(32) : b.layout.eos_bits[s] + rng.below(80);
    } else {
      bit = rng.next() % (b.file.size() * 8);
    }
    Bytes bad = b.file;
    flip_bit(bad, bit);
    const index::BuildResult r = build_guarded(bad, 1);
    check_random_flip(bit, r);
  }
}

// A damaged end-of-stream marker between a level-1 stream and a level-9 stream: the resync that
// skips the damaged marker lands on the first block of the next stream, right after its header.
// That stream's blocks decode cleanly and must be indexed at their own stream's level.
TEST(IndexDamage, DamagedEndOfStreamBeforeAHigherLevelStreamLosesNothingElse) {
  const Bytes a = text_bytes(150000, 61), c = text_bytes(1500000, 62);
  const Bytes fa = libbz2_compress(a, 1), fc = libbz2_compress(c, 9);
  const Bytes file = concat({&fa, &fc});
  FileLayout layout;
  ASSERT_TRUE(walk_file(file, &layout));
  Bytes bad = file;
  flip_bit(bad, layout.eos_bits[0] + 10);  // inside stream A's end-of-stream magic
  const index::BuildResult r = build_guarded(bad, 1);
  ASSERT_TRUE(r.ok()) << r.error;
  IndexedBytes reader(bad, r.index);
  const Bytes plain = concat({&a, &c});
  for (size_t i = 0; i < layout.blocks.size(); ++i) {
    const BlockSpan& s = layout.blocks[i];
    SCOPED_TRACE("block " + std::to_string(i) + all_notes(r.notes));
    auto it = std::find_if(r.index.blocks.begin(), r.index.blocks.end(),
                           [&](const BlockRecord& rec) { return rec.start_bit() == s.start_bit; });
    ASSERT_NE(it, r.index.blocks.end()) << "block lost";
    EXPECT_FALSE(it->damaged());
    EXPECT_EQ(it->level(), s.level);
    const Bytes* got = reader.block(static_cast<size_t>(it - r.index.blocks.begin()));
    ASSERT_TRUE(got);
    EXPECT_TRUE(same_bytes(*got, slice(plain, s.out_offset, s.out_size)));
  }
}

// A damaged stretch can be shorter than a block magic: a stream header, a few bits of garbage and
// an end-of-stream marker (found by fuzzing: "BZh5BZh\x08..." gave a 33-bit stretch). The index the
// builder makes of it must pass the parser's checks and fit max_index_file_size, or every mount
// rebuilds it and every load calls it malformed.
TEST(IndexDamage, AStretchShorterThanABlockMagicGivesAValidIndex) {
  std::vector<Bytes> inputs = {Bytes{0x42, 0x5a, 0x68, 0x35, 0x42, 0x5a, 0x68, 0x08, 0x2e, 0xe4, 0x8a, 0x70,
                                     0xa1, 0x20, 0xf3, 0xed, 0x62, 0x52}};
  Rng rng(0x5157);
  for (unsigned garbage = 1; garbage < 48; ++garbage) {
    BitWriter w;
    w.put_bytes("BZh9");
    w.put(rng.next() & ((uint64_t{1} << garbage) - 1), garbage);
    w.put(0x177245385090ull, 48);  // end-of-stream magic
    w.put(0, 32);                  // its combined CRC: an empty stream's
    inputs.push_back(w.finish());
  }
  size_t stretches = 0;
  for (const Bytes& data : inputs) {
    SCOPED_TRACE(::testing::PrintToString(data));
    const index::BuildResult r = build_guarded(data, 1);
    if (!r.ok()) continue;
    EXPECT_GE(r.index.damaged_blocks, 1u) << "bzip2 rejects every one of these";
    for (const BlockRecord& rec : r.index.blocks)
      if (rec.undecodable() && !rec.truncated() && rec.bit_length < 48) ++stretches;
    BlockIndex idx = r.index;
    idx.source.size = data.size();
    const std::vector<uint8_t> bytes = index::serialize(idx);
    EXPECT_LE(bytes.size(), index::max_index_file_size(data.size()));
    const base::Result<BlockIndex> parsed = index::parse(bytes);
    EXPECT_TRUE(parsed.ok()) << "malformed index: " << parsed.status();
  }
  EXPECT_GT(stretches, 0u) << "no input gave a stretch shorter than 48 bits: the test tests nothing";
}

// An empty stream whose combined CRC does not match stands as a record over its end-of-stream
// marker. The next stream's first block then starts one stream header after that record, not an
// end-of-stream marker and a header (found by fuzz_index_builder: "records 1 and 2 do not chain").
TEST(IndexDamage, ABlockRightAfterAnEmptyStreamsRecordGivesAValidIndex) {
  const Bytes good = libbz2_compress(text_bytes(5000, 71), 1);
  for (uint32_t bad_crc : {1u, 0x20u}) {
    BitWriter w;
    w.put_bytes("BZh9");
    w.put(0x177245385090ull, 48);  // an empty stream: its end-of-stream marker at once,
    w.put(bad_crc, 32);            // with a combined CRC that an empty stream cannot have
    Bytes data = w.finish();
    data.insert(data.end(), good.begin(), good.end());
    SCOPED_TRACE("combined CRC " + std::to_string(bad_crc));
    const index::BuildResult r = build_guarded(data, 1);
    ASSERT_TRUE(r.ok()) << r.error;
    ASSERT_EQ(r.index.blocks.size(), 2u) << all_notes(r.notes);
    EXPECT_TRUE(r.index.blocks[0].stream_crc_mismatch());
    EXPECT_FALSE(r.index.blocks[1].damaged());
    BlockIndex idx = r.index;
    idx.source.size = data.size();
    const base::Result<BlockIndex> parsed = index::parse(index::serialize(idx));
    EXPECT_TRUE(parsed.ok()) << "malformed index: " << parsed.status();
  }
}

// ---- several threads ----------------------------------------------------------------------------

TEST(IndexDamageConcurrent, DamagedFilesGiveTheSameIndexOnAnyNumberOfThreads) {
  const Base& b = base();
  std::vector<std::pair<std::string, Bytes>> files;
  for (size_t k : interesting_blocks()) {
    Bytes crc = b.file, tables = b.file;
    if (auto bit = find_crc_only_flip(b.file, b.layout.blocks[k])) flip_bit(crc, *bit);
    if (auto bit = find_early_failure_flip(b.file, b.layout.blocks[k])) flip_bit(tables, *bit);
    files.emplace_back("crc " + std::to_string(k), crc);
    files.emplace_back("tables " + std::to_string(k), tables);
  }
  for (uint64_t cut : {b.file.size() / 3, b.file.size() / 2, b.file.size() - 5})
    files.emplace_back("cut " + std::to_string(cut), slice(b.file, 0, cut));
  Rng rng(0xD1CE);
  for (int i = 0; i < 6; ++i) {
    Bytes bad = b.file;
    for (int j = 0; j < 3; ++j) flip_bit(bad, rng.next() % (bad.size() * 8));
    files.emplace_back("random flips " + std::to_string(i), bad);
  }
  for (const auto& [name, data] : files) {
    SCOPED_TRACE(name);
    const index::BuildResult one = build_guarded(data, 1);
    for (unsigned threads : {2u, 4u}) {
      for (size_t window : {size_t{1}, size_t{3}, size_t{0}}) {
        const index::BuildResult other = build_guarded(data, threads, window);
        ASSERT_EQ(other.ok(), one.ok()) << threads << " threads, window " << window;
        EXPECT_EQ(other.error.message(), one.error.message());
        EXPECT_TRUE(same_index(other.index, one.index)) << threads << " threads, window " << window;
        EXPECT_EQ(other.notes, one.notes) << threads << " threads, window " << window;
      }
    }
  }
}

TEST(IndexDamageConcurrent, RandomBitFlipsOnFourThreads) {
  const Base& b = base();
  Rng rng(0xF11C);
  const size_t rounds = scaled(80, 20);
  for (size_t k = 0; k < rounds; ++k) {
    const uint64_t bit = rng.next() % (b.file.size() * 8);
    Bytes bad = b.file;
    flip_bit(bad, bit);
    const index::BuildResult four = build_guarded(bad, 4, 2);
    check_random_flip(bit, four);
    const index::BuildResult one = build_guarded(bad, 1);
    EXPECT_TRUE(same_index(four.index, one.index)) << "bit " << bit;
    EXPECT_EQ(four.notes, one.notes) << "bit " << bit;
  }
}

}  // namespace
}  // namespace mibz2::test

namespace mibz2::test {
namespace {

// A file of `head`, then `gap` zero bytes, then `tail`, without holding the gap in memory: a
// damaged stretch of hundreds of MiB costs nothing to make.
class GapBytes final : public io::SourceBytes {
 public:
  GapBytes(Bytes head, uint64_t gap, Bytes tail)
      : io::SourceBytes(head.size() + gap + tail.size()), head_(std::move(head)), gap_(gap), tail_(std::move(tail)) {}

 private:
  io::SourceRead read_at(uint64_t offset, size_t len, uint8_t* out) const override {
    for (size_t i = 0; i < len;) {
      const uint64_t at = offset + i;
      size_t n;
      if (at < head_.size()) {
        n = static_cast<size_t>(std::min<uint64_t>(len - i, head_.size() - at));
        std::memcpy(out + i, head_.data() + at, n);
      } else if (at < head_.size() + gap_) {
        n = static_cast<size_t>(std::min<uint64_t>(len - i, head_.size() + gap_ - at));
        std::memset(out + i, 0, n);
      } else {
        const uint64_t t = at - head_.size() - gap_;
        n = static_cast<size_t>(std::min<uint64_t>(len - i, tail_.size() - t));
        std::memcpy(out + i, tail_.data() + t, n);
      }
      i += n;
    }
    return {len};
  }
  const Bytes head_;
  const uint64_t gap_;
  const Bytes tail_;
};

index::BuildResult build_source(const io::SourceBytes& bytes) { return build_guarded(bytes, 2, 8); }

// A block whose tables are broken, followed by more than 512 MiB of zeros (no block magic in
// them) and then a good stream: the undecodable block stands for the whole damaged stretch, over
// 2^32 bits long, and its record must say exactly that (with a 32-bit length it wrapped).
TEST(IndexDamage, ADamagedStretchLongerThan512MiBKeepsItsLength) {
  const Base& b = base();
  const BlockSpan& damaged = b.layout.blocks[1];
  const std::optional<uint64_t> bit = find_early_failure_flip(b.file, damaged);
  ASSERT_TRUE(bit.has_value());
  Bytes bad = b.file;
  flip_bit(bad, *bit);
  // The head ends a few bytes into the damaged block; the tail is stream B, whole.
  const Bytes head = slice(bad, 0, *bit / 8 + 16);
  const uint64_t b_start = b.layout.stream_bytes[1];
  const Bytes tail = slice(bad, b_start, bad.size() - b_start);
  auto damaged_length = [&](uint64_t gap, BlockIndex* idx) {
    const GapBytes bytes(head, gap, tail);
    index::BuildResult r = build_source(bytes);
    EXPECT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.index.blocks.size(), 2 + b.index.blocks.size() - b.stream_b_first_block) << all_notes(r.notes);
    if (r.index.blocks.size() < 2) return uint64_t{0};
    EXPECT_TRUE(r.index.blocks[1].undecodable());
    EXPECT_EQ(r.index.blocks[1].start_bit(), damaged.start_bit);
    *idx = r.index;
    return r.index.blocks[1].bit_length;
  };
  BlockIndex small_idx, big_idx;
  const uint64_t small_gap = 4096, big_gap = uint64_t{600} << 20;
  const uint64_t small = damaged_length(small_gap, &small_idx);
  const uint64_t big = damaged_length(big_gap, &big_idx);
  ASSERT_GT(small, 0u);
  EXPECT_EQ(big, small + (big_gap - small_gap) * 8);
  EXPECT_GT(big, uint64_t{1} << 32);
  // The blocks after it keep their place, and the length survives the index file.
  ASSERT_EQ(big_idx.blocks.size(), small_idx.blocks.size());
  EXPECT_EQ(big_idx.blocks[2].start_bit(), small_idx.blocks[2].start_bit() + (big_gap - small_gap) * 8);
  big_idx.source.size = head.size() + big_gap + tail.size();
  const base::Result<BlockIndex> parsed = index::parse(index::serialize(big_idx));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->blocks[1].bit_length, big);
}

}  // namespace
}  // namespace mibz2::test
