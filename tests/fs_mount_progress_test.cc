// Progress and waiting through a real mount, with index builds held
// back by mibz2fs's test hook (MIBZ2FS_TEST_HOLD_BUILDS: builds stay at their start while a file
// exists):
//  - the mount's root tells how indexing goes (user.mibz2fs.index) at once, whatever is held;
//  - a file's attributes never wait for its index: with the kernel's attributes cached (so that
//    no getattr comes first), a file whose source changed answers "building"/"queued" and ENODATA
//    at once;
//  - a stat or open waiting for an index ends on a signal (EINTR, or the process dies of it) while
//    the build is held, and the build then completes;
//  - damage is logged once per file at every mount, a stored index's included, as one warning;
//  - a file that expands 900000:1, being indexed, holds up no stat of another file.
//
// A call that should return at once runs under a watchdog: if it has not returned after a generous
// limit, the hold is released (so that the test ends) and the test fails. No time is asserted.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <future>
#include <optional>
#include <string>

#include "mount_harness.h"

namespace mibz2::test {
namespace {

// The value of `key=` in a "key=value key=value" line, or -1.
long long field(const std::string& line, const std::string& key) {
  const size_t at = line.find(key + "=");
  if (at == std::string::npos) return -1;
  return std::atoll(line.c_str() + at + key.size() + 1);
}

// "f<i><ext>" (built by appending: GCC 12 warns falsely of an overlap for "f" + to_string + ext).
std::string file_name(int i, const char* ext) {
  std::string n = "f";
  n += std::to_string(i);
  n += ext;
  return n;
}

constexpr double kLimit = 30;  // seconds before a call that should not wait is taken as waiting

class FsProgressTest : public FsHeldBuildsTest {
 protected:
  // A source of `n` files f0.txt.bz2 ..., of a few hundred kB each (several blocks).
  stdfs::path source_of(int n) {
    const stdfs::path src = new_source();
    for (int i = 0; i < n; ++i) {
      contents_.push_back(text_bytes(400000 + 1000 * i, 900 + i));
      write_file(src / file_name(i, ".txt.bz2"), libbz2_compress(contents_.back(), 1));
    }
    return src;
  }

