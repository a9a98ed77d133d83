// mibz2fs mounted for real while a file is rewritten IN PLACE under an open descriptor (same source
// inode: `cat new > file`, `cp` over it, a download resumed into it). The kernel's page cache is per
// inode and shared by every open descriptor of it: a mount that kept one inode for both contents
// served one reader's pages to the other, so a descriptor opened on version a read version b's
// bytes (scripts/soak's "mixed" and "wrong" reads). What must hold, for a compressed file
// and for a plain one alike: a later open reads exactly the new version, and the descriptor opened
// before the rewrite reads only the old version's bytes at each offset, or fails; never the new.
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
  // `stored_a` and `stored_b` are what SOURCE/source_name holds (compressed or not), `a` and `b`
  // what MOUNT/shown_name shows for each.
  void run(const std::string& source_name, const std::string& shown_name, const Bytes& stored_a, const Bytes& a,
           const Bytes& stored_b, const Bytes& b) {
    ASSERT_NE(a.size(), b.size());
    const stdfs::path src = new_source();
    write_file(src / source_name, as_span(stored_a));
    MOUNT_OR_RETURN(mount(src));
    const stdfs::path shown = mnt_ / shown_name;

    // Reader A opens version a and reads its first half (into the kernel's page cache).
    const int fd_a = open(shown.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd_a, 0) << std::strerror(errno);
    const size_t half = a.size() / 2;
    std::vector<uint8_t> buf(1 << 20);
    for (size_t off = 0; off < half;) {
      const ssize_t n = pread(fd_a, buf.data(), std::min(buf.size(), half - off), static_cast<off_t>(off));
      ASSERT_GT(n, 0) << "reader A, before the rewrite, at " << off << ": " << std::strerror(errno);
      ASSERT_EQ(std::memcmp(buf.data(), a.data() + off, static_cast<size_t>(n)), 0) << "at " << off;
      off += static_cast<size_t>(n);
    }

    rewrite_in_place(src / source_name, stored_b);

    // Reader B opens after the rewrite: exactly version b, whole.
    const ReadAll whole = read_all(shown);
    EXPECT_EQ(whole.error, 0) << std::strerror(whole.error);
    EXPECT_TRUE(same_bytes(whole.data, b)) << "a reader opening after the rewrite";
    struct stat st {};
    ASSERT_EQ(stat(shown.c_str(), &st), 0);
    EXPECT_EQ(static_cast<size_t>(st.st_size), b.size()) << "stat after the rewrite (and an open)";

    // Reader A goes on, then reads its first half again: every byte it gets is version a's at that
    // offset, or the read fails (EIO: the version is gone); never version b's.
    size_t served = 0, failed = 0, from_b = 0, wrong = 0;
    auto read_on_a = [&](size_t from, size_t to) {
      for (size_t off = from; off < to; off += 64 << 10) {
        const size_t len = std::min<size_t>(64 << 10, to - off);
        const ssize_t n = pread(fd_a, buf.data(), len, static_cast<off_t>(off));
        if (n < 0) {
          EXPECT_TRUE(errno == EIO || errno == ESTALE) << "at " << off << ": " << std::strerror(errno);
          ++failed;
          continue;
        }
        if (n == 0) continue;  // version a's end is the descriptor's end, if its size was kept
        const size_t got = static_cast<size_t>(n);
        served += got;
        if (off + got <= a.size() && std::memcmp(buf.data(), a.data() + off, got) == 0) continue;
        if (off + got <= b.size() && std::memcmp(buf.data(), b.data() + off, got) == 0) ++from_b;
        else ++wrong;
        if (from_b + wrong == 1) ADD_FAILURE() << "reader A got bytes that are not version a's at " << off << " (+" << got << ")";
      }
    };
    read_on_a(half, a.size());
    read_on_a(0, half);
    close(fd_a);
    EXPECT_EQ(from_b, 0u) << "reads of 64 KiB on the descriptor of version a that served version b's bytes";
    EXPECT_EQ(wrong, 0u) << "reads of 64 KiB on it that served neither version (a mix)";
    RecordProperty("reader_a_bytes_served", std::to_string(served));
    RecordProperty("reader_a_reads_failed", std::to_string(failed));

    // And a new open still reads version b.
    EXPECT_TRUE(same_bytes(read_all(shown).data, b)) << "a second reader after the rewrite";
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
