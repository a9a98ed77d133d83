// An index in use is mapped from its file, shared by every process that opens it
// (io/mapped_file.h, index/FORMAT.md "One copy a machine"), and a file that changes under the
// mapping never gives a SIGBUS or wrong bytes: cut short, the reads that need it fail with EIO;
// rewritten in place with another file's index, the reads fail with EIO; replaced by a rename (as
// every index is written), the mapping reads on from the old file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "engine_test_support.h"
#include "index/index_store.h"
#include "io/mapped_file.h"

namespace mibz2::test {
namespace {

using engine::Engine;
using engine::Reader;

// Whether /proc/self/maps shows `path` mapped.
bool mapped_in_this_process(const std::string& path) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.size() >= path.size() && line.compare(line.size() - path.size(), path.size(), path) == 0) return true;
  return false;
}

// A source of a few dozen level-1 blocks whose index is saved to its own store, then loaded back
// from the file (mapped) as a mount or a Python process loads it.
struct Stored {
  Source source;
  std::string index_path;
};
Stored stored_source(const TempDir& dir, const std::string& name, uint64_t seed) {
  Stored s;
  // Not scaled down in a sanitized build: the tests need a few dozen blocks and an index file
  // larger than the 512 bytes they cut it to.
  s.source = make_source(dir, name, text_bytes(4000000, seed), 1);
  index::IndexStore store((dir.path() / ("idx-" + name)).string());
  const index::SourceIdentity id = identity_of(s.source.path);
  s.index_path = store.path_for(id);
  index::LoadedIndex loaded = store.load(id);
  EXPECT_EQ(loaded.load, index::Load::kCurrent) << loaded.why;
  s.source.index = std::make_shared<const index::BlockIndex>(std::move(loaded.index));
  return s;
}

// Reads the file up to `until` (all of it by default) in pieces of `piece` bytes: every read gives
// the original's bytes or fails with EIO, never other bytes. Returns how many failed.
size_t read_all_exact_or_eio(Reader& r, const Source& s, size_t piece, uint64_t until = UINT64_MAX) {
  size_t failed = 0;
  std::vector<uint8_t> buf(piece);
  for (uint64_t off = 0; off < std::min<uint64_t>(until, s.plain.size()); off += piece) {
    const ssize_t n = r.read(off, piece, buf.data());
    if (n < 0) {
      EXPECT_EQ(n, -EIO) << "read at " << off;
      ++failed;
      continue;
    }
    const size_t want = static_cast<size_t>(std::min<uint64_t>(piece, s.plain.size() - off));
    EXPECT_EQ(static_cast<size_t>(n), want) << "read at " << off;
    EXPECT_EQ(std::memcmp(buf.data(), s.plain.data() + off, std::min<size_t>(n, want)), 0)
        << "wrong bytes at " << off;
  }
  return failed;
}

TEST(MappedFile, CutShortUnderTheMappingReadsZerosAndIsRevoked) {
  TempDir dir;
  const Bytes data(3 * 4096, 0xAB);
  const std::string path = dir.write("f", data).string();
  io::UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  ASSERT_TRUE(fd.valid());
  auto mapped = io::MappedFile::map(fd.get(), data.size());
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  const io::MappedFile& m = **mapped;
  EXPECT_EQ(m.bytes()[2 * 4096], 0xAB);
  EXPECT_FALSE(m.revoked());
  const uint64_t caught = io::MappedFile::caught_for_testing();
  ASSERT_EQ(ftruncate(fd.get(), 4096), 0);
  // Without the guard this touch is a SIGBUS: the page lies past the file's new end.
  EXPECT_EQ(static_cast<volatile const uint8_t*>(m.bytes().data())[2 * 4096], 0);
  EXPECT_TRUE(m.revoked());
  EXPECT_EQ(io::MappedFile::caught_for_testing(), caught + 1);
  EXPECT_EQ(m.bytes()[0], 0);  // the whole mapping is zeros now, not a mix of two files
}

TEST(MappedFileDeathTest, ASigbusOutsideEveryMappingStillEndsTheProcess) {
  TempDir dir;
  const std::string path = dir.write("f", Bytes(2 * 4096, 1)).string();
  // A guard is installed (one mapping lives), yet a fault in a mapping of its own still kills.
  io::UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  auto guarded = io::MappedFile::map(fd.get(), 4096);
  ASSERT_TRUE(guarded.ok());
  EXPECT_EXIT(
      {
        void* p = mmap(nullptr, 2 * 4096, PROT_READ, MAP_SHARED, fd.get(), 0);
        if (p == MAP_FAILED || ftruncate(fd.get(), 0) != 0) _exit(3);
        _exit(static_cast<volatile const uint8_t*>(p)[4096]);
      },
      // The handler before the guard has it: the default (killed by SIGBUS), or a sanitizer's,
      // which reports the fault and exits with its error status.
      [](int status) {
        return (WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS) ||
               (kSanitized && WIFEXITED(status) && WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 3);
      },
      "");
}

