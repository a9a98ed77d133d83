// mibz2fs mounted for real the way a dumps mount lives for months: files downloaded, rewritten and
// deleted under it. Nodes the kernel forgot are dropped; a listing or a size is never served stale
// when a change put the mtime back; a daemon started with a relative index_dir keeps its indexes
// where that path pointed when it started.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "mount_harness.h"

namespace mibz2::test {
namespace {

// The daemon's node count, from the root's user.mibz2fs.stats ("... nodes=N").
long node_count(const stdfs::path& mnt) {
  const Xattr x = get_xattr(mnt, "user.mibz2fs.stats");
  const size_t at = x.value.find("nodes=");
  if (x.error || at == std::string::npos) {
    ADD_FAILURE() << "no node count in user.mibz2fs.stats: '" << x.value << "' (error " << x.error << ")";
    return -1;
  }
  return std::stol(x.value.substr(at + 6));
}

void set_mtime(const stdfs::path& p, const struct timespec& mtime) {
  const struct timespec times[2] = {{0, UTIME_OMIT}, mtime};
  ASSERT_EQ(utimensat(AT_FDCWD, p.c_str(), times, 0), 0) << p << ": " << std::strerror(errno);
}

struct timespec mtime_of(const stdfs::path& p) {
  struct stat st {};
  EXPECT_EQ(stat(p.c_str(), &st), 0) << p;
  return st.st_mtim;
}

// "f<batch>-<i>" (appended piece by piece: g++ 12's -Wrestrict misfires on "f" + std::string).
std::string file_name(int batch, int i) {
  std::string s = "f";
  s.append(std::to_string(batch)).append("-").append(std::to_string(i));
  return s;
}

// 5000 small .bz2 files in batches of 1000: each looked up (and its index built) through the
// mount, then deleted. Once the kernel forgets them, the daemon holds nodes for about what it held
// at the start, not 5000 more (before forget was honoured, every node lived until unmount).
TEST_F(FsMountTest, NodesOfFilesTheKernelForgotAreDropped) {
  const stdfs::path src = new_source();
  const Bytes content = text_bytes(2000, 90);
  const Bytes compressed = libbz2_compress(as_span(content), 9);
  write_file(src / "kept.txt.bz2", as_span(compressed));
  MOUNT_OR_RETURN(mount(src));
  ASSERT_TRUE(same_bytes(read_all(mnt_ / "kept.txt").data, content));
  drop_kernel_caches();
  const long start = node_count(mnt_);
  ASSERT_GT(start, 0);
  constexpr int kBatches = 5, kPerBatch = 1000;
  long most = 0;
  for (int b = 0; b < kBatches; ++b) {
    for (int i = 0; i < kPerBatch; ++i)
      write_file(src / (file_name(b, i) + ".txt.bz2"), as_span(compressed));
    sleep_ms(2100);  // past the racy window: the listing is read once for the batch, not per lookup
    for (int i = 0; i < kPerBatch; ++i) {
      const stdfs::path shown = mnt_ / (file_name(b, i) + ".txt");
      struct stat st {};
      ASSERT_EQ(stat(shown.c_str(), &st), 0) << shown << ": " << std::strerror(errno);
      ASSERT_EQ(static_cast<size_t>(st.st_size), content.size()) << shown;
    }
    most = std::max(most, node_count(mnt_));
    for (int i = 0; i < kPerBatch; ++i) stdfs::remove(src / (file_name(b, i) + ".txt.bz2"));
  }
  // The root and a batch's files at least. (Not start + kPerBatch: the forgets of the first
  // drop_kernel_caches may still be on their way when start is read, and the deleted files of a
  // batch no longer stay until the next drop: the source watcher has the kernel drop their names,
  // and it forgets them at once.)
  EXPECT_GE(most, 1 + kPerBatch) << "the looked-up files were not counted while in use";
  drop_kernel_caches();
  long now = node_count(mnt_);
  for (int i = 0; i < 50 && now > start + 10; ++i) {  // forgets are sent asynchronously
    sleep_ms(100);
    now = node_count(mnt_);
  }
  EXPECT_LE(now, start + 10) << "nodes at the start " << start << ", after 5000 files came and went " << now;
  // A file looked up again after its node was dropped is served as before.
  EXPECT_TRUE(same_bytes(read_all(mnt_ / "kept.txt").data, content));
  struct stat gone {};
  EXPECT_EQ(stat((mnt_ / "f0-0.txt").c_str(), &gone), -1) << "a deleted file";
}

// A file added and the directory's mtime put back (as touch -r or rsync -t can): a listing keyed
// by the mtime alone would keep the file invisible, and its miss cached.
TEST_F(FsMountTest, AListingNoticesAChangeThatPutTheMtimeBack) {
  const stdfs::path src = new_source();
  const Bytes a = text_bytes(3000, 91);
  write_file(src / "a.txt.bz2", as_span(libbz2_compress(as_span(a), 9)));
  struct timespec old = mtime_of(src);
  old.tv_sec -= 60;
  set_mtime(src, old);
  sleep_ms(2100);  // the ctime too is then older than the racy window: the first listing is kept
  MOUNT_OR_RETURN(mount(src, {"-o", "threads=1"}));
  ASSERT_TRUE(same_bytes(read_all(mnt_ / "a.txt").data, a));
  const Bytes b = text_bytes(4000, 92);
  write_file(src / "b.txt.bz2", as_span(libbz2_compress(as_span(b), 9)));
  set_mtime(src, old);
  EXPECT_TRUE(same_bytes(read_all(mnt_ / "b.txt").data, b)) << "the file added under a put-back mtime";
}

// A .bz2 rewritten in place to the same compressed size with its mtime put back (cp -p, rsync
// -t --inplace): a size cached by (size, mtime, inode) would stay the old one.
TEST_F(FsMountTest, ASizeFollowsAFileRewrittenInPlaceWithItsMtimePutBack) {
  const stdfs::path src = new_source();
  const Bytes v1 = text_bytes(5000, 93);
  const Bytes v2 = text_bytes(9000, 94);
  Bytes c1 = libbz2_compress(as_span(v1), 9);
  Bytes c2 = libbz2_compress(as_span(v2), 9);
  // Padded to one size with zero bytes after the stream (trailing garbage, ignored as bzip2 does).
  const size_t size = std::max(c1.size(), c2.size()) + 8;
  c1.resize(size, 0);
  c2.resize(size, 0);
  const stdfs::path file = src / "r.txt.bz2";
  write_file(file, as_span(c1));
  struct timespec old = mtime_of(file);
  old.tv_sec -= 60;
  set_mtime(file, old);
  MOUNT_OR_RETURN(mount(src, {"-o", "threads=1"}));
  ASSERT_EQ(stdfs::file_size(mnt_ / "r.txt"), v1.size());
  struct stat was {};
  ASSERT_EQ(stat(file.c_str(), &was), 0);
  {  // in place: same inode, same size, then the old mtime
    const int fd = open(file.c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(pwrite(fd, c2.data(), c2.size(), 0), static_cast<ssize_t>(c2.size()));
    close(fd);
  }
  set_mtime(file, old);
  struct stat st {};
  ASSERT_EQ(stat(file.c_str(), &st), 0);
  ASSERT_EQ(st.st_ino, was.st_ino);
  ASSERT_EQ(static_cast<size_t>(st.st_size), size);
  const ReadAll r = read_all(mnt_ / "r.txt");
  EXPECT_EQ(r.error, 0);
  EXPECT_TRUE(same_bytes(r.data, v2)) << "the content after the rewrite";
  EXPECT_EQ(stdfs::file_size(mnt_ / "r.txt"), v2.size());
}

// The daemon's peak resident memory (VmHWM), in KiB.
long peak_rss_kib(pid_t pid) {
  const std::string status = slurp("/proc/" + std::to_string(pid) + "/status");
  const size_t at = status.find("VmHWM:");
  return at == std::string::npos ? -1 : std::stol(status.substr(at + 6));
}

// The memory rule of man/mibz2fs.1: peak RSS at most cache_size + threads x 64 MiB + 64 MiB,
// during index builds and reads alike. Two files of blocks that expand to 45 MB each (360 MB and
// 270 MB decompressed from a few hundred bytes) and one of 160 MB of compressed random data (whose
// pages a mapped source would have counted), indexed on first sight and then read whole at the
// same time, with cache_size=64M and 2 threads: bound 256 MiB.
TEST_F(FsMountTest, DaemonMemoryStaysWithinCacheSizeAndThePerThreadFigure) {
  if (kSanitized) GTEST_SKIP() << "peak RSS under a sanitizer is the sanitizer's (freed memory kept in quarantine)";
  const stdfs::path src = new_source();
  constexpr size_t kBlock = 45'000'000;
  const Bytes one = libbz2_compress(as_span(repeated_byte(kBlock, 'r')), 9);
  Bytes eight, six;
  for (int i = 0; i < 8; ++i) eight.insert(eight.end(), one.begin(), one.end());
  for (int i = 0; i < 6; ++i) six.insert(six.end(), one.begin(), one.end());
  write_file(src / "a.bin.bz2", as_span(eight));
  write_file(src / "b.bin.bz2", as_span(six));
  const Bytes noise = random_bytes(1 << 20, 96);
  const Bytes noise_stream = libbz2_compress(as_span(noise), 9);
  Bytes big;
  for (int i = 0; i < 160; ++i) big.insert(big.end(), noise_stream.begin(), noise_stream.end());
  write_file(src / "c.bin.bz2", as_span(big));
  big = Bytes();
  Mibz2fs* m = mount(src, {"-o", "cache_size=64M,threads=2"});
  MOUNT_OR_RETURN(m);
  std::vector<std::thread> readers;
  std::atomic<int> good{0};
  for (const char* name : {"a.bin", "b.bin", "a.bin", "b.bin"}) {
    readers.emplace_back([&, name] {
      const ReadAll r = read_all(mnt_ / name);
      const size_t want = (name[0] == 'a' ? 8 : 6) * kBlock;
      if (r.error == 0 && r.data.size() == want &&
          std::all_of(r.data.begin(), r.data.end(), [](uint8_t c) { return c == 'r'; }))
        ++good;
    });
  }
  readers.emplace_back([&] {
    const ReadAll r = read_all(mnt_ / "c.bin");
    bool same = r.error == 0 && r.data.size() == 160 * noise.size();
    for (size_t at = 0; same && at < r.data.size(); at += noise.size())
      same = std::memcmp(r.data.data() + at, noise.data(), noise.size()) == 0;
    if (same) ++good;
  });
  for (auto& t : readers) t.join();
  EXPECT_EQ(good.load(), 5) << "every reader got every byte";
  const long hwm = peak_rss_kib(m->pid());
  const long bound = (64 + 2 * 64 + 64) * 1024;
  std::printf("mibz2fs cache_size=64M threads=2: peak RSS %ld MiB (bound %ld MiB)\n", hwm / 1024, bound / 1024);
  EXPECT_GT(hwm, 0);
  EXPECT_LE(hwm, bound) << "peak RSS " << hwm / 1024 << " MiB";
}

// Daemonized (no -f) from a directory of the test's choosing, with index_dir=rel/idx that does not
// exist yet: the indexes land in that directory's rel/idx, not in /rel/idx (the daemon's cwd is /).
TEST_F(FsMountTest, ARelativeIndexDirIsTheStartingDirectorysEvenWhenDaemonized) {
  const stdfs::path src = new_source();
  const Bytes content = text_bytes(3000, 95);
  write_file(src / "x.txt.bz2", as_span(libbz2_compress(as_span(content), 9)));
  const stdfs::path cwd = stdfs::canonical(work_->path()) / "start";
  stdfs::create_directories(cwd);
  const stdfs::path rel = "rel-" + std::to_string(getpid()) + "/idx";
  ASSERT_FALSE(stdfs::exists("/" / rel));
  const stdfs::path before = stdfs::current_path();
  stdfs::current_path(cwd);
  const BadRun r = run_mibz2fs({"-o", "index_dir=" + rel.string(), src.string(), mnt_.string()});
  stdfs::current_path(before);
  ASSERT_EQ(r.status, 0) << r.output;
  ASSERT_TRUE(is_mounted(mnt_));
  EXPECT_TRUE(same_bytes(read_all(mnt_ / "x.txt").data, content));
  EXPECT_EQ(get_xattr(mnt_ / "x.txt", kXattrs[2]).value, "ready");
  const std::vector<pid_t> daemons = processes_mentioning(mnt_.string());
  lazy_unmount(mnt_);
  const auto t0 = Clock::now();
  while (!processes_mentioning(mnt_.string()).empty() && seconds_since(t0) < 15) sleep_ms(20);
  for (pid_t p : processes_mentioning(mnt_.string())) kill(p, SIGKILL);
  EXPECT_EQ(daemons.size(), 1u);
  EXPECT_EQ(count_index_files(cwd / rel), 1u) << "no index under " << (cwd / rel);
  EXPECT_FALSE(stdfs::exists("/" / rel)) << "the index went to /" << rel;
  std::error_code ec;
  stdfs::remove_all("/" / rel.parent_path(), ec);
}

}  // namespace
}  // namespace mibz2::test
