// Line counts in the index (index/FORMAT.md, version 3): the newline counter against a plain loop,
// every build's counts against the decoded bytes, the file format's version 3 and 2, and LineMap's
// line starts against a naive scan, on sound and damaged files.
#include <algorithm>
#include <cstring>

#include <gtest/gtest.h>

#include "index/block_check.h"
#include "index/index_format.h"
#include "index/line_map.h"
#include "index/newline_count.h"
#include "index_test_support.h"

namespace mibz2::test {
namespace {

using index::BlockIndex;
using index::LineMap;

uint64_t plain_count(const uint8_t* p, size_t n) {
  uint64_t c = 0;
  for (size_t i = 0; i < n; ++i) c += p[i] == '\n';
  return c;
}

LineMap::ReadAt read_of(const Bytes& plain) {
  return [&plain](uint64_t off, size_t len, uint8_t* out) -> ssize_t {
    if (off >= plain.size()) return 0;
    const size_t n = static_cast<size_t>(std::min<uint64_t>(len, plain.size() - off));
    std::memcpy(out, plain.data() + off, n);
    return static_cast<ssize_t>(n);
  };
}

// Lines of every length: empty ones, short ones, and some longer than a level-1 block, so that
// lines start and end on both sides of block and stream boundaries.
Bytes lines_of_every_length(size_t n, uint64_t seed) {
  Bytes out = text_bytes(n, seed);
  uint64_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < out.size(); ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const unsigned r = static_cast<unsigned>(x >> 56);
    if (r < 8) out[i] = '\n';                                   // dense newlines, empty lines
    else if (out[i] == '\n' && (i / 150000) % 3 == 2) out[i] = ' ';  // some stretches without any
  }
  return out;
}

TEST(NewlineCount, MatchesAPlainLoopAtEverySizeAndAlignment) {
  Bytes text = lines_of_every_length(70000, 3);
  Bytes all(16 * 600 + 13, '\n');  // more than 255 vectors of matches: the lane counters must widen
  for (const Bytes* b : {&text, &all}) {
    for (size_t start = 0; start < 17; ++start)
      for (size_t len : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{255 * 16}, size_t{255 * 16 + 1},
                         b->size() - start})
        ASSERT_EQ(index::count_newlines(b->data() + start, len), plain_count(b->data() + start, len))
            << "start " << start << " length " << len;
  }
}

TEST(NewlineCount, AfterNthNewline) {
  const Bytes b = to_bytes("a\n\nbc\nd");
  EXPECT_EQ(index::after_nth_newline(b.data(), b.size(), 0), 0u);
  EXPECT_EQ(index::after_nth_newline(b.data(), b.size(), 1), 2u);
  EXPECT_EQ(index::after_nth_newline(b.data(), b.size(), 2), 3u);
  EXPECT_EQ(index::after_nth_newline(b.data(), b.size(), 3), 6u);
  EXPECT_EQ(index::after_nth_newline(b.data(), b.size(), 4), SIZE_MAX);
}

// Every block's count is its decoded bytes' newlines, and the file's is sed's, for every shape of
// file the corpus has (levels 1..9, multistream with mixed levels and empty streams, tiny files).
TEST(IndexLines, EveryBuildCountsTheNewlinesOfEachBlockAndTheLinesAsSedDoes) {
  for (const Variant& v : corpus()) {
    SCOPED_TRACE(v.name);
    const index::BuildResult r = build_guarded(v.file, 2);
    ASSERT_TRUE(r.ok()) << r.error;
    const BlockIndex& idx = r.index;
    ASSERT_TRUE(idx.has_line_counts());
    ASSERT_EQ(idx.newlines.size(), idx.blocks.size());
    for (size_t i = 0; i < idx.blocks.size(); ++i)
      ASSERT_EQ(idx.newlines[i], plain_count(v.plain.data() + idx.blocks[i].out_offset, idx.block_size(i))) << i;
    EXPECT_EQ(idx.line_count, sed_lines(v.plain));
    EXPECT_EQ(LineMap(idx).line_count(), sed_lines(v.plain));
  }
}

