// A file that grows under the Catalog (a download; index/FORMAT.md, "A file that grew"): appended
// in steps and looked at after each, it keeps the blocks its index had, its index is at every step
// the one a build from the start makes, the decode work of all the steps is about one full index,
// and one index file is left; a file whose old prefix is not what its index says (its head
// rewritten, or the last block before the old end) is indexed from its start, and the index of
// what it was is left alone; a stream (mibz2 cat) of a grown file and a forced rebuild keep
// nothing.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "catalog_test_support.h"
#include "engine/reader.h"

namespace mibz2::test {
namespace {

using catalog::IndexState;

// Appends `bytes` to the file at `path` (O_APPEND: the same inode, as a download grows it).
void append(const std::string& path, std::span<const uint8_t> bytes) {
  const int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  close(fd);
}

// The index a build from the start makes of the first `size` bytes of `file`, with the identity of
// `as` (the catalog's index of the same bytes).
index::BlockIndex from_start(const Bytes& file, uint64_t size, const index::BlockIndex& as) {
  index::BlockIndex idx = build_guarded(std::span<const uint8_t>(file.data(), size), 2).index;
  idx.source = as.source;
  return idx;
}

// Two streams (levels 1 and 2) of text: many blocks, and a stream boundary for a step to cross.
Bytes two_streams() {
  const Bytes a = libbz2_compress(text_bytes(scaled(1600000, 600000), 41), 1);
  const Bytes b = libbz2_compress(text_bytes(scaled(900000, 400000), 42), 2);
  return concat({&a, &b});
}

TEST(CatalogGrown, AFileAppendedInStepsKeepsItsBlocksAndOneIndexFile) {
  CatalogRig rig;
  const Bytes file = two_streams();
  const index::BuildResult full = build_guarded(file, 2);
  ASSERT_TRUE(full.ok());
  const size_t steps = 12;
  uint64_t largest_block = 0;  // compressed bytes
  for (const index::BlockRecord& r : full.index.blocks) largest_block = std::max(largest_block, r.bit_length / 8 + 1);

  uint64_t size = file.size() / steps;
  const catalog::FileRef f = rig.add_file("dl.bz2", Bytes(file.begin(), file.begin() + static_cast<long>(size)));
  ASSERT_TRUE(rig.catalog.wait(f));
  uint64_t kept_in_all_steps = 0;
  for (size_t step = 2; step <= steps; ++step) {
    // The old index's last block may be the one the old end cut, and the block before the old end
    // is decoded again: an index of three blocks or more keeps at least one (a smaller file, as the
    // sanitizer builds make, may keep none in its first steps).
    const size_t blocks_before = rig.catalog.status(f).index->blocks.size();
    SCOPED_TRACE("step " + std::to_string(step));
    const uint64_t upto = file.size() * step / steps;
    append(f->path(), std::span<const uint8_t>(file.data() + size, upto - size));
    size = upto;
    EXPECT_TRUE(rig.catalog.refresh(f));
    ASSERT_TRUE(rig.catalog.wait(f));
    const catalog::IndexStatus s = rig.catalog.status(f);
    EXPECT_EQ(s.index->source.size, size);
    EXPECT_TRUE(same_index(*s.index, from_start(file, size, *s.index)));
    if (blocks_before >= 3) {
      EXPECT_GT(s.origin.blocks_kept, 0u) << blocks_before << " blocks before";
    }
    kept_in_all_steps += s.origin.blocks_kept;
    EXPECT_TRUE(s.origin.saved) << s.origin.save_error;
    EXPECT_EQ(rig.stored(), 1u) << "the index of the file's old prefix is left in the index directory";
  }
  EXPECT_GT(kept_in_all_steps, 0u);
  // What every build read and decoded, all steps together: about one full index (each step
  // decodes again the block before its old end, and the block it ends inside).
  const catalog::CatalogSummary sum = rig.catalog.summary();
  EXPECT_EQ(sum.built, steps);
  EXPECT_LE(sum.bytes_indexed, file.size() + 2 * steps * largest_block);
  EXPECT_LE(sum.blocks_decoded, full.index.blocks.size() + 2 * steps + 4);

  // The bytes through the grown index: the whole file.
  const std::shared_ptr<engine::Reader> reader = reader_of(rig.catalog, f);
  ASSERT_TRUE(reader);
  const LibResult lib = libbz2_decompress(file);
  ASSERT_TRUE(lib.ok);
  Bytes got(lib.out.size());
  ASSERT_EQ(reader->read(0, got.size(), got.data()), static_cast<ssize_t>(got.size()));
  EXPECT_TRUE(same_bytes(got, lib.out));

  // A forced rebuild (mibz2 index --force) keeps nothing.
  append(f->path(), libbz2_compress(text_bytes(1000, 43), 1));
  rig.catalog.refresh(f);
  rig.catalog.prepare(f, catalog::Catalog::Need::kRebuild);
  settle_guarded(rig.catalog, f);
  EXPECT_EQ(rig.catalog.status(f).state, IndexState::kReady);
  EXPECT_EQ(rig.catalog.status(f).origin.blocks_kept, 0u);
}

// The prefix is not what the index says: `change` alters the file (already grown) at `at`.
void expect_indexed_from_start(const Bytes& file, uint64_t cut, uint64_t at) {
  CatalogRig rig;
  const catalog::FileRef f = rig.add_file("dl.bz2", Bytes(file.begin(), file.begin() + static_cast<long>(cut)));
  ASSERT_TRUE(rig.catalog.wait(f));
  const uint64_t built_before = rig.catalog.summary().blocks_decoded;
  Bytes changed = file;
  changed[at] ^= 0x10;
  {
    // Rewritten in place (the same inode), and grown.
    const int fd = open(f->path().c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(pwrite(fd, changed.data(), changed.size(), 0), static_cast<ssize_t>(changed.size()));
    close(fd);
  }
  EXPECT_TRUE(rig.catalog.refresh(f));
  rig.catalog.prepare(f, catalog::Catalog::Need::kNow);
  settle_guarded(rig.catalog, f);
  const catalog::IndexStatus s = rig.catalog.status(f);
  ASSERT_EQ(s.state, IndexState::kReady) << s.error;
  EXPECT_EQ(s.origin.blocks_kept, 0u);
  EXPECT_TRUE(same_index(*s.index, from_start(changed, changed.size(), *s.index)));
  // Every block of the changed file decoded again.
  EXPECT_GE(rig.catalog.summary().blocks_decoded - built_before, s.index->blocks.size());
  // The index of what the file was is not proven to be of a prefix of it: left alone.
  EXPECT_EQ(rig.stored(), 2u);
}

TEST(CatalogGrown, AFileWhoseHeadWasRewrittenIsIndexedFromItsStart) {
  const Bytes file = two_streams();
  expect_indexed_from_start(file, file.size() / 2, 1000);
}

TEST(CatalogGrown, AFileWhoseLastBlockBeforeTheOldEndChangedIsIndexedFromItsStart) {
  // Incompressible bytes at level 9: blocks of about 900 kB, so that the last complete block before
  // the old end reaches back past the 64 KiB the fingerprint covers there.
  const Bytes file = libbz2_compress(random_bytes(3200000, 44), 9);
  FileLayout layout;
  ASSERT_TRUE(walk_file(file, &layout));
  ASSERT_GE(layout.blocks.size(), 3u);
  const BlockSpan& last = layout.blocks[1];
  const uint64_t cut = layout.blocks[2].start_bit / 8 + 100000;  // inside block 2
  const uint64_t at = (last.start_bit + last.end_bit) / 16;      // the middle of block 1
  ASSERT_GT(at, uint64_t{64} << 10);
  ASSERT_LT(at + (uint64_t{64} << 10), cut);
  expect_indexed_from_start(file, cut, at);
}

TEST(CatalogGrown, AStreamOfAGrownFileHasEveryBlock) {
  CatalogRig rig;
  const Bytes file = two_streams();
  const uint64_t cut = file.size() / 2;
  const catalog::FileRef f = rig.add_file("dl.bz2", Bytes(file.begin(), file.begin() + static_cast<long>(cut)));
  ASSERT_TRUE(rig.catalog.wait(f));
  append(f->path(), std::span<const uint8_t>(file.data() + cut, file.size() - cut));
  EXPECT_TRUE(rig.catalog.refresh(f));
  Bytes streamed;
  ASSERT_TRUE(rig.catalog.stream(f, [&](const index::BlockStream::Block& b) {
    streamed.insert(streamed.end(), b.bytes.data(), b.bytes.data() + b.bytes.size());
    return true;
  }));
  const LibResult lib = libbz2_decompress(file);
  ASSERT_TRUE(lib.ok);
  EXPECT_TRUE(same_bytes(streamed, lib.out));
  EXPECT_EQ(rig.catalog.status(f).origin.blocks_kept, 0u);
}

}  // namespace
}  // namespace mibz2::test
