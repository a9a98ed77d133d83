// mibz2fs mounted for real, following SOURCE as it changes (src/fs/source_watcher.h): the kernel
// keeps names and attributes for an hour, so without the watcher a `stat` after a mirror's rsync
// showed the old size, and a deleted file went on being stat-able, for that hour. Each test makes
// the kernel cache what it shows first (a stat), changes SOURCE, and then waits, with a generous
// deadline, for the mount to show the change: what is asserted is the value shown in the end,
// not how fast it came.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "io/fd_io.h"
#include "mount_harness.h"

namespace mibz2::test {
namespace {

// stat's size, or -errno.
long long size_of(const stdfs::path& p) {
  struct stat st;
  if (stat(p.c_str(), &st) != 0) return -errno;
  return static_cast<long long>(st.st_size);
}

// The names `ls -ln DIR` lists, with the sizes it shows.
std::map<std::string, long long> ls_sizes(const stdfs::path& dir) {
  const CommandResult r = run_command("ls -ln " + shell_quote(dir.string()));
  std::map<std::string, long long> sizes;
  std::istringstream in(text_of(r.out));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string mode, links, uid, gid, month, day, time, name;
    long long size;
    if (!(fields >> mode >> links >> uid >> gid >> size >> month >> day >> time)) continue;  // "total N"
    std::getline(fields >> std::ws, name);
    sizes[name] = size;
  }
  return sizes;
}

Bytes bz2_of(const Bytes& content) { return libbz2_compress(as_span(content), 9); }

// Rewrites `path` in place, as `cat new > file` does: the same inode, truncated, then written.
void rewrite_in_place(const stdfs::path& path, const Bytes& data) {
  const int fd = open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_EQ(write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
  close(fd);
}

// (a) A mirror replaces the dump by renaming a finished download over it.
TEST_F(FsMountTest, StatFollowsASourceReplacedByRename) {
  const stdfs::path src = new_source();
  const Bytes v1 = text_bytes(300000, 90);
  const Bytes v2 = text_bytes(700000, 91);
  write_file(src / "latest-all.json.bz2", as_span(bz2_of(v1)));
  MOUNT_OR_RETURN(mount(src));
  const stdfs::path shown = mnt_ / "latest-all.json";
  ASSERT_EQ(size_of(shown), static_cast<long long>(v1.size()));  // now cached by the kernel
  const int old_fd = open(shown.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(old_fd, 0) << std::strerror(errno);

  write_file(src / ".latest-all.json.bz2.part", as_span(bz2_of(v2)));
  stdfs::rename(src / ".latest-all.json.bz2.part", src / "latest-all.json.bz2");

  EXPECT_TRUE(eventually([&] { return size_of(shown) == static_cast<long long>(v2.size()); }))
      << "stat still shows " << size_of(shown) << " bytes, not the new " << v2.size();
  EXPECT_EQ(ls_sizes(mnt_)["latest-all.json"], static_cast<long long>(v2.size())) << "ls -l";
  EXPECT_TRUE(same_bytes(read_all(shown).data, v2));
  // A descriptor opened before keeps its content, its size, and reads to its end.
  struct stat st;
  ASSERT_EQ(fstat(old_fd, &st), 0) << std::strerror(errno);
  EXPECT_EQ(static_cast<size_t>(st.st_size), v1.size());
  Bytes old(v1.size() + 10);
  const ssize_t n = io::pread_full(old_fd, old.data(), old.size(), 0);
  ASSERT_EQ(n, static_cast<ssize_t>(v1.size())) << (n < 0 ? std::strerror(static_cast<int>(-n)) : "short or long read");
  old.resize(v1.size());
  EXPECT_TRUE(same_bytes(old, v1));
  close(old_fd);
}

// (b) Files added to and removed from a directory already listed and looked up in, below SOURCE.
TEST_F(FsMountTest, NamesFollowFilesAddedAndRemoved) {
  const stdfs::path src = new_source();
  stdfs::create_directories(src / "d");
  const Bytes a = text_bytes(200000, 92), b = text_bytes(150000, 93);
  write_file(src / "d" / "a.txt.bz2", as_span(bz2_of(a)));
  MOUNT_OR_RETURN(mount(src));
  const stdfs::path d = mnt_ / "d";
  ASSERT_EQ(ls_sizes(d), (std::map<std::string, long long>{{"a.txt", static_cast<long long>(a.size())}}));
  ASSERT_EQ(size_of(d / "a.txt"), static_cast<long long>(a.size()));
  ASSERT_EQ(size_of(d / "b.txt"), -ENOENT);  // a miss the kernel caches too

  write_file(src / "d" / "b.txt.bz2", as_span(bz2_of(b)));
  EXPECT_TRUE(eventually([&] { return ls_sizes(d).count("b.txt") && size_of(d / "b.txt") == static_cast<long long>(b.size()); }))
      << "the added file is not shown";
  EXPECT_TRUE(same_bytes(read_all(d / "b.txt").data, b));

  stdfs::remove(src / "d" / "a.txt.bz2");
  EXPECT_TRUE(eventually([&] { return size_of(d / "a.txt") == -ENOENT; }))
      << "stat of the deleted file still gives " << size_of(d / "a.txt");
  EXPECT_EQ(ls_sizes(d), (std::map<std::string, long long>{{"b.txt", static_cast<long long>(b.size())}}));
}

// (b) Removing a plain file "n" lets "n.bz2" take the name "n": both names change what they show.
TEST_F(FsMountTest, ANeighboursNameFollowsWhenARealNameGoes) {
  const stdfs::path src = new_source();
  const Bytes plain = to_bytes("a plain file that holds the name\n");
  const Bytes content = text_bytes(250000, 94);
  write_file(src / "n", as_span(plain));
  write_file(src / "n.bz2", as_span(bz2_of(content)));
  MOUNT_OR_RETURN(mount(src));
  ASSERT_EQ(size_of(mnt_ / "n"), static_cast<long long>(plain.size()));
  const long long compressed = static_cast<long long>(stdfs::file_size(src / "n.bz2"));
  ASSERT_EQ(size_of(mnt_ / "n.bz2"), compressed) << "shown raw while 'n' is taken";

  stdfs::remove(src / "n");
  EXPECT_TRUE(eventually([&] { return size_of(mnt_ / "n") == static_cast<long long>(content.size()); }))
      << "'n' still shows " << size_of(mnt_ / "n") << " bytes";
  EXPECT_TRUE(eventually([&] { return size_of(mnt_ / "n.bz2") == -ENOENT; })) << "'n.bz2' is still shown raw";
  EXPECT_TRUE(same_bytes(read_all(mnt_ / "n").data, content));

  // And back: the real name wins again.
  write_file(src / "n", as_span(plain));
  EXPECT_TRUE(eventually([&] { return size_of(mnt_ / "n") == static_cast<long long>(plain.size()); }));
  EXPECT_TRUE(eventually([&] { return size_of(mnt_ / "n.bz2") == compressed; }));
}

// (c) Files rewritten in place (`cat new > file`: truncated, then written), compressed and plain.
TEST_F(FsMountTest, StatFollowsAFileRewrittenInPlace) {
  const stdfs::path src = new_source();
  const Bytes v1 = text_bytes(400000, 95), v2 = text_bytes(90000, 96);
  write_file(src / "r.txt.bz2", as_span(bz2_of(v1)));
  write_file(src / "p.txt", as_span(to_bytes("short\n")));
  MOUNT_OR_RETURN(mount(src));
  ASSERT_EQ(size_of(mnt_ / "r.txt"), static_cast<long long>(v1.size()));
  ASSERT_EQ(size_of(mnt_ / "p.txt"), 6);
  struct stat before, after;
  ASSERT_EQ(stat((src / "r.txt.bz2").c_str(), &before), 0);

  rewrite_in_place(src / "r.txt.bz2", bz2_of(v2));
  const Bytes p2 = to_bytes("a longer second version\n");
  rewrite_in_place(src / "p.txt", p2);
  ASSERT_EQ(stat((src / "r.txt.bz2").c_str(), &after), 0);
  ASSERT_EQ(after.st_ino, before.st_ino) << "rewritten in place";
  EXPECT_TRUE(eventually([&] { return size_of(mnt_ / "r.txt") == static_cast<long long>(v2.size()); }))
      << "stat still shows " << size_of(mnt_ / "r.txt") << " bytes";
  EXPECT_TRUE(eventually([&] { return size_of(mnt_ / "p.txt") == static_cast<long long>(p2.size()); }))
      << "the plain file shows " << size_of(mnt_ / "p.txt") << " bytes";
  EXPECT_TRUE(same_bytes(read_all(mnt_ / "r.txt").data, v2));
  EXPECT_TRUE(same_bytes(read_all(mnt_ / "p.txt").data, p2));
}

// A directory's own attributes (its mode here) are those of the same node after a chmod: that
// node's attributes are dropped, not only names.
TEST_F(FsMountTest, ADirectorysModeFollowsAChmod) {
  const stdfs::path src = new_source();
  stdfs::create_directories(src / "d" / "e");
  MOUNT_OR_RETURN(mount(src));
  auto mode_of = [](const stdfs::path& p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0 ? static_cast<int>(st.st_mode & 07777) : -1;
  };
  ASSERT_EQ(mode_of(mnt_ / "d" / "e"), 0755);
  ASSERT_EQ(chmod((src / "d" / "e").c_str(), 0700), 0);
  EXPECT_TRUE(eventually([&] { return mode_of(mnt_ / "d" / "e") == 0700; })) << "mode " << std::oct << mode_of(mnt_ / "d" / "e");
}

// The directories watched, from the root's user.mibz2fs.stats ("... watched_dirs=N"), or -1.
long watched_dirs(const stdfs::path& mnt) {
  const Xattr x = get_xattr(mnt, "user.mibz2fs.stats");
  const size_t at = x.value.find("watched_dirs=");
  return x.error || at == std::string::npos ? -1 : std::stol(x.value.substr(at + 13));
}

// A directory is watched while the kernel holds it, and no longer once the kernel forgets it (a
// crawl of a large tree does not keep a watch for every directory it ever passed); looked up
// again, it is watched again and its changes followed.
TEST_F(FsMountTest, DirectoriesAreWatchedWhileTheKernelHoldsThem) {
  const stdfs::path src = new_source();
  constexpr int kDirs = 20;
  const Bytes v1 = text_bytes(50000, 99), v2 = text_bytes(80000, 100);
  // "d<i>" (appended: g++ 12's -Wrestrict misfires on "d" + std::string).
  auto dir = [](int i) { return std::string("d").append(std::to_string(i)); };
  for (int i = 0; i < kDirs; ++i) {
    stdfs::create_directories(src / dir(i));
    write_file(src / dir(i) / "f.bz2", as_span(bz2_of(v1)));
  }
  MOUNT_OR_RETURN(mount(src));
  EXPECT_EQ(watched_dirs(mnt_), 1) << "SOURCE itself";
  for (int i = 0; i < kDirs; ++i) ASSERT_EQ(size_of(mnt_ / dir(i) / "f"), static_cast<long long>(v1.size()));
  EXPECT_EQ(watched_dirs(mnt_), 1 + kDirs);
  drop_kernel_caches();
  EXPECT_TRUE(eventually([&] { return watched_dirs(mnt_) == 1; })) << watched_dirs(mnt_) << " directories watched";

  const stdfs::path f = mnt_ / "d3" / "f";
  ASSERT_EQ(size_of(f), static_cast<long long>(v1.size()));
  EXPECT_EQ(watched_dirs(mnt_), 2);
  write_file(src / "d3" / "f.bz2.part", as_span(bz2_of(v2)));
  stdfs::rename(src / "d3" / "f.bz2.part", src / "d3" / "f.bz2");
  EXPECT_TRUE(eventually([&] { return size_of(f) == static_cast<long long>(v2.size()); })) << size_of(f);
}

// Readers that open, read and stat a dump while a mirror replaces it again and again, the watcher
// telling the kernel each time (the watcher's, the notifier's and the request threads at once):
// every read gives one whole version, never a mix or another file's bytes; stat gives one of the
// versions' sizes; and in the end the last version. Labelled "concurrent" (the TSan stage runs it).
TEST_F(FsMountTest, ConcurrentReadersWhileChangesAreFollowed) {
  const stdfs::path src = new_source();
  stdfs::create_directories(src / "d");
  const Bytes versions[2] = {text_bytes(260000, 101), text_bytes(610000, 102)};
  const Bytes compressed[2] = {bz2_of(versions[0]), bz2_of(versions[1])};
  write_file(src / "d" / "r.txt.bz2", as_span(compressed[0]));
  MOUNT_OR_RETURN(mount(src));
  const stdfs::path shown = mnt_ / "d" / "r.txt";
  std::atomic<bool> done{false};
  std::atomic<int> reads{0}, wrong{0}, wrong_sizes{0};
  std::mutex errors_mu;
  std::map<int, int> errors;  // errno -> reads that failed with it
  // Each reader goes on until it read the file whole once, after the changes if need be (under
  // TSan one read can take longer than several changes, each failing with ESTALE).
  auto reader = [&] {
    bool read_whole = false;
    const auto t0 = Clock::now();
    while (!done || (!read_whole && seconds_since(t0) < 120)) {
      const ReadAll r = read_all(shown);
      read_whole = read_whole || r.error == 0;
      if (r.error) {  // ESTALE or EIO when a change lands between open and read: allowed
        std::lock_guard lk(errors_mu);
        ++errors[r.error];
      } else if (!(r.data == versions[0] || r.data == versions[1])) {
        ++wrong;
      } else {
        ++reads;
      }
      const long long size = size_of(shown);
      if (size >= 0 && size != static_cast<long long>(versions[0].size()) &&
          size != static_cast<long long>(versions[1].size()))
        ++wrong_sizes;
    }
  };
  std::vector<std::thread> readers;
  for (int i = 0; i < 3; ++i) readers.emplace_back(reader);
  constexpr int kChanges = 30;
  for (int i = 1; i <= kChanges; ++i) {
    write_file(src / "d" / ".r.txt.bz2.part", as_span(compressed[i % 2]));
    stdfs::rename(src / "d" / ".r.txt.bz2.part", src / "d" / "r.txt.bz2");
    sleep_ms(40);
  }
  done = true;
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(wrong.load(), 0) << "reads that gave neither version";
  EXPECT_EQ(wrong_sizes.load(), 0) << "stats that gave neither version's size";
  std::string failed;
  for (const auto& [err, n] : errors)
    failed.append(" ").append(std::to_string(n)).append(" x ").append(std::strerror(err)).append(";");
  EXPECT_GT(reads.load(), 0) << "reads failed:" << failed;
  std::fprintf(stderr, "%d whole reads, failed:%s\n", reads.load(), failed.c_str());
  // The readers' opens went on asking the daemon; once they stop, the kernel's cache alone
  // answers stat: one more change must still reach it.
  const Bytes& before_last = versions[kChanges % 2];
  EXPECT_TRUE(eventually([&] { return size_of(shown) == static_cast<long long>(before_last.size()); })) << size_of(shown);
  const Bytes& last = versions[(kChanges + 1) % 2];
  write_file(src / "d" / ".r.txt.bz2.part", as_span(compressed[(kChanges + 1) % 2]));
  stdfs::rename(src / "d" / ".r.txt.bz2.part", src / "d" / "r.txt.bz2");
  EXPECT_TRUE(eventually([&] { return size_of(shown) == static_cast<long long>(last.size()); })) << size_of(shown);
  EXPECT_TRUE(same_bytes(read_all(shown).data, last));
}

// Events lost (the kernel's queue overflowed; here the daemon's test hook counts more than one
// name waiting as a loss): every name and directory attribute the kernel holds is dropped, so
// stat follows all the same, in SOURCE and below it.
TEST_F(FsMountTest, LostEventsDropEverythingTheKernelHolds) {
  const stdfs::path src = new_source();
  stdfs::create_directories(src / "d");
  const Bytes v1 = text_bytes(120000, 103), v2 = text_bytes(330000, 104);
  write_file(src / "top.bz2", as_span(bz2_of(v1)));
  write_file(src / "d" / "f.bz2", as_span(bz2_of(v1)));
  setenv("MIBZ2FS_TEST_MAX_PENDING", "1", 1);
  Mibz2fs* m = mount(src);
  unsetenv("MIBZ2FS_TEST_MAX_PENDING");
  MOUNT_OR_RETURN(m);
  ASSERT_EQ(size_of(mnt_ / "top"), static_cast<long long>(v1.size()));
  ASSERT_EQ(size_of(mnt_ / "d" / "f"), static_cast<long long>(v1.size()));
  for (const char* f : {"top.bz2", "d/f.bz2"}) {  // a temporary name and the final one: two names
    write_file(src / (std::string(f) + ".part"), as_span(bz2_of(v2)));
    stdfs::rename(src / (std::string(f) + ".part"), src / f);
  }
  EXPECT_TRUE(eventually([&] { return size_of(mnt_ / "top") == static_cast<long long>(v2.size()); })) << size_of(mnt_ / "top");
  EXPECT_TRUE(eventually([&] { return size_of(mnt_ / "d" / "f") == static_cast<long long>(v2.size()); }))
      << size_of(mnt_ / "d" / "f");
  EXPECT_NE(slurp(m->log()).find("came faster than they could be followed"), std::string::npos) << slurp(m->log());
}

// (d) Past the watch limit (the daemon's test hook stands for fs.inotify.max_user_watches: only
// SOURCE itself is watched here): the mount works, directories it cannot watch are not followed
// (their files are still seen anew at their next open), that is logged once, and SOURCE's own
// changes are still followed.
TEST_F(FsMountTest, PastTheWatchLimitTheMountWorksAndSaysSoOnce) {
  const stdfs::path src = new_source();
  const Bytes v1 = text_bytes(100000, 97), v2 = text_bytes(300000, 98);
  for (const char* dir : {"x", "y"}) {
    stdfs::create_directories(src / dir);
    write_file(src / dir / "f.bz2", as_span(bz2_of(v1)));
  }
  write_file(src / "top.bz2", as_span(bz2_of(v1)));
  setenv("MIBZ2FS_TEST_MAX_WATCHES", "1", 1);
  Mibz2fs* m = mount(src);
  unsetenv("MIBZ2FS_TEST_MAX_WATCHES");
  MOUNT_OR_RETURN(m);
  for (const char* f : {"x/f", "y/f", "top"}) ASSERT_EQ(size_of(mnt_ / f), static_cast<long long>(v1.size())) << f;

  for (const char* f : {"x/f.bz2", "y/f.bz2", "top.bz2"}) {
    write_file(src / (std::string(f) + ".part"), as_span(bz2_of(v2)));
    stdfs::rename(src / (std::string(f) + ".part"), src / f);
  }
  EXPECT_TRUE(eventually([&] { return size_of(mnt_ / "top") == static_cast<long long>(v2.size()); }))
      << "SOURCE itself is watched";
  EXPECT_TRUE(same_bytes(read_all(mnt_ / "x" / "f").data, v2)) << "an open sees the new content all the same";
  EXPECT_EQ(size_of(mnt_ / "x" / "f"), static_cast<long long>(v2.size())) << "and stat after it";
  EXPECT_TRUE(m->running());
  EXPECT_EQ(watched_dirs(mnt_), 1);
  const std::string log = slurp(m->log());
  const std::string said = "not watched for changes";
  const size_t first = log.find(said);
  EXPECT_NE(first, std::string::npos) << log;
  EXPECT_EQ(log.find(said, first + 1), std::string::npos) << "said more than once:\n" << log;
  EXPECT_NE(log.find("max_user_watches"), std::string::npos) << log;
}

}  // namespace
}  // namespace mibz2::test
