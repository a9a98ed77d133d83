// The mount tests' harness: mibz2fs started as a child process with its output in a log file,
// waiting for its mount to appear (failing if the daemon died), unmounting with
// `fusermount3 -u -z` and reaping the daemon, the mount table, and the file helpers the tests read
// the mount with. FsMountTest is the fixture every mount test uses: it mounts, and at the end
// unmounts, checks that the daemon exited cleanly with no sanitizer report in its log, and that
// nothing of the test stays mounted.
//
// Needs /dev/fuse (and root or a usable fusermount3); the tests skip with a message without it.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "mount_test_tree.h"
#include "test_support.h"

namespace mibz2::test {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0);
void sleep_ms(int ms);
std::string text_of(const Bytes& b);
// The whole file as text ("" if it cannot be read).
std::string slurp(const stdfs::path& p);

// ---- mounts and processes ---------------------------------------------------------------------

// The mount points of this process's mount table, in mounting order.
std::vector<std::string> mount_points();
bool is_mounted(const stdfs::path& mnt);
// Processes (other than this one) whose command line mentions `s`; zombies have none.
std::vector<pid_t> processes_mentioning(const std::string& s);
void lazy_unmount(const stdfs::path& mnt);
std::string describe_status(int wait_status);

// One `mibz2fs` child process (or, given `program`, another FUSE daemon mounting at `mnt`), its
// output appended to a log file.
class Mibz2fs {
 public:
  // `env`, if given, is the child's whole environment (as `env -i` would leave it); else it
  // inherits the test's. `cgroup_procs`, if given, is a cgroup's cgroup.procs file: the child
  // joins that cgroup before it runs mibz2fs (and exits 126 if it cannot).
  Mibz2fs(std::vector<std::string> args, stdfs::path mnt, stdfs::path log,
          std::optional<std::vector<std::string>> env = std::nullopt, std::string program = {},
          std::optional<stdfs::path> cgroup_procs = std::nullopt);
  ~Mibz2fs() { stop(); }
  Mibz2fs(const Mibz2fs&) = delete;
  Mibz2fs& operator=(const Mibz2fs&) = delete;

  pid_t pid() const { return pid_; }
  const stdfs::path& mnt() const { return mnt_; }
  const stdfs::path& log() const { return log_; }
  std::optional<int> exit_status() const { return status_; }

  // Waits until the mount appears; "" or why not (the child exited: its status and log).
  std::string wait_mounted(double timeout_s = 30);
  bool running();
  // Waits for the child to end; its wait status, or nullopt on timeout.
  std::optional<int> wait_exit(double timeout_s);
  // Unmounts (fusermount3 -u -z) if mounted and reaps the child (SIGKILL after 15 s). Returns
  // false if the child had to be killed.
  bool stop();

 private:
  std::string program_;
  std::vector<std::string> args_;
  stdfs::path mnt_;
  stdfs::path log_;
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// mibz2fs run to its end (not in the foreground: an error must come before it daemonizes), with a
// time limit.
struct BadRun {
  int status;
  std::string output;  // standard output and error
};
BadRun run_mibz2fs(const std::vector<std::string>& args);

// mibz2fs's test hook (MIBZ2FS_TEST_HOLD_BUILDS): a mibz2fs started while this object lives holds
// its index builds at their start whenever `file` exists; hold() makes the file, release() removes
// it. The end of the object releases and stops naming the file to the mibz2fs started after it.
class BuildHold {
 public:
  explicit BuildHold(stdfs::path file);
  ~BuildHold();
  BuildHold(const BuildHold&) = delete;
  BuildHold& operator=(const BuildHold&) = delete;

  void hold();
  void release();
  bool held() const;

 private:
  stdfs::path file_;
};

// The open file limit (RLIMIT_NOFILE) of every mibz2fs started while this object lives, set in the
// child before it runs mibz2fs (this process keeps its own).
class ChildOpenFileLimit {
 public:
  ChildOpenFileLimit(rlim_t soft, rlim_t hard);
  ~ChildOpenFileLimit();
  ChildOpenFileLimit(const ChildOpenFileLimit&) = delete;
  ChildOpenFileLimit& operator=(const ChildOpenFileLimit&) = delete;
};

// ---- file access helpers ----------------------------------------------------------------------

// The whole file by read(2), or the errno that stopped it.
struct ReadAll {
  int error = 0;
  Bytes data;
};
ReadAll read_all(const stdfs::path& p);

// The value of an extended attribute, or the errno.
struct Xattr {
  int error = 0;
  std::string value;
};
Xattr get_xattr(const stdfs::path& p, const char* name);

inline constexpr const char* kXattrs[] = {"user.mibz2fs.compressed_size", "user.mibz2fs.blocks",
                                          "user.mibz2fs.index", "user.mibz2fs.damaged_blocks",
                                          "user.mibz2fs.damage", "user.mibz2fs.lines"};

// The kernel forgets the dentries and inodes nobody uses (and so sends FUSE forgets for them):
// drop_caches 2, which leaves the page cache alone.
void drop_kernel_caches();

// The .idx files under `dir`.
size_t count_index_files(const stdfs::path& dir);

// ---- the fixture -------------------------------------------------------------------------------

class FsMountTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite();
  static void TearDownTestSuite();
  // Why FUSE mounts cannot work here, or "".
  static std::string fuse_missing();

  void SetUp() override;
  void TearDown() override;

  // Starts `mibz2fs -f -o index_dir=IDX OPTIONS SOURCE MNT` and waits for the mount.
  Mibz2fs* mount(const stdfs::path& source, const std::vector<std::string>& options = {},
                 std::optional<stdfs::path> mnt = std::nullopt, std::optional<stdfs::path> idx = std::nullopt);
  Mibz2fs* mount_tree(const std::vector<std::string>& options = {}) { return mount(tree_->src(), options); }
  // A source directory of the test's own, removed after the unmount.
  stdfs::path new_source();

  static Tree* tree_;
  std::unique_ptr<TempDir> work_;
  stdfs::path mnt_;
  stdfs::path idx_;
  std::vector<std::unique_ptr<Mibz2fs>> mounts_;
};

// Mount tests that hold the daemon's index builds (BuildHold) to see what it answers before a file
// is indexed: a mibz2fs started in the test holds its builds while hold() is in force.
class FsHeldBuildsTest : public FsMountTest {
 protected:
  void SetUp() override {
    FsMountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    builds_.emplace(stdfs::canonical(work_->path()) / "hold");
  }
  void TearDown() override {
    builds_.reset();  // released before the unmount
    FsMountTest::TearDown();
  }
  void hold() { builds_->hold(); }
  void release() { builds_->release(); }
  bool held() const { return builds_->held(); }

  // Runs `fn`; false (and the hold released, so that it ends) if it has not returned in `limit`.
  bool returns_at_once(const std::function<void()>& fn, std::chrono::duration<double> limit = std::chrono::seconds(30)) {
    auto done = std::async(std::launch::async, fn);
    if (done.wait_for(limit) == std::future_status::ready) return true;
    release();
    done.wait();
    return false;
  }

 private:
  std::optional<BuildHold> builds_;
};

#define MOUNT_OR_RETURN(expr)      \
  do {                             \
    if ((expr) == nullptr) return; \
  } while (0)

}  // namespace mibz2::test
