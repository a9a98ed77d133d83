// mibz2fs mounted for real, while things change under it: a source file replaced (compressed or
// plain), a file added, symlinks to compressed files, and a damaged block that must fail with EIO
// there and only there.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "base/byte_buffer.h"
#include "bz2/block_decoder.h"
#include "io/fd_io.h"
#include "mount_harness.h"

namespace mibz2::test {
namespace {

TEST_F(FsMountTest, ReplacedSourceShowsTheNewContentAndSize) {
  const stdfs::path src = new_source();
  const Bytes v1 = text_bytes(300000, 60);
  const Bytes v2 = text_bytes(700000, 61);   // larger, several blocks
  const Bytes v3 = text_bytes(120000, 62);   // smaller than both
  write_file((src / "r.txt.bz2"), as_span(libbz2_compress(as_span(v1), 9)));
  MOUNT_OR_RETURN(mount(src));
  const stdfs::path shown = mnt_ / "r.txt";
  ASSERT_EQ(stdfs::file_size(shown), v1.size());
  ASSERT_TRUE(same_bytes(read_all(shown).data, v1));

  // Written next to it and renamed over it, as tools replace files.
  auto replace = [&](const Bytes& content, int level) {
    write_file((src / ".r.txt.bz2.tmp"), as_span(libbz2_compress(as_span(content), level)));
    stdfs::rename((src / ".r.txt.bz2.tmp"), (src / "r.txt.bz2"));
  };
  for (const auto& [content, level] : {std::pair{&v2, 1}, std::pair{&v3, 9}}) {
    SCOPED_TRACE("replaced by " + std::to_string(content->size()) + " bytes");
    replace(*content, level);
    // The kernel keeps attributes for the mirror's long timeout; the change is noticed at the next
    // open: the old node answers ESTALE, the kernel looks the name up again and opens the new node
    // (re-indexed, with a size and pages of its own).
    struct stat st;
    const ReadAll r = read_all(shown);
    EXPECT_EQ(r.error, 0);
    EXPECT_TRUE(same_bytes(r.data, *content)) << "open and read after the replacement";
    ASSERT_EQ(stat(shown.c_str(), &st), 0);
    EXPECT_EQ(static_cast<uint64_t>(st.st_size), content->size()) << "stat after open and read";
    EXPECT_EQ(get_xattr(shown, kXattrs[0]).value, std::to_string(stdfs::file_size((src / "r.txt.bz2"))));
    EXPECT_EQ(get_xattr(shown, kXattrs[1]).value,
              std::to_string(block_count(read_file((src / "r.txt.bz2")))));
  }
  // A file added to the source appears in the listing.
  const Bytes added = text_bytes(1000, 63);
  write_file((src / "added.txt.bz2"), as_span(libbz2_compress(as_span(added), 9)));
  EXPECT_TRUE(same_bytes(read_all(mnt_ / "added.txt").data, added));
}

// Dump mirrors keep "latest" symlinks to compressed files: a symlink with a relative target that
// is a bzip2 file is shown like that file (decompressed name) and points to its decompressed name;
// one with an absolute target, or to something that is not bzip2, stays as it is.
TEST_F(FsMountTest, SymlinksToCompressedFilesFollowTheirTargetsNames) {
  const stdfs::path src = new_source();
  stdfs::create_directories(src / "20261101");
  const Bytes dump = text_bytes(400000, 80);
  write_file(src / "20261101" / "all.json.bz2", as_span(libbz2_compress(as_span(dump), 9)));
  write_file(src / "20261101" / "notes.txt.bz2", as_span(to_bytes("not bzip2 at all")));
  stdfs::create_symlink("20261101/all.json.bz2", src / "latest-all.json.bz2");
  stdfs::create_symlink("20261101/notes.txt.bz2", src / "latest-notes.txt.bz2");
  stdfs::create_symlink((src / "20261101" / "all.json.bz2").string(), src / "absolute.json.bz2");
  MOUNT_OR_RETURN(mount(src));

  std::set<std::string> names;
  for (const auto& e : stdfs::directory_iterator(mnt_)) names.insert(e.path().filename().string());
  EXPECT_EQ(names, (std::set<std::string>{"20261101", "latest-all.json", "latest-notes.txt.bz2", "absolute.json.bz2"}));

  EXPECT_TRUE(stdfs::is_symlink(mnt_ / "latest-all.json"));
  EXPECT_EQ(stdfs::read_symlink(mnt_ / "latest-all.json").string(), "20261101/all.json");
  struct stat st;
  ASSERT_EQ(lstat((mnt_ / "latest-all.json").c_str(), &st), 0);
  EXPECT_EQ(static_cast<size_t>(st.st_size), std::string("20261101/all.json").size());
  const ReadAll through = read_all(mnt_ / "latest-all.json");
  EXPECT_EQ(through.error, 0);
  EXPECT_TRUE(same_bytes(through.data, dump)) << "reading through the link gives the decompressed file";

  EXPECT_EQ(stdfs::read_symlink(mnt_ / "latest-notes.txt.bz2").string(), "20261101/notes.txt.bz2");
  EXPECT_EQ(text_of(read_all(mnt_ / "latest-notes.txt.bz2").data), "not bzip2 at all");
  EXPECT_EQ(stdfs::read_symlink(mnt_ / "absolute.json.bz2").string(), (src / "20261101" / "all.json.bz2").string());
}

// A plain (not compressed) file replaced in the source the same way.
TEST_F(FsMountTest, ReplacedPlainFileShowsTheNewContentAndSize) {
  const stdfs::path src = new_source();
  write_file((src / "p.txt"), as_span(to_bytes("version one\n")));
  MOUNT_OR_RETURN(mount(src));
  const stdfs::path shown = mnt_ / "p.txt";
  ASSERT_EQ(text_of(read_all(shown).data), "version one\n");
  for (const std::string next : {"VERSION TWO\n", "version three, longer\n"}) {
    SCOPED_TRACE("replaced by '" + next + "'");
    write_file((src / ".p.tmp"), as_span(to_bytes(next)));
    stdfs::rename((src / ".p.tmp"), (src / "p.txt"));
    // Noticed at the next open, as for compressed files: a new node, with a size and pages of its own.
    EXPECT_EQ(text_of(read_all(shown).data), next) << "open and read after the replacement";
    EXPECT_EQ(stdfs::file_size(shown), next.size()) << "stat after the open";
  }
}

// One block of a multi-block file has a bit flipped so that it decodes to the wrong bytes and its
// CRC fails: reads touching it fail with EIO, every other range reads right, and the daemon lives.
TEST_F(FsMountTest, DamagedBlockFailsWithEioAndOnlyThere) {
  const Bytes original = text_bytes(1500000, 70);
  Bytes compressed = libbz2_compress(as_span(original), 1);
  FileLayout layout;
  ASSERT_TRUE(walk_file(as_span(compressed), &layout));
  ASSERT_GE(layout.blocks.size(), 8u);
  const size_t bad = 4;
  const BlockSpan& blk = layout.blocks[bad];
  // A flip in the block's coded symbols that keeps the block's length and decoded size but not
  // its bytes (so only the CRC catches it).
  bool flipped = false;
  {
    bz2::BlockDecoder decoder;
    base::ByteBuffer out;
    for (uint64_t bit = blk.end_bit - (blk.end_bit - blk.start_bit) / 3; bit + 64 < blk.end_bit && !flipped;
         bit += 997) {
      Bytes trial = compressed;
      flip_bit(trial, bit);
      out.clear();
      bz2::BlockResult r;
      const bz2::Error e = decoder.decode(as_span(trial), blk.start_bit, blk.level, out, r);
      if (e.code == bz2::ErrorCode::kBlockCrcMismatch && r.end_bit == blk.end_bit && out.size() == blk.out_size) {
        compressed = std::move(trial);
        flipped = true;
      }
    }
  }
  ASSERT_TRUE(flipped) << "no bit found whose flip only breaks the CRC";

  const stdfs::path src = new_source();
  write_file((src / "damaged.txt.bz2"), as_span(compressed));
  const Bytes good = text_bytes(50000, 71);
  write_file((src / "good.txt.bz2"), as_span(libbz2_compress(as_span(good), 9)));
  Mibz2fs* m = mount(src);
  MOUNT_OR_RETURN(m);
  const stdfs::path p = mnt_ / "damaged.txt";
  EXPECT_EQ(stdfs::file_size(p), original.size());
  EXPECT_EQ(get_xattr(p, kXattrs[3]).value, "1");
  EXPECT_EQ(get_xattr(p, kXattrs[1]).value, std::to_string(layout.blocks.size()));

  const int fd = open(p.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  std::vector<uint8_t> buf(1 << 20);
  auto expect_read = [&](uint64_t off, size_t len, const char* what) {
    SCOPED_TRACE(std::string(what) + " at " + std::to_string(off) + " length " + std::to_string(len));
    const ssize_t n = io::pread_full(fd, buf.data(), len, off);
    ASSERT_EQ(n, static_cast<ssize_t>(len)) << (n < 0 ? std::strerror(static_cast<int>(-n)) : "short read");
    EXPECT_EQ(std::memcmp(buf.data(), original.data() + off, len), 0);
  };
  auto expect_eio = [&](uint64_t off, size_t len, const char* what) {
    SCOPED_TRACE(std::string(what) + " at " + std::to_string(off) + " length " + std::to_string(len));
    const ssize_t n = pread(fd, buf.data(), len, static_cast<off_t>(off));
    EXPECT_EQ(n, -1);
    EXPECT_EQ(errno, EIO) << std::strerror(errno);
  };
  const uint64_t bad_start = blk.out_offset, bad_end = blk.out_offset + blk.out_size;
  const uint64_t page = 4096;
  expect_eio(bad_start + blk.out_size / 2, 4096, "middle of the damaged block");
  expect_read(0, 100000, "first block");
  expect_read(layout.blocks[bad + 2].out_offset + 10, 50000, "two blocks after");
  expect_read(original.size() - 5000, 5000, "end of the file");
  expect_eio(bad_start, 1, "first byte of the damaged block");
  expect_eio(bad_end - 1, 1, "last byte of the damaged block");
  // A damaged file is read around the page cache, so the bytes right up to the damaged block and
  // right after it read; a read that runs into the damage stops short at it.
  expect_read(bad_start - page, page, "the bytes just before");
  expect_read(bad_end, page, "the bytes just after");
  {
    SCOPED_TRACE("range starting before it");
    const ssize_t n = pread(fd, buf.data(), 100, static_cast<off_t>(bad_start - 10));
    EXPECT_EQ(n, 10) << "a read into the damage returns the verified bytes before it";
    EXPECT_EQ(std::memcmp(buf.data(), original.data() + bad_start - 10, 10), 0);
  }
  close(fd);
  const ReadAll whole = read_all(p);
  EXPECT_EQ(whole.error, EIO);
  EXPECT_EQ(whole.data.size(), bad_start) << "cat gets every byte before the damage, then the error";

  EXPECT_TRUE(m->running()) << "mibz2fs ended after a damaged read";
  EXPECT_TRUE(is_mounted(mnt_));
  EXPECT_TRUE(same_bytes(read_all(mnt_ / "good.txt").data, good));
  // Still EIO on a second try (from a fresh open).
  const int fd2 = open(p.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd2, 0);
  EXPECT_EQ(pread(fd2, buf.data(), 4096, static_cast<off_t>(bad_start + 4096 * 3)), -1);
  EXPECT_EQ(errno, EIO);
  close(fd2);
}

}  // namespace
}  // namespace mibz2::test
