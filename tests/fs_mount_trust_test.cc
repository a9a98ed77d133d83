// Index files written by someone else, and the index
// directory, through a real mount. `nobody` (uid and gid 65534, by setpriv) is the other user.
//
// Every index here is forged as the attacker forges it: every block from the third on is
// said to start 100,000 bytes later in the decompressed file (and the total with it), the checksum
// recomputed. Each record still matches its own block (CRC, size, bits), so only the decode of the
// second block, which is said to be 100,000 bytes longer, can tell; the sample of 8 blocks that
// checks a copy's index misses it. Believed, such an index serves every byte past the second block
// from 100,000 bytes earlier, with no error.
//
//   (b) a sidecar nobody wrote, next to root's file in a sticky shared directory: never read;
//   (c) an index nobody planted under the index's own name in an index directory: never read;
//   (d) an index that IS believed (root's own, in root's directory): the first read that meets the
//       mismatch fails, and the file's node is retired: a new inode number with the right size
//       and bytes, nothing the kernel cached from the forged index left, old descriptors get errors;
//   (e) index_dir replaced by a symlink while mounted, and index_dir naming a regular file.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "index/block_check.h"
#include "index/index_format.h"
#include "index/index_store.h"
#include "index_test_support.h"
#include "mount_harness.h"