  std::optional<BuildHold> builds_;
  std::vector<Bytes> contents_;
};

// The root's view while every build is held: nothing ready, every file building or queued, the
// bytes to do are the files' compressed sizes; and once released, everything ready.
TEST_F(FsProgressTest, TheRootTellsHowIndexingGoesWithoutWaiting) {
  const stdfs::path src = source_of(3);
  uint64_t compressed = 0;
  for (int i = 0; i < 3; ++i) compressed += stdfs::file_size(src / file_name(i, ".txt.bz2"));
  hold();
  MOUNT_OR_RETURN(mount(src));
  Xattr root;
  ASSERT_TRUE(returns_at_once([&] { root = get_xattr(mnt_, "user.mibz2fs.index"); }))
      << "the root's user.mibz2fs.index waited for a build";
  ASSERT_EQ(root.error, 0);
  // The tree walk queues every file and may still be at it: a file it has queued but not yet
  // opened counts with no size. Its last line says it is done.
  const Clock::time_point t0 = Clock::now();
  while (slurp(mounts_.back()->log()).find("found 3 compressed files") == std::string::npos && seconds_since(t0) < 30)
    sleep_ms(10);
  root = get_xattr(mnt_, "user.mibz2fs.index");
  EXPECT_EQ(field(root.value, "files_ready"), 0) << root.value;
  EXPECT_EQ(field(root.value, "files_building") + field(root.value, "files_queued"), 3) << root.value;
  EXPECT_GE(field(root.value, "files_building"), 1) << root.value;  // (as many at once as decoders)
  EXPECT_EQ(field(root.value, "files_failed"), 0) << root.value;
  EXPECT_EQ(field(root.value, "bytes_to_do"), static_cast<long long>(compressed)) << root.value;
  EXPECT_NE(root.value.find("eta_s="), std::string::npos) << root.value;
  EXPECT_NE(root.value.find("rate_bytes_per_s="), std::string::npos) << root.value;
  const Xattr stats = get_xattr(mnt_, "user.mibz2fs.stats");
  EXPECT_EQ(field(stats.value, "indexes_built"), 0) << stats.value;
  EXPECT_EQ(field(stats.value, "indexes_loaded"), 0) << stats.value;

  release();
  for (int i = 0; i < 3; ++i) {
    const ReadAll r = read_all(mnt_ / file_name(i, ".txt"));
    ASSERT_EQ(r.error, 0);
    EXPECT_TRUE(same_bytes(r.data, contents_[i]));
  }
  root = get_xattr(mnt_, "user.mibz2fs.index");
  EXPECT_EQ(field(root.value, "files_ready"), 3) << root.value;
  EXPECT_EQ(field(root.value, "bytes_to_do"), 0) << root.value;
  const Xattr after = get_xattr(mnt_, "user.mibz2fs.stats");
  EXPECT_EQ(field(after.value, "indexes_built"), 3) << after.value;
  EXPECT_EQ(field(after.value, "bytes_indexed"), static_cast<long long>(compressed)) << after.value;
}

// A file's attributes, read while its new index is held back: the kernel still holds its
// attributes (so it asks no getattr first), and every attribute answers at once: the index state
// says building or queued, the attributes that need the index are not there yet (ENODATA).
TEST_F(FsProgressTest, AFilesAttributesNeverWaitForItsIndex) {
  const stdfs::path src = source_of(1);
  MOUNT_OR_RETURN(mount(src));
  const stdfs::path shown = mnt_ / "f0.txt";
  struct stat st;
  ASSERT_EQ(stat(shown.c_str(), &st), 0);  // indexed: the kernel keeps these attributes
  ASSERT_EQ(get_xattr(shown, "user.mibz2fs.index").value, "ready");
  ASSERT_NE(get_xattr(shown, "user.mibz2fs.blocks").value, "");
  // An O_PATH descriptor (no FUSE open) pins the file's dentry: ctest runs two tests at once, and
  // another's drop_caches (FsMountTest.NodesOfFilesTheKernelForgotAreDropped) would otherwise make
  // the kernel look the file up again here, and then ask for its attributes, which wait.
  struct Pin {
    int fd;
    ~Pin() { if (fd >= 0) close(fd); }  // before the unmount: an open descriptor would keep the mount busy
  } const pin{open(shown.c_str(), O_PATH)};
  ASSERT_GE(pin.fd, 0) << std::strerror(errno);

  hold();
  const Bytes changed = text_bytes(300000, 999);
  write_file(src / "f0.txt.bz2", libbz2_compress(changed, 1));
  Xattr state, blocks, damaged, damage;
  ASSERT_TRUE(returns_at_once([&] {
    state = get_xattr(shown, "user.mibz2fs.index");
    blocks = get_xattr(shown, "user.mibz2fs.blocks");
    damaged = get_xattr(shown, "user.mibz2fs.damaged_blocks");
    damage = get_xattr(shown, "user.mibz2fs.damage");
  })) << "an attribute read waited for the index";
  EXPECT_TRUE(state.value == "queued" || state.value.rfind("building ", 0) == 0) << state.value;
  EXPECT_EQ(blocks.error, ENODATA) << blocks.value;
  EXPECT_EQ(damaged.error, ENODATA) << damaged.value;
  EXPECT_EQ(damage.error, ENODATA) << damage.value;
  const Xattr size = get_xattr(shown, "user.mibz2fs.compressed_size");
  EXPECT_EQ(size.value, std::to_string(stdfs::file_size(src / "f0.txt.bz2")));

  release();
  const ReadAll r = read_all(shown);
  ASSERT_EQ(r.error, 0);
  EXPECT_TRUE(same_bytes(r.data, changed));
  EXPECT_EQ(get_xattr(shown, "user.mibz2fs.index").value, "ready");
  EXPECT_EQ(get_xattr(shown, "user.mibz2fs.blocks").error, 0);
}

// /proc/PID/wchan: where a process sleeps in the kernel.
std::string wchan(pid_t pid) { return slurp("/proc/" + std::to_string(pid) + "/wchan"); }

// Waits until `pid` sleeps waiting for a FUSE answer; false if it never did (or ended).
bool waits_for_fuse(pid_t pid) {
  for (int i = 0; i < 3000; ++i) {
    if (wchan(pid) == "request_wait_answer") return true;
    int st;
    if (waitpid(pid, &st, WNOHANG) == pid) return false;
    sleep_ms(10);
  }
  return false;
}

// The wait status of `pid`, or nullopt if it has not ended within kLimit.
std::optional<int> reap(pid_t pid) {
  for (int i = 0; i < kLimit * 100; ++i) {
    int st;
    if (waitpid(pid, &st, WNOHANG) == pid) return st;
    sleep_ms(10);
  }
  return std::nullopt;
}

void on_usr1(int) {}

// A child that calls stat(2) or open(2) on `path` with a SIGUSR1 handler (no SA_RESTART): exits
// with 0 or the errno.
pid_t child_calling(const stdfs::path& path, bool open_it) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    struct sigaction sa{};
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, nullptr);
    struct stat st;
    const int r = open_it ? open(path.c_str(), O_RDONLY) : stat(path.c_str(), &st);
    _exit(r < 0 ? errno : 0);
  }
  return pid;
}