TEST(IndexLines, ALastLineWithoutItsNewlineCountsAsSedCountsIt) {
  for (const std::string& s : {std::string(), std::string("\n"), std::string("a"), std::string("a\nb"),
                               std::string("a\nb\n"), std::string("\n\n\n")}) {
    SCOPED_TRACE("'" + s + "'");
    const Bytes plain = to_bytes(s);
    const index::BuildResult r = build_guarded(libbz2_compress(plain, 1), 1);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.index.line_count, sed_lines(plain));
  }
}

const Variant& multistream_variant() {
  for (const Variant& v : corpus())
    if (v.name.find("multistream") != std::string::npos) return v;
  return corpus().front();
}

TEST(IndexLinesFormat, Version3KeepsEveryCountAndVersion2ParsesWithoutLines) {
  const Variant& v = multistream_variant();
  index::BuildResult r = build_guarded(v.file, 2);
  ASSERT_TRUE(r.ok()) << r.error;
  r.index.source.size = v.file.size();  // the caller's to fill; records must lie inside it
  const Bytes file = index::serialize(r.index);
  EXPECT_EQ(file.size(), index::kHeaderSize + 36 * r.index.blocks.size());
  auto again = index::parse(file);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(same_index(*again, r.index));

  auto old = index::parse(version2_bytes(r.index));
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_FALSE(old->has_line_counts());
  EXPECT_EQ(old->line_count, index::kUnknownLines);
  EXPECT_EQ(old->blocks.size(), r.index.blocks.size());
  EXPECT_EQ(old->decompressed_size, r.index.decompressed_size);
  const LineMap map(*old);
  EXPECT_FALSE(map.line_count());
  EXPECT_EQ(map.gap(), LineMap::Gap::kNotCounted);
  EXPECT_EQ(map.known_end(), 0u);
  EXPECT_NE(map.unknown_why().find("no line counts"), std::string::npos) << map.unknown_why();
  const auto start = map.line_start(5, read_of(v.plain));
  ASSERT_FALSE(start.ok());
  EXPECT_EQ(start.status().code(), ENODATA);
  EXPECT_EQ(*map.line_start(1, read_of(v.plain)), 0u);  // line 1 needs no counts

  // Written again (mibz2 index --output of a stored index): version 3, every count unknown.
  auto rewritten = index::parse(index::serialize(*old));
  ASSERT_TRUE(rewritten.ok()) << rewritten.status();
  EXPECT_FALSE(LineMap(*rewritten).line_count());
  EXPECT_EQ(LineMap(*rewritten).gap(), LineMap::Gap::kNotCounted);
  EXPECT_NE(LineMap(*rewritten).unknown_why().find("no line counts"), std::string::npos);
}

TEST(IndexLinesFormat, AVersion2IndexOfAnEmptyFileHasNoLines) {
  const Bytes file = libbz2_compress({}, 9);
  index::BuildResult r = build_guarded(file, 1);
  ASSERT_TRUE(r.ok()) << r.error;
  r.index.source.size = file.size();
  auto old = index::parse(version2_bytes(r.index));
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(LineMap(*old).line_count(), 0u);
}

uint64_t newline_sum(const BlockIndex& i) {
  uint64_t sum = 0;
  for (uint32_t n : i.newlines) sum += n;
  return sum;
}

