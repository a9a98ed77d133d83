// mibz2fs mounted for real while a file is rewritten IN PLACE under an open descriptor (same source
// inode: `cat new > file`, `cp` over it, a download resumed into it). The kernel's page cache is per
// inode and shared by every open descriptor of it: a mount that kept one inode for both contents
// served one reader's pages to the other, so a descriptor opened on version a read version b's
// bytes (scripts/soak's "mixed" and "wrong" reads). What must hold, for a compressed file and for
// a plain one alike: a later open reads exactly the new version, and the descriptor opened before
// the rewrite reads only the old version's bytes at each offset, or fails with EIO or ESTALE (man
// mibz2fs, DESCRIPTION: which of the two is a matter of who notices first); never the new.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "mount_harness.h"

namespace mibz2::test {
namespace {

// Rewrites `path` in place: opened with O_TRUNC and written, so the inode stays the same.
void rewrite_in_place(const stdfs::path& path, const Bytes& content) {
  struct stat before {};
  ASSERT_EQ(stat(path.c_str(), &before), 0) << path;
  const int fd = open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path << ": " << std::strerror(errno);
  size_t done = 0;
  while (done < content.size()) {  // in pieces, as cat and cp write
    const size_t piece = std::min<size_t>(128 << 10, content.size() - done);
    const ssize_t n = write(fd, content.data() + done, piece);
    ASSERT_GT(n, 0) << std::strerror(errno);
    done += static_cast<size_t>(n);
  }
  close(fd);
  struct stat after {};
  ASSERT_EQ(stat(path.c_str(), &after), 0);
  ASSERT_EQ(after.st_ino, before.st_ino) << "the rewrite must keep the inode";
}

class FsVersionsTest : public FsMountTest {
 protected:
  // What the descriptor opened on version a got, read by read of 64 KiB, after the rewrite.
  struct OldReads {
    size_t served = 0, from_b = 0, wrong = 0, eio = 0, estale = 0, other = 0;
  };