// A wait for an index ends on a signal while the build is held: `stat` killed by SIGINT (as
// `timeout -s INT stat` or Ctrl-C does) or by SIGKILL ends; a stat or open interrupted by a signal
// the process handles fails with EINTR. The build goes on: once released, the file reads whole.
TEST_F(FsProgressTest, AWaitForAnIndexEndsOnASignalAndTheBuildGoesOn) {
  const stdfs::path src = source_of(1);
  hold();
  MOUNT_OR_RETURN(mount(src));
  const stdfs::path shown = mnt_ / "f0.txt";

  for (const int sig : {SIGINT, SIGKILL}) {
    SCOPED_TRACE(strsignal(sig));
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
      const int null = open("/dev/null", O_WRONLY);
      dup2(null, 1);
      execlp("stat", "stat", shown.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    ASSERT_TRUE(waits_for_fuse(pid)) << "stat never waited for the mount (wchan " << wchan(pid) << ")";
    kill(pid, sig);
    const std::optional<int> st = reap(pid);
    if (!st) {
      release();  // the build ends, and with it the wait
      reap(pid);
      FAIL() << "stat did not end on " << strsignal(sig) << " while the build was held";
    }
    EXPECT_TRUE(WIFSIGNALED(*st) && WTERMSIG(*st) == sig) << describe_status(*st);
    ASSERT_TRUE(held());
  }
  for (const bool open_it : {false, true}) {
    SCOPED_TRACE(open_it ? "open" : "stat");
    const pid_t pid = child_calling(shown, open_it);
    ASSERT_TRUE(waits_for_fuse(pid)) << "the call never waited for the mount";
    kill(pid, SIGUSR1);
    const std::optional<int> st = reap(pid);
    if (!st) {
      release();
      reap(pid);
      FAIL() << "the call did not end on SIGUSR1 while the build was held";
    }
    EXPECT_TRUE(WIFEXITED(*st) && WEXITSTATUS(*st) == EINTR) << describe_status(*st) << " (EINTR is " << EINTR << ")";
    ASSERT_TRUE(held());
  }
  // Nothing was given up: still building (or queued), never failed.
  const std::string state = get_xattr(mnt_, "user.mibz2fs.index").value;
  EXPECT_EQ(field(state, "files_failed"), 0) << state;
  EXPECT_EQ(field(state, "files_ready"), 0) << state;

  release();
  struct stat st;
  ASSERT_EQ(stat(shown.c_str(), &st), 0) << std::strerror(errno);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), contents_[0].size());
  const ReadAll r = read_all(shown);
  ASSERT_EQ(r.error, 0);
  EXPECT_TRUE(same_bytes(r.data, contents_[0]));
  const std::string log = slurp(mounts_.back()->log());
  EXPECT_EQ(log.find("cannot open"), std::string::npos) << log;
  EXPECT_EQ(log.find(" error: "), std::string::npos) << log;
}