namespace mibz2::test {
namespace {

constexpr uid_t kNobody = 65534;
constexpr uint64_t kShift = 100'000;

std::string str(const Bytes& b) { return std::string(b.begin(), b.end()); }

// `command` run by /bin/sh as nobody (no groups), its standard error with its output.
CommandResult as_nobody(const std::string& command) {
  return run_command("setpriv --reuid=65534 --regid=65534 --clear-groups /bin/sh -c " + shell_quote(command) +
                     " 2>&1");
}

// MIBZ2_TEST_BINARY: another build's mibz2 (as MIBZ2FS_TEST_BINARY for the daemon, mount_harness.cc).
std::string mibz2_program() {
  const char* other = std::getenv("MIBZ2_TEST_BINARY");
  return other && *other ? other : MIBZ2_BINARY;
}

CommandResult mibz2(const std::string& args) {
  return run_command("timeout -k 5 120 " + shell_quote(mibz2_program()) + " " + args);
}

size_t lines_with(const std::string& log, const std::string& text) {
  size_t n = 0;
  for (size_t at = log.find(text); at != std::string::npos; at = log.find(text, at + 1)) ++n;
  return n;
}

uid_t owner_of(const stdfs::path& p) {
  struct stat st{};
  lstat(p.c_str(), &st);
  return st.st_uid;
}

index::BlockIndex parsed(const Bytes& file) {
  base::Result<index::BlockIndex> idx = index::parse(as_span(file));
  EXPECT_TRUE(idx.ok()) << idx.status();
  return idx.ok() ? std::move(*idx) : index::BlockIndex();
}

// The attacker's edit (see the top of the file), as index/index_format.h writes it.
Bytes forge(const Bytes& index_file) {
  index::BlockIndex idx = parsed(index_file);
  for (size_t i = 2; i < idx.blocks.size(); ++i) idx.blocks.mutable_at(i).out_offset += kShift;
  idx.decompressed_size += kShift;
  return index::serialize(idx);
}

// Rewrites a file's bytes in place (its owner and mode stay).
void overwrite(const stdfs::path& p, const Bytes& bytes) {
  const int fd = open(p.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  ASSERT_GE(fd, 0) << p << ": " << std::strerror(errno);
  ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  close(fd);
}

// pread of up to `n` bytes: the bytes, or the errno.
struct Got {
  int err = 0;
  std::string data;
};
Got pread_at(int fd, uint64_t off, size_t n) {
  std::string buf(n, '\0');
  const ssize_t r = pread(fd, buf.data(), n, static_cast<off_t>(off));
  if (r < 0) return {errno, {}};
  buf.resize(static_cast<size_t>(r));
  return {0, buf};
}

struct stat stat_of(const stdfs::path& p) {
  struct stat st{};
  EXPECT_EQ(stat(p.c_str(), &st), 0) << p << ": " << std::strerror(errno);
  return st;
}

class FsTrustTest : public FsMountTest {
 protected:
  void SetUp() override {
    FsMountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!have_program("setpriv")) GTEST_SKIP() << "setpriv (util-linux) is needed to act as nobody";
    if (geteuid() != 0) GTEST_SKIP() << "needs root (to mount for others and to act as nobody)";
    // mkdtemp makes the work directory 0700: nobody must reach the files.
    ASSERT_EQ(chmod(work_->path().c_str(), 0755), 0);
    work_path_ = stdfs::canonical(work_->path());
    // 2.5 MB of text at level 1: about 25 blocks, so that the sample of 8 misses the second.
    content_ = text_bytes(2'500'000, 2301);
    compressed_ = libbz2_compress(as_span(content_), 1);
  }

  // The root-owned index of `source` as mibz2 builds it (its identity current), in a scratch
  // directory of its own (built, whatever sidecar there is).
  Bytes root_index_of(const stdfs::path& source) {
    const stdfs::path scratch = work_path_ / ("scratch-" + std::to_string(scratch_++));
    const CommandResult r = mibz2("index --force --index-dir " + shell_quote(scratch.string()) + " " +
                                  shell_quote(source.string()) + " 2>&1");
    EXPECT_EQ(r.status, 0) << str(r.out);
    const stdfs::path at = index::IndexStore(scratch.string()).path_for(identity_of(source.string()));
    return read_file(at);
  }

  // Precondition of every test: the forged index passes every check of its content, and the
  // sample that validates a copy's index misses the one block that would tell.
  void expect_forgery_unseen_by_the_sample(const Bytes& forged) {
    const index::BlockIndex idx = parsed(forged);
    ASSERT_GE(idx.blocks.size(), 16u);
    for (size_t b : index::sample_blocks(idx)) ASSERT_NE(b, 1u) << "the sample would catch this forgery";
  }

  // The file is shown exactly: its size, and its bytes to root and to nobody.
  void expect_exact(const stdfs::path& shown) {
    EXPECT_EQ(stat_of(shown).st_size, static_cast<off_t>(content_.size())) << "the size shown";
    const ReadAll r = read_all(shown);
    EXPECT_EQ(r.error, 0);
    EXPECT_TRUE(same_bytes(r.data, content_)) << "read by root";
  }

  stdfs::path work_path_;
  Bytes content_;
  Bytes compressed_;
  int scratch_ = 0;
};

// ==== (b) A sidecar written by someone else ===================================================

// As nobody, in a sticky shared directory holding root's b1.bz2: `mibz2 index --output` a sidecar,
// then forge it. Root mounts with allow_other: the sidecar is not read (said once), the size and
// every byte are exact, for root and for nobody; `mibz2 cat --offset` as root gives exact bytes.
// Before: "index ... validated for this copy", the size 100,000 too large, the bytes past the
// second block from 100,000 earlier, and mibz2 cat the same with exit 0.
TEST_F(FsTrustTest, SidecarSomeoneElseWroteIsNotRead) {
  const stdfs::path src = new_source();
  ASSERT_EQ(chmod(src.c_str(), 01777), 0);
  write_file(src / "b1.bz2", as_span(compressed_));
  const stdfs::path sidecar = src / ("b1.bz2" + std::string(index::kSidecarSuffix));
  const stdfs::path nobody_idx = work_path_ / "nobody-idx";
  stdfs::create_directories(nobody_idx);
  ASSERT_EQ(chown(nobody_idx.c_str(), kNobody, kNobody), 0);
  const CommandResult made = as_nobody(shell_quote(mibz2_program()) + " index --index-dir " +
                                       shell_quote(nobody_idx.string()) + " --output " + shell_quote(sidecar.string()) +
                                       " " + shell_quote((src / "b1.bz2").string()));
  ASSERT_EQ(made.status, 0) << str(made.out);
  ASSERT_EQ(owner_of(sidecar), kNobody);
  const Bytes forged = forge(read_file(sidecar));
  expect_forgery_unseen_by_the_sample(forged);
  overwrite(sidecar, forged);  // nobody's file still (the bytes are what nobody could write)

  Mibz2fs* m = mount(src, {"-o", "allow_other"});
  MOUNT_OR_RETURN(m);
  for (int open = 0; open < 3; ++open) expect_exact(mnt_ / "b1");
  const CommandResult by_nobody = as_nobody("cat " + shell_quote((mnt_ / "b1").string()));
  EXPECT_EQ(by_nobody.status, 0);
  EXPECT_TRUE(by_nobody.out == content_) << "read by nobody through allow_other";
  const std::string log = slurp(m->log());
  EXPECT_EQ(lines_with(log, "is not believed"), 1u) << "said once, not at every open:\n" << log;
  EXPECT_EQ(lines_with(log, "owned by uid 65534"), 1u) << log;
  EXPECT_EQ(lines_with(log, "validated"), 0u) << log;

  // mibz2 cat as root, from the middle of the sixth block on, with no index of its own.
  const index::BlockIndex real = parsed(root_index_of(src / "b1.bz2"));
  ASSERT_GE(real.blocks.size(), 16u);
  const uint64_t offset = real.blocks[5].out_offset + 1234, length = 300'000;
  const CommandResult cat = mibz2("cat --index-dir " + shell_quote((work_path_ / "cat-idx").string()) + " --offset " +
                                  std::to_string(offset) + " --length " + std::to_string(length) + " " +
                                  shell_quote((src / "b1.bz2").string()) + " 2>/dev/null");
  EXPECT_EQ(cat.status, 0);
  EXPECT_TRUE(cat.out == Bytes(content_.begin() + static_cast<ptrdiff_t>(offset),
                               content_.begin() + static_cast<ptrdiff_t>(offset + length)))
      << "mibz2 cat --offset: wrong bytes";
}

// ==== (c) A file planted under the index's own name ===========================================

// The forged index (with the source's current identity: not even sampled when believed) planted
// by nobody under the index's name, in an index directory that nobody can write into (0777 with
// no sticky bit: the directory is refused at mount; 01777: nobody's file is not believed), or
// given to nobody in root's own directory. Never read: the size and bytes are exact. Before: used
// as it is, 100,000 bytes too many.
TEST_F(FsTrustTest, IndexPlantedInTheIndexDirectoryIsNotRead) {
  const stdfs::path src = new_source();
  write_file(src / "f.bz2", as_span(compressed_));
  const std::string name = index::IndexStore::name_for(identity_of((src / "f.bz2").string()));
  const Bytes forged = forge(root_index_of(src / "f.bz2"));
  expect_forgery_unseen_by_the_sample(forged);
  const stdfs::path planted = work_path_ / "forged.idx";
  write_file(planted, as_span(forged));

  struct Case {
    const char* what;
    mode_t dir_mode;
    bool by_nobody;  // planted by nobody (else by root, then given to nobody)
    const char* said;
  };
  const Case cases[] = {
      {"index_dir writable by all, not sticky", 0777, true, "refused as index directory"},
      {"sticky shared index_dir", 01777, true, "is not believed"},
      {"root's index_dir, the file given to nobody", 0755, false, "is not believed"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const size_t i = &c - cases;
    const stdfs::path idx = work_path_ / ("idx-" + std::to_string(i));
    stdfs::create_directories(idx);
    ASSERT_EQ(chmod(idx.c_str(), c.dir_mode), 0);
    if (c.by_nobody) {
      const CommandResult cp = as_nobody("cp " + shell_quote(planted.string()) + " " + shell_quote((idx / name).string()));
      ASSERT_EQ(cp.status, 0) << str(cp.out);
    } else {
      stdfs::copy_file(planted, idx / name);
      ASSERT_EQ(chown((idx / name).c_str(), kNobody, kNobody), 0);
    }
    Mibz2fs* m = mount(src, {"-o", "allow_other"}, work_path_ / ("mnt-" + std::to_string(i)), idx);
    MOUNT_OR_RETURN(m);
    expect_exact(m->mnt() / "f");
    expect_exact(m->mnt() / "f");
    const std::string log = slurp(m->log());
    EXPECT_EQ(lines_with(log, c.said), 1u) << log;
    EXPECT_TRUE(m->stop());
  }
}

// ==== (d) A mismatch found retires the node ====================================================

// Root's own index, forged in root's own index directory with the file's current identity: it is
// believed (only the decode of the second block can tell). A read of the second block fails with
// EIO and the mismatch is logged once; then a new stat shows another inode number and the right
// size, a new open reads exact bytes (also where the kernel had cached bytes from the forged
// index), and a descriptor opened before reads no byte any more. Before: the same inode and the
// forged size stayed, the range cached before kept reading forged bytes through a new open, and
// the old descriptor kept serving blocks at forged offsets.
TEST_F(FsTrustTest, MismatchFoundRetiresTheNode) {
  const stdfs::path src = new_source();
  write_file(src / "f.bz2", as_span(compressed_));
  stdfs::create_directories(idx_);
  ASSERT_EQ(chmod(idx_.c_str(), 0700), 0);
  const Bytes real_bytes = root_index_of(src / "f.bz2");
  const index::BlockIndex real = parsed(real_bytes);
  const stdfs::path at = idx_ / index::IndexStore::name_for(real.source);
  write_file(at, as_span(forge(real_bytes)));
  const index::BlockIndex forged = parsed(read_file(at));
  ASSERT_EQ(forged.blocks.size(), real.blocks.size());
  ASSERT_GE(forged.blocks.size(), 16u);

  Mibz2fs* m = mount(src);
  MOUNT_OR_RETURN(m);
  const stdfs::path f = mnt_ / "f";
  const struct stat before = stat_of(f);
  ASSERT_EQ(before.st_size, static_cast<off_t>(content_.size() + kShift)) << "the forged index is not believed";
  const int old_fd = open(f.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(old_fd, 0);
  // A range in the seventh block, read (and cached by the kernel) before the mismatch is found: the
  // forged index serves it from 100,000 bytes earlier.
  const uint64_t cached_at = forged.blocks[6].out_offset + 5000;
  const size_t span = 64 * 1024;
  const std::string right(content_.begin() + static_cast<ptrdiff_t>(cached_at),
                          content_.begin() + static_cast<ptrdiff_t>(cached_at + span));
  const Got forged_read = pread_at(old_fd, cached_at, span);
  ASSERT_EQ(forged_read.err, 0);
  ASSERT_NE(forged_read.data, right) << "the forged index served right bytes: nothing to test";

  // The second block, said to be 100,000 bytes longer than it is.
  const Got mismatch = pread_at(old_fd, forged.blocks[1].out_offset + 100, 4096);
  EXPECT_EQ(mismatch.err, EIO) << "read " << mismatch.data.size() << " bytes";

  // The node is retired (the kernel is told from a thread of the daemon's own): wait for it.
  struct stat after = stat_of(f);
  for (const auto t0 = Clock::now(); after.st_ino == before.st_ino && seconds_since(t0) < 20; sleep_ms(50))
    after = stat_of(f);
  EXPECT_NE(after.st_ino, before.st_ino) << "the same inode number after the mismatch";
  EXPECT_EQ(after.st_size, static_cast<off_t>(content_.size())) << "the size from the forged index";

  const int new_fd = open(f.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(new_fd, 0);
  struct stat new_st{};
  fstat(new_fd, &new_st);
  EXPECT_NE(new_st.st_ino, before.st_ino);
  const Got again = pread_at(new_fd, cached_at, span);
  EXPECT_EQ(again.err, 0);
  EXPECT_TRUE(again.data == right) << "a new open reads the bytes cached from the forged index";
  close(new_fd);
  const ReadAll whole = read_all(f);
  EXPECT_EQ(whole.error, 0);
  EXPECT_TRUE(same_bytes(whole.data, content_));

  // The descriptor opened before: no byte of the forged index any more, cached or not. (The kernel
  // asks for the retired node's attributes before it reads, which fails with ESTALE; a read that
  // reaches the daemon, a page fault of a mapping, fails with EIO: Reader::distrusted.)
  const auto failed = [](const Got& g) { return g.err == EIO || g.err == ESTALE; };
  const Got old_cached = pread_at(old_fd, cached_at, span);
  EXPECT_TRUE(failed(old_cached)) << "the old descriptor still reads " << old_cached.data.size()
                                  << " bytes the kernel cached from the forged index (" << old_cached.err << ")";
  const Got old_unread = pread_at(old_fd, forged.blocks[15].out_offset + 10, 4096);
  EXPECT_TRUE(failed(old_unread)) << "the old descriptor serves " << old_unread.data.size()
                                  << " bytes at an offset of the forged index (" << old_unread.err << ")";
  close(old_fd);
  const std::string log = slurp(m->log());
  EXPECT_EQ(lines_with(log, "does not match the source"), 1u) << log;
}

// ==== (e) The index directory ==================================================================

// index_dir replaced by a symlink to another directory while mounted: indexes still go to (and come
// from) the directory opened at mount. Before: b's index was written into the symlink's target,
// and c's index planted there (forged, root's, current) was read through it.
TEST_F(FsTrustTest, IndexDirReplacedByASymlinkWhileMountedIsNotFollowed) {
  const stdfs::path src = new_source();
  const Bytes a = text_bytes(200'000, 2311), b = text_bytes(200'000, 2312);
  write_file(src / "a.bz2", as_span(libbz2_compress(as_span(a), 1)));
  stdfs::create_directories(idx_);
  ASSERT_EQ(chmod(idx_.c_str(), 0700), 0);
  Mibz2fs* m = mount(src);
  MOUNT_OR_RETURN(m);
  ASSERT_TRUE(same_bytes(read_all(mnt_ / "a").data, a));
  for (const auto t0 = Clock::now(); count_index_files(idx_) < 1 && seconds_since(t0) < 10;) sleep_ms(50);
  ASSERT_EQ(count_index_files(idx_), 1u);

  const stdfs::path held = work_path_ / "idx-as-mounted", target = work_path_ / "symlink-target";
  stdfs::rename(idx_, held);
  stdfs::create_directories(target);
  ASSERT_EQ(chmod(target.c_str(), 0700), 0);
  stdfs::create_directory_symlink(target, idx_);
  // c's index, forged, root's, with c's current identity, where the symlink points.
  write_file(src / "c.bz2", as_span(compressed_));
  const Bytes forged_c = forge(root_index_of(src / "c.bz2"));
  write_file(target / index::IndexStore::name_for(identity_of((src / "c.bz2").string())), as_span(forged_c));
  write_file(src / "b.bz2", as_span(libbz2_compress(as_span(b), 1)));

  EXPECT_TRUE(same_bytes(read_all(mnt_ / "b").data, b));
  EXPECT_EQ(stat_of(mnt_ / "c").st_size, static_cast<off_t>(content_.size())) << "c's index read through the symlink";
  EXPECT_TRUE(same_bytes(read_all(mnt_ / "c").data, content_));
  for (const auto t0 = Clock::now(); count_index_files(held) < 3 && seconds_since(t0) < 10;) sleep_ms(50);
  EXPECT_EQ(count_index_files(held), 3u) << "indexes not saved in the directory opened at mount";
  EXPECT_EQ(count_index_files(target), 1u) << "an index saved through the symlink";
}

// index_dir= a symlink: refused as the index directory (not followed to its target), said in one
// message at mount naming it; the mount goes on with indexes in memory only. Before: the path was
// resolved when the options were read, and every index was stored in the link's target.
TEST_F(FsTrustTest, IndexDirThatIsASymlinkIsRefusedAtMount) {
  const stdfs::path src = new_source();
  const Bytes a = text_bytes(150'000, 2331);
  write_file(src / "a.bz2", as_span(libbz2_compress(as_span(a), 1)));
  const stdfs::path target = work_path_ / "idx-target", link = work_path_ / "idx-link";
  stdfs::create_directories(target);
  ASSERT_EQ(chmod(target.c_str(), 0700), 0);
  stdfs::create_directory_symlink(target, link);
  Mibz2fs* m = mount(src, {}, std::nullopt, link);
  MOUNT_OR_RETURN(m);
  EXPECT_TRUE(same_bytes(read_all(mnt_ / "a").data, a));
  EXPECT_TRUE(m->stop());
  const std::string log = slurp(m->log());
  EXPECT_EQ(lines_with(log, link.string() + " is a symlink, refused as index directory"), 1u) << log;
  EXPECT_EQ(lines_with(log, "kept in memory only"), 1u) << log;
  EXPECT_EQ(count_index_files(target), 0u) << "an index stored through the symlink";
}

// index_dir= a regular file: the mount goes on with indexes in memory only, said in one message at
// mount (never a warning per file). Before: a warning for each file indexed, and one more.
TEST_F(FsTrustTest, IndexDirThatIsARegularFileIsOneMessageAtMount) {
  const stdfs::path src = new_source();
  const Bytes a = text_bytes(150'000, 2321), b = text_bytes(150'000, 2322);
  write_file(src / "a.bz2", as_span(libbz2_compress(as_span(a), 1)));
  write_file(src / "b.bz2", as_span(libbz2_compress(as_span(b), 1)));
  const stdfs::path file = work_path_ / "not-a-directory";
  write_file(file, as_span(to_bytes("a regular file\n")));
  Mibz2fs* m = mount(src, {}, std::nullopt, file);
  MOUNT_OR_RETURN(m);
  EXPECT_TRUE(same_bytes(read_all(mnt_ / "a").data, a));
  EXPECT_TRUE(same_bytes(read_all(mnt_ / "b").data, b));
  EXPECT_TRUE(m->stop());
  const std::string log = slurp(m->log());
  EXPECT_EQ(lines_with(log, file.string() + " is not a directory"), 1u) << log;
  EXPECT_EQ(lines_with(log, "kept in memory only"), 1u) << log;
  EXPECT_EQ(lines_with(log, file.string() + "/"), 0u) << "a message per file:\n" << log;
}

}  // namespace
}  // namespace mibz2::test
