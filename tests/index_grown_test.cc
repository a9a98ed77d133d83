// The build of a file that grew, keeping the index of its old prefix (index/index_prefix.h): for
// every shape of file cut wherever a download may stop (inside a block, its magic, an end-of-stream
// marker, a stream header, right at a block's end), the build of the whole file that keeps the
// cut file's index makes exactly the index a build from the start makes, and decodes none of the
// blocks it kept; an old prefix whose last complete block is not there again keeps nothing (the
// build ends: prefix_changed); an index with damage or an empty stream is not kept at all; and a
// file grew from an index only when it is the same inode, larger, with the old fingerprint.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "index/index_prefix.h"
#include "index/index_store.h"
#include "index_test_support.h"

namespace mibz2::test {
namespace {

// Where a download may have stopped in a file of layout `l` (bytes, 0 < cut < size): inside each
// block's magic, in its middle, a byte before and at its end; inside each end-of-stream marker and
// just after it; inside each stream header. At most `most` of them, spread evenly.
std::vector<uint64_t> cut_points(const FileLayout& l, uint64_t size, size_t most) {
  std::set<uint64_t> at;
  for (const BlockSpan& b : l.blocks) {
    at.insert(b.start_bit / 8 + 2);
    at.insert((b.start_bit + b.end_bit) / 16);
    at.insert(b.end_bit / 8);
    at.insert((b.end_bit + 7) / 8);
  }
  for (uint64_t eos : l.eos_bits) {
    at.insert(eos / 8 + 3);
    at.insert((eos + 80 + 7) / 8);
  }
  for (uint64_t s : l.stream_bytes) at.insert(s + 2);
  std::vector<uint64_t> all;
  for (uint64_t c : at)
    if (c > 0 && c < size) all.push_back(c);
  if (all.size() <= most) return all;
  std::vector<uint64_t> picked;
  for (size_t k = 0; k < most; ++k) picked.push_back(all[k * (all.size() - 1) / (most - 1)]);
  return picked;
}

// The index of the first `cut` bytes of `file`.
index::BuildResult build_prefix(const Bytes& file, uint64_t cut) {
  return build_guarded(std::span<const uint8_t>(file.data(), cut), 1);
}

TEST(IndexGrown, KeepingTheOldPrefixGivesTheIndexOfTheWholeFile) {
  size_t kept_builds = 0;
  for (const Variant& v : corpus()) {
    SCOPED_TRACE(v.name);
    FileLayout layout;
    ASSERT_TRUE(walk_file(v.file, &layout));
    const io::SpanBytes whole(v.file);
    uint64_t full_decodes = 0;
    const index::BuildResult full = build_guarded(whole, 1, 0, nullptr, &full_decodes);
    ASSERT_TRUE(full.ok()) << full.error;
    std::set<size_t> streams_with_blocks;
    for (const BlockSpan& b : layout.blocks) streams_with_blocks.insert(b.stream);
    const bool empty_stream = layout.stream_bytes.size() > streams_with_blocks.size();
    for (uint64_t cut : cut_points(layout, v.file.size(), kSlowBuild ? 6 : 16)) {
      SCOPED_TRACE("cut at byte " + std::to_string(cut));
      const index::BuildResult old = build_prefix(v.file, cut);
      if (!old.ok()) continue;  // cut inside the first stream header: not bzip2 yet
      std::string why;
      const std::optional<index::IndexPrefix> kept = index::resumable_prefix(old.index, &why);
      if (!kept) {
        // Only an index with nothing complete to keep, or of a file with an empty stream.
        EXPECT_TRUE(why == "its index has no complete block" || (empty_stream && why == "its index holds an empty stream"))
            << why;
        continue;
      }
      uint64_t decodes = 0;
      const index::BuildResult grown = build_guarded(whole, 1, 0, &*kept, &decodes);
      ASSERT_TRUE(grown.ok()) << grown.error;
      EXPECT_FALSE(grown.prefix_changed);
      EXPECT_TRUE(same_index(grown.index, full.index));
      EXPECT_EQ(grown.notes, full.notes);
      // None of the kept blocks was decoded again (one thread: the decodes follow the file).
      EXPECT_LE(decodes + kept->blocks.size(), full_decodes);
      ++kept_builds;
    }
  }
  EXPECT_GE(kept_builds, scaled(100, 25));
}

// A multi-block level-1 file of text, and where its blocks are.
struct Blocks {
  Bytes plain = text_bytes(700000, 31);
  Bytes file = libbz2_compress(plain, 1);
  FileLayout layout;
  Blocks() { walk_file(file, &layout); }
};

TEST(IndexGrown, AnOldLastBlockThatIsNotThereAgainKeepsNothing) {
  const Blocks f;
  ASSERT_GE(f.layout.blocks.size(), 5u);
  const uint64_t cut = (f.layout.blocks[3].start_bit + f.layout.blocks[3].end_bit) / 16;  // inside block 3
  const index::BuildResult old = build_prefix(f.file, cut);
  ASSERT_TRUE(old.ok()) << old.error;
  const std::optional<index::IndexPrefix> kept = index::resumable_prefix(old.index);
  ASSERT_TRUE(kept);
  ASSERT_EQ(kept->blocks.size(), 2u);
  ASSERT_EQ(kept->last.start_bit(), f.layout.blocks[2].start_bit);

  // The same file, but its block 2 (the last complete one at the cut) fails its CRC.
  const std::optional<Bytes> crc_damaged = with_crc_only_damage(f.file, f.layout.blocks[2]);
  ASSERT_TRUE(crc_damaged);
  // And one where block 2 is gone: block 3 is where it was.
  const Bytes cut_out = splice_bits(f.file, f.layout.blocks[2].start_bit, f.layout.blocks[2].end_bit);
  for (const Bytes* other : {&*crc_damaged, &cut_out}) {
    const index::BuildResult r = build_guarded(io::SpanBytes(*other), 2, 0, &*kept);
    EXPECT_FALSE(r.ok());
    EXPECT_TRUE(r.prefix_changed);
    EXPECT_EQ(r.error.code(), ESTALE) << r.error;
  }
  // The file as it was: kept.
  const index::BuildResult same = build_guarded(io::SpanBytes(f.file), 2, 0, &*kept);
  ASSERT_TRUE(same.ok()) << same.error;
  EXPECT_TRUE(same_index(same.index, build_guarded(f.file, 2).index));
}

TEST(IndexGrown, OnlyAWholeIndexUpToItsCutEndIsKept) {
  const Blocks f;
  const index::BuildResult whole = build_guarded(f.file, 1);
  ASSERT_TRUE(whole.ok());
  // A complete file that grows (another stream appended): every block but the last kept, the last
  // decoded again, in its stream with the CRC of the blocks before it.
  std::optional<index::IndexPrefix> kept = index::resumable_prefix(whole.index);
  ASSERT_TRUE(kept);
  const size_t n = whole.index.blocks.size();
  EXPECT_EQ(kept->blocks.size(), n - 1);
  EXPECT_EQ(kept->last.start_bit(), whole.index.blocks.back().start_bit());
  EXPECT_EQ(kept->stream_count, 1u);
  EXPECT_EQ(kept->stream_first_block, 0u);
  EXPECT_EQ(kept->last_size, whole.index.block_size(n - 1));
  EXPECT_EQ(kept->bytes_kept(), whole.index.blocks.back().start_bit() / 8);

  std::string why;
  // Damage before the end.
  const std::optional<Bytes> damaged = with_crc_only_damage(f.file, f.layout.blocks[1]);
  ASSERT_TRUE(damaged);
  EXPECT_FALSE(index::resumable_prefix(build_guarded(*damaged, 1).index, &why));
  EXPECT_EQ(why, "its index records damage");
  // Nothing complete: cut inside the first block.
  EXPECT_FALSE(index::resumable_prefix(build_prefix(f.file, f.layout.blocks[0].end_bit / 16).index, &why));
  EXPECT_EQ(why, "its index has no complete block");
  // No line counts (an index written before them).
  index::BlockIndex no_lines = whole.index;
  no_lines.newlines.clear();
  no_lines.line_count = index::kUnknownLines;
  EXPECT_FALSE(index::resumable_prefix(no_lines, &why));
  EXPECT_EQ(why, "its index has no line counts");
  // An empty stream before the block: the count of streams up to it is not in the records.
  const Bytes empty = libbz2_compress({}, 9);
  const Bytes with_empty = concat({&empty, &f.file});
  EXPECT_FALSE(index::resumable_prefix(build_guarded(with_empty, 1).index, &why));
  EXPECT_EQ(why, "its index holds an empty stream");
}

TEST(IndexGrown, AFileGrewFromAnIndexOnlyWhenItIsThatFileLarger) {
  const Blocks f;
  const uint64_t cut = f.file.size() / 2;
  const io::SpanBytes whole(f.file);
  index::BlockIndex old = build_prefix(f.file, cut).index;
  old.source.size = cut;
  old.source.inode = 7;
  const base::Result<uint64_t> fp = index::fingerprint_of(io::SpanBytes({f.file.data(), cut}), cut);
  ASSERT_TRUE(fp.ok());
  old.source.fingerprint = *fp;
  index::SourceIdentity now;
  now.size = f.file.size();
  now.inode = 7;
  std::string why;
  EXPECT_TRUE(index::grew_from(old, now, whole, &why)) << why;

  index::SourceIdentity other = now;
  other.inode = 8;
  EXPECT_FALSE(index::grew_from(old, other, whole, &why));
  EXPECT_EQ(why, "another file");
  index::SourceIdentity same_size = now;
  same_size.size = cut;
  EXPECT_FALSE(index::grew_from(old, same_size, io::SpanBytes({f.file.data(), cut}), &why));
  EXPECT_EQ(why, "not larger");
  // Its head rewritten, or the 64 KiB before the old end: not the file that was indexed.
  for (uint64_t at : {uint64_t{100}, cut - 100}) {
    Bytes changed = f.file;
    changed[at] ^= 1;
    EXPECT_FALSE(index::grew_from(old, now, io::SpanBytes(changed), &why)) << at;
    EXPECT_NE(why.find("are not those indexed before"), std::string::npos) << why;
  }
}

}  // namespace
}  // namespace mibz2::test