// A file of 100 streams of 50 bytes, each 45 MB of zeros (5 KB shown as 4.5 GB,
// seconds of every decoder to index), is being indexed in the background; a .bz2 of 6 bytes'
// content made meanwhile answers a stat with its size while the big file is still building (the
// root says so: reading the big file's own attribute would look it up, and so wait for it).
TEST_F(FsProgressTest, ConcurrentAStatOfANewFileIsAnsweredWhileAnExpandingFileIsIndexed) {
  const stdfs::path src = new_source();
  const Bytes one = libbz2_compress(Bytes(45000000, 0), 9);
  Bytes zeros;
  for (int i = 0; i < 100; ++i) zeros.insert(zeros.end(), one.begin(), one.end());
  write_file(src / "zeros.bz2", zeros);
  MOUNT_OR_RETURN(mount(src));
  std::string root;
  const Clock::time_point t0 = Clock::now();
  do {
    root = get_xattr(mnt_, "user.mibz2fs.index").value;
    if (field(root, "files_building") == 1 && field(root, "bytes_done") > 0) break;
    sleep_ms(10);
  } while (seconds_since(t0) < 60);
  ASSERT_EQ(field(root, "files_building"), 1) << "the big file is not being indexed: " << root;
  ASSERT_GT(field(root, "bytes_done"), 0) << root;

  write_file(src / "tiny.txt.bz2", libbz2_compress(to_bytes("hello\n"), 9));
  struct stat st;
  ASSERT_EQ(stat((mnt_ / "tiny.txt").c_str(), &st), 0) << std::strerror(errno);
  EXPECT_EQ(st.st_size, 6);
  root = get_xattr(mnt_, "user.mibz2fs.index").value;
  EXPECT_EQ(field(root, "files_ready"), 1) << "the stat waited for the big file's index: " << root;
  EXPECT_EQ(field(root, "files_building"), 1) << root;
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Damage is logged at every mount, once per file, as one warning: at the first mount (built) and
// at the next (its stored index loaded), and reading the damage adds no error line about it.
TEST_F(FsProgressTest, DamageIsLoggedOnceAtEveryMount) {
  const stdfs::path src = new_source();
  const Bytes plain = text_bytes(300000, 77);
  Bytes cut = libbz2_compress(plain, 1);
  cut.resize(cut.size() * 2 / 3);  // a half-downloaded file: truncated inside a stream
  write_file(src / "cut.txt.bz2", cut);
  write_file(src / "good.txt.bz2", libbz2_compress(plain, 1));
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round == 0 ? "first mount (built)" : "second mount (stored index)");
    Mibz2fs* m = mount(src);
    MOUNT_OR_RETURN(m);
    EXPECT_EQ(read_all(mnt_ / "cut.txt").error, EIO);
    EXPECT_EQ(read_all(mnt_ / "good.txt").error, 0);
    ASSERT_TRUE(m->stop());
    const std::string log = slurp(m->log());
    EXPECT_EQ(count_of(log, "cut.txt.bz2: damaged,"), 1u) << log;
    EXPECT_EQ(count_of(log, "warning: " + (src / "cut.txt.bz2").string() + ": damaged,"), 1u) << log;
    EXPECT_EQ(count_of(log, " error: "), 0u) << log;
    EXPECT_EQ(count_of(log, "good.txt.bz2: damaged"), 0u) << log;
    EXPECT_EQ(count_of(log, "indexing (") , round == 0 ? 2u : 0u) << log;
  }
}

}  // namespace
}  // namespace mibz2::test