TEST(IndexLinesFormat, CountsThatCannotBeRightAreRefused) {
  const Variant& v = multistream_variant();
  index::BuildResult r = build_guarded(v.file, 2);
  ASSERT_TRUE(r.ok()) << r.error;
  r.index.source.size = v.file.size();
  ASSERT_TRUE(index::parse(index::serialize(r.index)).ok());
  ASSERT_GE(r.index.blocks.size(), 2u);
  struct Case {
    const char* name;
    std::function<void(BlockIndex&)> change;
  };
  const Case cases[] = {
      {"a count above the block's size", [](BlockIndex& i) { i.newlines.mutable_at(0) = static_cast<uint32_t>(i.block_size(0) + 1); }},
      // Sum of the counts, or one more when the last line has no newline: nothing else.
      {"a line count below the newlines", [](BlockIndex& i) { i.line_count = newline_sum(i) - 1; }},
      {"a line count two above the newlines", [](BlockIndex& i) { i.line_count = newline_sum(i) + 2; }},
      {"a line count with a count unknown", [](BlockIndex& i) { i.newlines.mutable_at(1) = index::kUnknownNewlines; }},
      {"a damaged record with a count",
       [](BlockIndex& i) {
         i.blocks.mutable_at(0).flags |= index::BlockRecord::kCrcMismatch;
         i.damaged_blocks = 1;
         i.flags |= BlockIndex::kHasDamage;
         i.line_count = index::kUnknownLines;
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    BlockIndex bad = r.index;
    c.change(bad);
    const auto got = index::parse(index::serialize(bad));
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), EBADMSG);
    EXPECT_NE(got.status().message().find("line"), std::string::npos) << got.status();
  }
}

// Line starts from the index and one block, against a walk of the bytes: at the start, in the
// middle, at the end and past it, and the lines on both sides of every block boundary.
void expect_line_starts(const Bytes& plain, const BlockIndex& idx) {
  const LineMap map(idx);
  ASSERT_EQ(map.line_count(), sed_lines(plain));
  EXPECT_EQ(map.gap(), LineMap::Gap::kNone);
  EXPECT_EQ(map.known_end(), idx.decompressed_size);
  const uint64_t lines = sed_lines(plain);
  std::vector<uint64_t> ns = {1, 2, 3, lines / 2, lines - 1, lines, lines + 1, lines + 2, UINT64_MAX};
  uint64_t before = 0;  // lines ended before block i
  for (size_t i = 0; i < idx.blocks.size(); ++i) {
    for (uint64_t d : {0, 1, 2}) ns.push_back(before + d);
    before += idx.newlines[i];
    for (uint64_t d : {0, 1, 2}) ns.push_back(before + d);
  }
  const LineMap::ReadAt read = read_of(plain);
  for (uint64_t n : ns) {
    if (n == 0) continue;
    const auto got = map.line_start(n, read);
    ASSERT_TRUE(got.ok()) << "line " << n << ": " << got.status();
    ASSERT_EQ(*got, walked_line_start(plain, n)) << "line " << n;
  }
  const auto zero = map.line_start(0, read);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().code(), EINVAL);
}

TEST(LineMap, LineStartsMatchAWalkOfTheBytesAcrossBlocksAndStreams) {
  // Streams of levels 1, 3 and 2 (several blocks each), one ending without a newline at the end
  // and one with, so lines run across block and stream boundaries.
  Bytes a = lines_of_every_length(260000, 5), b = lines_of_every_length(330000, 6), c = lines_of_every_length(150000, 7);
  for (bool last_newline : {false, true}) {
    SCOPED_TRACE(last_newline ? "ends with a newline" : "ends without");
    c.back() = last_newline ? '\n' : 'x';
    const Bytes plain = concat({&a, &b, &c});
    const Bytes sa = libbz2_compress(a, 1), sb = libbz2_compress(b, 3), sc = libbz2_compress(c, 2);
    const Bytes file = concat({&sa, &sb, &sc});
    const index::BuildResult r = build_guarded(file, 2);
    ASSERT_TRUE(r.ok()) << r.error;
    ASSERT_GE(r.index.blocks.size(), 6u);
    expect_line_starts(plain, r.index);
  }
  for (const Variant& v : corpus()) {
    SCOPED_TRACE(v.name);
    const index::BuildResult r = build_guarded(v.file, 2);
    ASSERT_TRUE(r.ok()) << r.error;
    expect_line_starts(v.plain, r.index);
  }
}

