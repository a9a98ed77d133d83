// The front door's read handle (catalog/read_handle.h): what a read that fails says, and its one
// rule for going on. A file rewritten in place while it is read gives ESTALE (kChanged), never the
// new content's bytes after the old one's; a file replaced by a rename reads its old content to the
// end; an index that does not match a file that has not changed is built again once, and the read
// goes on at the same offset.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <string>

#include "catalog/front_door.h"
#include "catalog/read_handle.h"
#include "catalog_test_support.h"

namespace mibz2::test {
namespace {

using Kind = engine::ReadFailure::Kind;

// A front door on a scratch index directory: one decoder, a small cache and no read-ahead, so that
// what has not been read is not decoded yet (and must come from the file as it is then).
struct Door {
  TempDir dir;
  catalog::FrontDoor door{{.threads = 1, .cache_size = 2 << 20, .readahead = false,
                           .index_dir = (dir.path() / "idx").string()}};

  std::unique_ptr<catalog::ReadHandle> open(const std::filesystem::path& path) {
    const catalog::FileRef file = door.file(path.string());
    const catalog::IndexStatus got = door.obtain(file, false);
    EXPECT_TRUE(got.ready()) << got.error.message();
    base::Result<std::unique_ptr<catalog::ReadHandle>> h = door.open(file);
    EXPECT_TRUE(h.ok()) << h.status().message();
    return h.ok() ? std::move(h).value() : nullptr;
  }
};

// `bytes` written over the file at `path`, in place: the same inode, truncated first (cp's way).
void rewrite_in_place(const std::filesystem::path& path, const Bytes& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

// Reads the whole file in 256 KiB pieces from `from`; every byte that comes must be `plain`'s at
// its offset. Returns the failure that ended it (none at the end of the file).
std::optional<engine::ReadFailure> read_to_end(catalog::ReadHandle& h, const Bytes& plain, uint64_t from) {
  Bytes buf(256 << 10);
  for (uint64_t at = from; at < h.size();) {
    const catalog::ReadResult r = h.read(at, buf.size(), buf.data());
    if (!r.ok()) {
      EXPECT_FALSE(r.why.empty());
      return r.failure;
    }
    EXPECT_GT(r.bytes, 0u);
    EXPECT_TRUE(std::equal(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(r.bytes),
                           plain.begin() + static_cast<std::ptrdiff_t>(at)))
        << "bytes at " << at << " are not the content the file was opened on";
    if (r.bytes == 0) break;
    at += r.bytes;
  }
  return std::nullopt;
}

TEST(ReadHandle, AFileRewrittenInPlaceWhileReadFailsWithEstaleNeverAMix) {
  Door d;
  const Bytes old_plain = text_bytes(6000000, 31);
  const Bytes new_plain = text_bytes(6000000, 32);
  const std::filesystem::path path = d.dir.write("x.bz2", libbz2_compress(as_span(old_plain), 1));
  auto h = d.open(path);
  ASSERT_TRUE(h);
  Bytes first(1 << 20);
  const catalog::ReadResult r = h->read(0, first.size(), first.data());
  ASSERT_TRUE(r.ok()) << r.why;
  ASSERT_EQ(r.bytes, first.size());

  rewrite_in_place(path, libbz2_compress(as_span(new_plain), 1));
  const std::optional<engine::ReadFailure> ended = read_to_end(*h, old_plain, first.size());
  ASSERT_TRUE(ended) << "the old content was read to its end from the new file's bytes";
  EXPECT_EQ(ended->kind, Kind::kChanged);
  catalog::ReadResult failed{0, ended, "w"};
  EXPECT_EQ(failed.status("x").code(), ESTALE);

  // A new open reads the new content.
  auto again = d.open(path);
  ASSERT_TRUE(again);
  EXPECT_FALSE(read_to_end(*again, new_plain, 0));
}

TEST(ReadHandle, AFileReplacedByARenameReadsItsOldContentToTheEnd) {
  Door d;
  const Bytes old_plain = text_bytes(3000000, 33);
  const std::filesystem::path path = d.dir.write("x.bz2", libbz2_compress(as_span(old_plain), 1));
  auto h = d.open(path);
  ASSERT_TRUE(h);
  const std::filesystem::path other = d.dir.write("new.bz2", libbz2_compress(as_span(text_bytes(3000000, 34)), 1));
  std::filesystem::rename(other, path);
  EXPECT_FALSE(read_to_end(*h, old_plain, 0));
}

// A damaged copy with the intact file's size and fingerprint finds the intact file's index (its
// sampled blocks agree). The first block that does not match is the handle's cue: the file has not
// changed, so the index was wrong; it is built again and the read goes on, up to the real damage.
TEST(ReadHandle, AnIndexThatDoesNotMatchAnUnchangedFileIsBuiltAgainAndTheReadGoesOn) {
  Door d;
  const Bytes plain = text_bytes(3000000, 35);
  const Bytes intact = libbz2_compress(as_span(plain), 1);
  Bytes damaged = intact;
  flip_bit(damaged, damaged.size() * 8 / 2);
  ASSERT_TRUE(d.open(d.dir.write("intact.bz2", intact)));  // its index is stored
  auto h = d.open(d.dir.write("twin.bz2", damaged));
  ASSERT_TRUE(h);
  const std::optional<engine::ReadFailure> ended = read_to_end(*h, plain, 0);
  ASSERT_TRUE(ended);
  EXPECT_EQ(ended->kind, Kind::kDamaged) << "the twin's own index was never built";
  EXPECT_TRUE(h->index()->blocks[ended->block].damaged());
}

// Every kind says where it happened, in words that name the block.
TEST(ReadHandle, AFailureNamesItsBlockAndWhatWasFound) {
  Door d;
  const Bytes plain = text_bytes(3000000, 36);
  Bytes damaged = libbz2_compress(as_span(plain), 1);
  flip_bit(damaged, damaged.size() * 8 / 2);
  auto h = d.open(d.dir.write("bad.bz2", damaged));
  ASSERT_TRUE(h);
  const std::optional<engine::ReadFailure> ended = read_to_end(*h, plain, 0);
  ASSERT_TRUE(ended);
  ASSERT_EQ(ended->kind, Kind::kDamaged);
  const uint64_t at = h->index()->blocks[ended->block].out_offset;
  Bytes buf(100);
  const catalog::ReadResult r = h->read(at, buf.size(), buf.data());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.why.find("damaged at decompressed byte " + std::to_string(at)), std::string::npos) << r.why;
  EXPECT_NE(r.why.find("block " + std::to_string(ended->block)), std::string::npos) << r.why;
  const base::Status s = r.status("bad.bz2");
  EXPECT_EQ(s.code(), EBADMSG);
  EXPECT_EQ(s.message().rfind("bad.bz2: damaged", 0), 0u) << s.message();
}

// A process that opens file after file keeps the entries of those it has open and a bounded few
// more, not one for every file it ever opened.
TEST(FrontDoor, EntriesNoOneUsesAreForgottenBeyondTheirBound) {
  TempDir dir;
  catalog::FrontDoor door{{.threads = 1, .cache_size = 2 << 20, .index_dir = (dir.path() / "idx").string(),
                           .idle_files_bytes = 64 << 10}};
  const Bytes small = libbz2_compress(as_span(text_bytes(2000, 37)), 1);
  std::unique_ptr<catalog::ReadHandle> held;
  for (int i = 0; i < 400; ++i) {
    const catalog::FileRef file = door.file(dir.write("f" + std::to_string(i) + ".bz2", small).string());
    ASSERT_TRUE(door.obtain(file, false).ready());
    base::Result<std::unique_ptr<catalog::ReadHandle>> h = door.open(file);
    ASSERT_TRUE(h.ok());
    if (i == 0) held = std::move(h).value();  // the first stays open throughout
  }
  // About 1 KiB an entry here: 64 KiB keeps a few dozen, never all 400.
  EXPECT_LT(door.kept_files(), 100u);
  EXPECT_GT(door.kept_files(), 10u) << "recently closed files are kept for a later open";
  // The open one is still the entry its path names.
  EXPECT_EQ(door.file((dir.path() / "f0.bz2").string()), held->file());
}

}  // namespace
}  // namespace mibz2::test