TEST(MappedIndex, AStoredIndexIsMappedFromItsFileAndReadsExact) {
  TempDir dir;
  const Stored s = stored_source(dir, "text.bz2", 71);
  ASSERT_GT(s.source.blocks(), 20u);
  EXPECT_TRUE(s.source.index->blocks.is_view());
  EXPECT_TRUE(s.source.index->newlines.is_view());
  EXPECT_TRUE(mapped_in_this_process(s.index_path)) << s.index_path;
  Engine e(options(2));
  auto r = open_reader(e, 1, s.source);
  ASSERT_TRUE(r);
  EXPECT_EQ(read_all_exact_or_eio(*r, s.source, 300000), 0u);
}

TEST(MappedIndex, CutShortWhileInUseFailsReadsNeverGivesWrongBytesOrSigbus) {
  // Cut to nothing: the mapped page lies past the end (a SIGBUS without the guard). Cut inside the
  // page (the index is 1.6 kB): the page stays, its tail turned to zeros, with no signal at all.
  for (const off_t keep : {off_t{0}, off_t{512}}) {
    TempDir dir;
    const Stored s = stored_source(dir, "text.bz2", 72);
    ASSERT_LT(read_file(s.index_path).size(), 4096u);
    Engine e(options(2));
    auto r = open_reader(e, 1, s.source);
    ASSERT_TRUE(r);
    // Some blocks decoded and cached first: the cache must not serve them by a cut index either.
    EXPECT_EQ(read_all_exact_or_eio(*r, s.source, 1 << 20, s.source.plain.size() / 2), 0u);
    // Taken before the cut: a read-ahead decode may touch the index the moment it is cut.
    const uint64_t caught = io::MappedFile::caught_for_testing();
    ASSERT_EQ(truncate(s.index_path.c_str(), keep), 0);
    EXPECT_GT(read_all_exact_or_eio(*r, s.source, 65536), 0u) << "cut to " << keep;
    EXPECT_EQ(io::MappedFile::caught_for_testing() > caught, keep == 0) << "cut to " << keep;
    EXPECT_EQ(s.source.index->revoked(), keep == 0) << "cut to " << keep;
    EXPECT_TRUE(r->distrusted()) << "cut to " << keep;
  }
}

TEST(MappedIndex, RewrittenInPlaceWithAnotherFilesIndexNeverGivesWrongBytes) {
  TempDir dir;
  const Stored s = stored_source(dir, "text.bz2", 73);
  const Stored other = stored_source(dir, "other.bz2", 74);
  const Bytes other_index = read_file(other.index_path);
  ASSERT_EQ(other_index.size(), read_file(s.index_path).size()) << "the two indexes must be of one size";
  Engine e(options(2));
  auto r = open_reader(e, 1, s.source);
  ASSERT_TRUE(r);
  EXPECT_EQ(read_all_exact_or_eio(*r, s.source, 1 << 20, s.source.plain.size() / 2), 0u);
  // In place, no truncation, no signal: the mapped records change under the Reader. Both files
  // have blocks of one size, so the offsets stay; the blocks not yet decoded are another file's.
  io::UniqueFd fd(::open(s.index_path.c_str(), O_WRONLY | O_CLOEXEC));
  ASSERT_TRUE(fd.valid());
  ASSERT_EQ(pwrite(fd.get(), other_index.data(), other_index.size(), 0), static_cast<ssize_t>(other_index.size()));
  EXPECT_GT(read_all_exact_or_eio(*r, s.source, 65536), 0u);
  EXPECT_FALSE(s.source.index->revoked());
  EXPECT_TRUE(r->distrusted());
}

TEST(MappedIndex, ReplacedByARenameReadsOnFromTheFileItMapped) {
  TempDir dir;
  const Stored s = stored_source(dir, "text.bz2", 75);
  const Stored other = stored_source(dir, "other.bz2", 76);
  // As every index file is written: another file renamed over the name.
  const std::string tmp = s.index_path + ".new";
  write_file(tmp, read_file(other.index_path));
  ASSERT_EQ(rename(tmp.c_str(), s.index_path.c_str()), 0);
  Engine e(options(2));
  auto r = open_reader(e, 1, s.source);
  ASSERT_TRUE(r);
  EXPECT_EQ(read_all_exact_or_eio(*r, s.source, 300000), 0u);
  EXPECT_FALSE(r->distrusted());
}

}  // namespace
}  // namespace mibz2::test