// An index of hundreds of blocks made by hand (LineMap reads only offsets, flags and counts): every
// line's start against the walk, with runs of blocks without a newline across the map's
// checkpoints, and the same after a damaged block cuts the known lines short.
TEST(LineMap, EveryLineOfAFileOfHundredsOfBlocks) {
  Bytes plain;
  BlockIndex idx;
  for (size_t i = 0; i < 700; ++i) {
    const size_t size = 20 + i % 37;
    // Blocks 100..299 and 400..420 hold no newline; the others one every few bytes.
    const bool none = (i >= 100 && i < 300) || (i >= 400 && i <= 420);
    idx.blocks.push_back(index::BlockRecord::make(0, 9, 0, plain.size(), 0, 0));
    uint32_t n = 0;
    for (size_t k = 0; k < size; ++k) {
      const bool nl = !none && (k * 7 + i) % 5 == 0;
      plain.push_back(nl ? '\n' : 'x');
      n += nl;
    }
    idx.newlines.push_back(n);
  }
  idx.decompressed_size = plain.size();
  idx.line_count = sed_lines(plain);
  const LineMap::ReadAt read = read_of(plain);
  {
    const LineMap map(idx);
    for (uint64_t n = 1; n <= idx.line_count + 2; ++n) ASSERT_EQ(*map.line_start(n, read), walked_line_start(plain, n)) << n;
  }
  const size_t damaged = 500;
  mark_damaged(idx, damaged, index::BlockRecord::kCrcMismatch);
  const LineMap map(idx);
  const uint64_t known = 1 + plain_count(plain.data(), idx.blocks[damaged].out_offset);  // starts before the block
  for (uint64_t n = 1; n <= known; ++n) ASSERT_EQ(*map.line_start(n, read), walked_line_start(plain, n)) << n;
  EXPECT_EQ(map.line_start(known + 1, read).status().code(), ENODATA);
}

TEST(LineMap, LinesBeforeDamageAreKnownAndLinesAfterItAreSaidToBeUnknown) {
  const Bytes plain = lines_of_every_length(500000, 9);
  const Bytes file = libbz2_compress(plain, 1);
  FileLayout layout;
  ASSERT_TRUE(walk_file(file, &layout));
  ASSERT_GE(layout.blocks.size(), 4u);
  const size_t k = 2;
  const std::optional<Bytes> bad = with_crc_only_damage(file, layout.blocks[k]);
  ASSERT_TRUE(bad);
  const index::BuildResult r = build_guarded(*bad, 2);
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_TRUE(r.index.blocks[k].crc_mismatch());
  EXPECT_EQ(r.index.newlines[k], index::kUnknownNewlines);
  EXPECT_EQ(r.index.line_count, index::kUnknownLines);
  EXPECT_EQ(r.index.newlines[k + 1], plain_count(plain.data() + layout.blocks[k + 1].out_offset,
                                                 layout.blocks[k + 1].out_size));  // a block's own count stays

  const LineMap map(r.index);
  EXPECT_FALSE(map.line_count());
  EXPECT_NE(map.unknown_why().find("block 2"), std::string::npos) << map.unknown_why();
  EXPECT_EQ(map.gap(), LineMap::Gap::kDamaged);
  EXPECT_EQ(map.known_end(), r.index.blocks[k].out_offset);
  const LineMap::ReadAt read = read_of(plain);
  const uint64_t last_known = r.index.newlines[0] + r.index.newlines[1] + 1;  // starts in block 1 or at block 2
  for (uint64_t n : {uint64_t{1}, uint64_t{2}, last_known - 1, last_known}) {
    const auto got = map.line_start(n, read);
    ASSERT_TRUE(got.ok()) << n << ": " << got.status();
    EXPECT_EQ(*got, walked_line_start(plain, n)) << n;
  }
  const auto after = map.line_start(last_known + 1, read);
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.status().code(), ENODATA);
  EXPECT_NE(after.status().message().find("damaged"), std::string::npos) << after.status();
}

TEST(LineMap, ABlockWithFewerNewlinesThanItsRecordIsAnErrorNotALine) {
  const Bytes plain = lines_of_every_length(200000, 11);
  const index::BuildResult r = build_guarded(libbz2_compress(plain, 1), 1);
  ASSERT_TRUE(r.ok()) << r.error;
  Bytes changed = plain;
  std::replace(changed.begin(), changed.end(), uint8_t{'\n'}, uint8_t{' '});
  const auto got = LineMap(r.index).line_start(3, read_of(changed));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), EBADMSG);
}