  // `stored_a` and `stored_b` are what SOURCE/source_name holds (compressed or not), `a` and `b`
  // what MOUNT/shown_name shows for each. With `open_new_first`, a reader opens the new version
  // before the old descriptor reads on; else the old descriptor is the first to meet the change.
  OldReads run(const std::string& source_name, const std::string& shown_name, const Bytes& stored_a, const Bytes& a,
               const Bytes& stored_b, const Bytes& b, bool open_new_first = true) {
    OldReads got;
    EXPECT_NE(a.size(), b.size());
    const stdfs::path src = new_source();
    write_file(src / source_name, as_span(stored_a));
    // A cache of about one block of 900 kB: the old version's second half is decoded again when
    // read after the rewrite, never served whole from blocks decoded ahead of it.
    Mibz2fs* m = mount(src, {"-o", "cache_size=1M"});
    if (!m) {
      ADD_FAILURE() << "no mount";
      return got;
    }
    const stdfs::path shown = mnt_ / shown_name;

    // Reader A opens version a and reads its first half (into the kernel's page cache).
    const int fd_a = open(shown.c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_GE(fd_a, 0) << std::strerror(errno);
    if (fd_a < 0) return got;
    // Read exactly what is asked: the kernel's read-ahead of the mount (1 MiB) would otherwise bring
    // the second half into the page cache with the first, and it must be left unread here.
    EXPECT_EQ(posix_fadvise(fd_a, 0, 0, POSIX_FADV_RANDOM), 0);
    const size_t half = a.size() / 2;
    std::vector<uint8_t> buf(1 << 20);
    for (size_t off = 0; off < half;) {
      const ssize_t n = pread(fd_a, buf.data(), std::min(buf.size(), half - off), static_cast<off_t>(off));
      EXPECT_GT(n, 0) << "reader A, before the rewrite, at " << off << ": " << std::strerror(errno);
      if (n <= 0) return got;
      EXPECT_EQ(std::memcmp(buf.data(), a.data() + off, static_cast<size_t>(n)), 0) << "at " << off;
      off += static_cast<size_t>(n);
    }

    rewrite_in_place(src / source_name, stored_b);

    auto new_reader = [&](const char* who) {
      const ReadAll whole = read_all(shown);
      EXPECT_EQ(whole.error, 0) << std::strerror(whole.error);
      EXPECT_TRUE(same_bytes(whole.data, b)) << who;
      struct stat st {};
      EXPECT_EQ(stat(shown.c_str(), &st), 0);
      EXPECT_EQ(static_cast<size_t>(st.st_size), b.size()) << "stat after the rewrite (and an open)";
    };
    // Reader B opens after the rewrite: exactly version b, whole.
    if (open_new_first) new_reader("a reader opening after the rewrite");

    // Reader A goes on, then reads its first half again: every byte it gets is version a's at that
    // offset, or the read fails with EIO or ESTALE; never version b's.
    auto read_on_a = [&](size_t from, size_t to) {
      for (size_t off = from; off < to; off += 64 << 10) {
        const size_t len = std::min<size_t>(64 << 10, to - off);
        const ssize_t n = pread(fd_a, buf.data(), len, static_cast<off_t>(off));
        if (n < 0) {
          (errno == EIO ? got.eio : errno == ESTALE ? got.estale : got.other) += 1;
          EXPECT_TRUE(errno == EIO || errno == ESTALE) << "at " << off << ": " << std::strerror(errno);
          continue;
        }
        if (n == 0) continue;  // version a's end is the descriptor's end, if its size was kept
        const size_t size = static_cast<size_t>(n);
        got.served += size;
        if (off + size <= a.size() && std::memcmp(buf.data(), a.data() + off, size) == 0) continue;
        if (off + size <= b.size() && std::memcmp(buf.data(), b.data() + off, size) == 0) ++got.from_b;
        else ++got.wrong;
        if (got.from_b + got.wrong == 1) ADD_FAILURE() << "reader A got bytes that are not version a's at " << off << " (+" << size << ")";
      }
    };
    read_on_a(half, a.size());
    read_on_a(0, half);
    EXPECT_EQ(got.from_b, 0u) << "reads of 64 KiB on the descriptor of version a that served version b's bytes";
    EXPECT_EQ(got.wrong, 0u) << "reads of 64 KiB on it that served neither version (a mix)";
    EXPECT_GT(got.eio + got.estale, 0u) << "the second half was never read before: it cannot all be version a's";
    RecordProperty("reader_a_bytes_served", std::to_string(got.served));
    RecordProperty("reader_a_reads_eio", std::to_string(got.eio));
    RecordProperty("reader_a_reads_estale", std::to_string(got.estale));
    if (!open_new_first) {
      // The daemon found the change through this descriptor (its index no longer matches the
      // source) and retired the node: the kernel drops the node's pages and attributes, and asks
      // for them again before each read, which ESTALE answers (the bytes read before included).
      EXPECT_TRUE(eventually([&] { return pread(fd_a, buf.data(), 4096, 0) < 0 && errno == ESTALE; }))
          << "the descriptor of the old content still reads its first bytes";
    }
    close(fd_a);

    // And a new open reads version b.
    new_reader(open_new_first ? "a second reader after the rewrite" : "a reader opening after the old one");
    return got;
  }
};

TEST_F(FsVersionsTest, CompressedFileRewrittenInPlaceNeverMixesVersionsInOneOpenFile) {
  const Bytes a = text_bytes(3'000'000, 2101);
  const Bytes b = text_bytes(3'700'000, 2102);
  run("x.txt.bz2", "x.txt", libbz2_compress(as_span(a), 9), a, libbz2_compress(as_span(b), 9), b);
}

TEST_F(FsVersionsTest, PlainFileRewrittenInPlaceNeverMixesVersionsInOneOpenFile) {
  const Bytes a = text_bytes(3'000'000, 2103);
  const Bytes b = text_bytes(3'700'000, 2104);
  run("p.txt", "p.txt", a, a, b, b);
}

// Nobody opens the new content before the old descriptor reads on: the daemon finds the change
// through it (or its read-ahead), has the kernel drop the old node's pages and attributes, and from
// then on the kernel asks for them before each read on it and gets ESTALE (man mibz2fs,
// DESCRIPTION): reads meet EIO until then (none, when read-ahead found it first), ESTALE after.
TEST_F(FsVersionsTest, CompressedFileRewrittenInPlaceAndMetFirstByTheOldDescriptorEndsInEstale) {
  const Bytes a = text_bytes(3'000'000, 2106);
  const Bytes b = text_bytes(3'700'000, 2107);
  run("y.txt.bz2", "y.txt", libbz2_compress(as_span(a), 9), a, libbz2_compress(as_span(b), 9), b, /*open_new_first=*/false);
}

// A chmod changes the ctime, so the file gets a new node (its kernel page cache starts empty), but
// not a new index: the nodes of one source file share its catalog entry, which checks the content
// again and keeps the index it has (without an index directory, a new entry would mean indexing a
// 96 GB dump again for a chmod).
TEST_F(FsMountTest, AChmodGivesANewNodeButNoNewIndex) {
  const stdfs::path src = new_source();
  const Bytes content = text_bytes(400'000, 2105);
  write_file(src / "c.txt.bz2", as_span(libbz2_compress(as_span(content), 9)));
  MOUNT_OR_RETURN(mount(src));
  const stdfs::path shown = mnt_ / "c.txt";
  ASSERT_TRUE(same_bytes(read_all(shown).data, content));
  struct stat before {};
  ASSERT_EQ(stat(shown.c_str(), &before), 0);

  ASSERT_EQ(chmod((src / "c.txt.bz2").c_str(), 0640), 0);
  EXPECT_TRUE(same_bytes(read_all(shown).data, content)) << "after the chmod";
  struct stat after {};
  ASSERT_EQ(stat(shown.c_str(), &after), 0);
  EXPECT_EQ(after.st_mode & 07777, 0640u) << "stat after an open shows the new mode";
  EXPECT_NE(after.st_ino, before.st_ino) << "a new ctime is a new node";
  const std::string stats = get_xattr(mnt_, "user.mibz2fs.stats").value;
  EXPECT_NE(stats.find("indexes_built=1 "), std::string::npos) << stats;
  EXPECT_NE(stats.find("indexes_loaded=0 "), std::string::npos) << stats;
}

}  // namespace
}  // namespace mibz2::test