// The per-read check (index/block_check.h) compares a block's newlines with its record: an index
// whose count is wrong is a mismatch, as one whose size is wrong.
TEST(IndexLines, TheBlockCheckRefusesARecordWithAnotherNewlineCount) {
  const Bytes plain = lines_of_every_length(250000, 13);
  const Bytes file = libbz2_compress(plain, 1);
  const index::BuildResult r = build_guarded(file, 1);
  ASSERT_TRUE(r.ok()) << r.error;
  const io::SpanBytes source(as_span(file));
  bz2::BlockDecoder decoder;
  base::ByteBuffer compressed, out;
  EXPECT_EQ(index::check_block(r.index, 1, source, decoder, compressed, out).kind, index::BlockCheck::kOk);
  BlockIndex wrong = r.index;
  wrong.newlines.mutable_at(1) += 1;
  const index::BlockCheck c = index::check_block(wrong, 1, source, decoder, compressed, out);
  EXPECT_EQ(c.kind, index::BlockCheck::kMismatch);
  EXPECT_NE(c.why.message().find("newlines"), std::string::npos) << c.why;
}

// The header's line count may be the sum of the counts or one more (FORMAT.md): which one is the
// last byte's to say, so the check of the last block compares it too.
TEST(IndexLines, TheBlockCheckOfTheLastBlockRefusesALineCountOneOff) {
  for (const bool final_newline : {true, false}) {
    SCOPED_TRACE(final_newline ? "ends with a newline" : "ends without one");
    Bytes plain = lines_of_every_length(250000, 14);
    plain.back() = final_newline ? '\n' : 'x';
    const Bytes file = libbz2_compress(plain, 1);
    const index::BuildResult r = build_guarded(file, 1);
    ASSERT_TRUE(r.ok()) << r.error;
    ASSERT_EQ(r.index.line_count, sed_lines(plain));
    const size_t last = r.index.blocks.size() - 1;
    const io::SpanBytes source(as_span(file));
    bz2::BlockDecoder decoder;
    base::ByteBuffer compressed, out;
    EXPECT_EQ(index::check_block(r.index, last, source, decoder, compressed, out).kind, index::BlockCheck::kOk);
    BlockIndex wrong = r.index;
    wrong.line_count += final_newline ? 1 : -1;
    const index::BlockCheck c = index::check_block(wrong, last, source, decoder, compressed, out);
    EXPECT_EQ(c.kind, index::BlockCheck::kMismatch);
    EXPECT_NE(c.why.message().find("line count"), std::string::npos) << c.why;
    EXPECT_EQ(index::check_block(wrong, 0, source, decoder, compressed, out).kind, index::BlockCheck::kOk)
        << "only the last block vouches for the last line";
  }
}

// An index written again from a version 2 one has sound records whose counts were never made: the
// check has nothing to compare, and the block is served (not taken for a mismatch and rebuilt).
TEST(IndexLines, TheBlockCheckPassesARecordWhoseCountWasNeverMade) {
  const Bytes plain = lines_of_every_length(250000, 13);
  const Bytes file = libbz2_compress(plain, 1);
  index::BuildResult r = build_guarded(file, 1);
  ASSERT_TRUE(r.ok()) << r.error;
  r.index.source.size = file.size();
  auto old = index::parse(version2_bytes(r.index));
  ASSERT_TRUE(old.ok()) << old.status();
  auto rewritten = index::parse(index::serialize(*old));
  ASSERT_TRUE(rewritten.ok()) << rewritten.status();
  ASSERT_TRUE(rewritten->has_line_counts());
  ASSERT_EQ(rewritten->newlines[1], index::kUnknownNewlines);
  const io::SpanBytes source(as_span(file));
  bz2::BlockDecoder decoder;
  base::ByteBuffer compressed, out;
  EXPECT_EQ(index::check_block(*rewritten, 1, source, decoder, compressed, out).kind, index::BlockCheck::kOk);
}

}  // namespace
}  // namespace mibz2::test
