#include "mount_harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <cstdlib>
#include <thread>

#include "io/mount_table.h"

#ifndef MIBZ2FS_BINARY
#error "MIBZ2FS_BINARY must name the mibz2fs program"
#endif

namespace mibz2::test {
namespace {

// MIBZ2FS_TEST_BINARY runs the mount tests against another build (to see a new test fail on the
// code before a fix).
std::string mibz2fs_program() {
  const char* other = std::getenv("MIBZ2FS_TEST_BINARY");
  return other && *other ? other : MIBZ2FS_BINARY;
}
const std::string kMibz2fs = mibz2fs_program();

// ChildOpenFileLimit's: what the next mibz2fs children get.
std::optional<rlimit> g_child_nofile;

}  // namespace

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

std::string text_of(const Bytes& b) { return std::string(b.begin(), b.end()); }
std::string slurp(const stdfs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// ---- mounts and processes ---------------------------------------------------------------------

std::vector<std::string> mount_points() {
  std::vector<std::string> out;
  for (const io::MountEntry& e : io::read_mount_table()) out.push_back(e.mount_point);
  return out;
}

bool is_mounted(const stdfs::path& mnt) { return io::is_mount_point(mnt.string()); }

std::vector<pid_t> processes_mentioning(const std::string& s) {
  std::vector<pid_t> out;
  DIR* d = opendir("/proc");
  if (!d) return out;
  while (dirent* de = readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(de->d_name, &end, 10);
    if (*end || pid <= 0 || pid == getpid()) continue;
    std::string cmd = slurp(std::string("/proc/") + de->d_name + "/cmdline");
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    if (cmd.find(s) != std::string::npos) out.push_back(static_cast<pid_t>(pid));
  }
  closedir(d);
  return out;
}

void lazy_unmount(const stdfs::path& mnt) {
  run_command("fusermount3 -u -z " + shell_quote(mnt.string()) + " >/dev/null 2>&1");
}

std::string describe_status(int st) {
  if (WIFEXITED(st)) return "exit status " + std::to_string(WEXITSTATUS(st));
  if (WIFSIGNALED(st)) return std::string("killed by signal ") + strsignal(WTERMSIG(st));
  return "wait status " + std::to_string(st);
}

Mibz2fs::Mibz2fs(std::vector<std::string> args, stdfs::path mnt, stdfs::path log,
                 std::optional<std::vector<std::string>> env, std::string program,
                 std::optional<stdfs::path> cgroup_procs)
    : program_(program.empty() ? kMibz2fs : std::move(program)),
      args_(std::move(args)),
      mnt_(std::move(mnt)),
      log_(std::move(log)) {
  std::vector<char*> argv;
  argv.push_back(program_.data());
  for (auto& a : args_) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  if (env) {
    for (auto& e : *env) envp.push_back(e.data());
    envp.push_back(nullptr);
  }
  std::fflush(nullptr);
  pid_ = fork();
  if (pid_ == 0) {
    const int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    if (g_child_nofile && setrlimit(RLIMIT_NOFILE, &*g_child_nofile) != 0) _exit(126);
    if (cgroup_procs) {
      // "0": the writing process itself, in cgroup v1 and v2 alike.
      const int cg = open(cgroup_procs->c_str(), O_WRONLY | O_CLOEXEC);
      if (cg < 0 || write(cg, "0", 1) != 1) _exit(126);
      close(cg);
    }
    if (env) execve(argv[0], argv.data(), envp.data());
    else execv(argv[0], argv.data());
    _exit(127);
  }
}

std::string Mibz2fs::wait_mounted(double timeout_s) {
  const auto t0 = Clock::now();
  while (seconds_since(t0) < timeout_s) {
    if (is_mounted(mnt_)) return {};
    if (!running()) return "mibz2fs ended before mounting (" + describe_status(*status_) + "); its log:\n" + slurp(log_);
    sleep_ms(5);
  }
  return "no mount at " + mnt_.string() + " after " + std::to_string(timeout_s) + " s; log:\n" + slurp(log_);
}

bool Mibz2fs::running() {
  if (status_) return false;
  int st = 0;
  if (waitpid(pid_, &st, WNOHANG) == pid_) {
    status_ = st;
    return false;
  }
  return true;
}

std::optional<int> Mibz2fs::wait_exit(double timeout_s) {
  const auto t0 = Clock::now();
  while (running()) {
    if (seconds_since(t0) > timeout_s) return std::nullopt;
    sleep_ms(5);
  }
  return status_;
}

bool Mibz2fs::stop() {
  if (pid_ <= 0) return true;
  if (is_mounted(mnt_)) lazy_unmount(mnt_);
  bool clean = true;
  if (running() && !wait_exit(15)) {
    clean = false;
    kill(pid_, SIGKILL);
    wait_exit(15);
  }
  if (is_mounted(mnt_)) lazy_unmount(mnt_);
  pid_ = -1;
  return clean;
}

BuildHold::BuildHold(stdfs::path file) : file_(std::move(file)) {
  setenv("MIBZ2FS_TEST_HOLD_BUILDS", file_.c_str(), 1);
}

BuildHold::~BuildHold() {
  release();
  unsetenv("MIBZ2FS_TEST_HOLD_BUILDS");
}

void BuildHold::hold() { write_file(file_, to_bytes("held")); }

void BuildHold::release() {
  std::error_code ec;
  stdfs::remove(file_, ec);
}

bool BuildHold::held() const { return stdfs::exists(file_); }

ChildOpenFileLimit::ChildOpenFileLimit(rlim_t soft, rlim_t hard) { g_child_nofile = rlimit{soft, hard}; }
ChildOpenFileLimit::~ChildOpenFileLimit() { g_child_nofile.reset(); }

BadRun run_mibz2fs(const std::vector<std::string>& args) {
  std::string cmd = "timeout -k 5 20 " + shell_quote(kMibz2fs);
  for (const auto& a : args) {
    cmd += ' ';
    cmd += shell_quote(a);
  }
  cmd += " 2>&1";
  CommandResult r = run_command(cmd);
  return {r.status, text_of(r.out)};
}

// ---- file access helpers ----------------------------------------------------------------------

ReadAll read_all(const stdfs::path& p) {
  ReadAll r;
  const int fd = open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    r.error = errno;
    return r;
  }
  uint8_t buf[1 << 17];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      r.error = errno;
      break;
    }
    if (n == 0) break;
    r.data.insert(r.data.end(), buf, buf + n);
  }
  close(fd);
  return r;
}

Xattr get_xattr(const stdfs::path& p, const char* name) {
  Xattr x;
  char buf[4096];
  const ssize_t n = lgetxattr(p.c_str(), name, buf, sizeof buf);
  if (n < 0) x.error = errno;
  else x.value.assign(buf, static_cast<size_t>(n));
  return x;
}

void drop_kernel_caches() {
  sync();
  const int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << "/proc/sys/vm/drop_caches: " << std::strerror(errno);
  EXPECT_EQ(write(fd, "2", 1), 1);
  close(fd);
}

size_t count_index_files(const stdfs::path& dir) {
  size_t n = 0;
  std::error_code ec;
  for (auto it = stdfs::recursive_directory_iterator(dir, ec); !ec && it != stdfs::recursive_directory_iterator();
       it.increment(ec))
    if (it->path().extension() == ".idx") ++n;
  return n;
}

// ---- the fixture -------------------------------------------------------------------------------

Tree* FsMountTest::tree_ = nullptr;

void FsMountTest::SetUpTestSuite() {
  if (fuse_missing().empty() && !tree_) tree_ = make_main_tree().release();
}

void FsMountTest::TearDownTestSuite() {
  delete tree_;
  tree_ = nullptr;
}

std::string FsMountTest::fuse_missing() {
  if (access("/dev/fuse", F_OK) != 0) return "/dev/fuse is missing: FUSE mounts are not possible here";
  const int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
  if (fd < 0) return std::string("/dev/fuse cannot be opened: ") + std::strerror(errno);
  close(fd);
  return {};
}

void FsMountTest::SetUp() {
  if (const std::string why = fuse_missing(); !why.empty()) GTEST_SKIP() << why;
  ASSERT_NE(tree_, nullptr);
  work_ = std::make_unique<TempDir>();
  mnt_ = stdfs::canonical(work_->path()) / "mnt";
  idx_ = stdfs::canonical(work_->path()) / "idx";
  stdfs::create_directories(mnt_);
}

void FsMountTest::TearDown() {
  for (auto& m : mounts_) {
    const bool was_running = m->running();
    const bool clean = m->stop();
    EXPECT_TRUE(clean) << "mibz2fs did not end within 15 s of fusermount3 -u -z; log:\n" << slurp(m->log());
    if (was_running && m->exit_status()) {
      EXPECT_TRUE(WIFEXITED(*m->exit_status()) && WEXITSTATUS(*m->exit_status()) == 0)
          << "mibz2fs ended with " << describe_status(*m->exit_status()) << " after unmounting; log:\n"
          << slurp(m->log());
    }
    const std::string log = slurp(m->log());
    for (const char* report : {"AddressSanitizer", "ThreadSanitizer", "LeakSanitizer", "runtime error:"})
      EXPECT_EQ(log.find(report), std::string::npos) << "sanitizer report in the mibz2fs log:\n" << log;
    if (HasFailure()) std::fprintf(stderr, "---- log of mibz2fs at %s ----\n%s----\n", m->mnt().c_str(), log.c_str());
  }
  mounts_.clear();
  // Nothing of this test may stay mounted.
  if (work_) {
    for (const std::string& p : mount_points()) {
      if (p.rfind(stdfs::canonical(work_->path()).string() + "/", 0) == 0) {
        ADD_FAILURE() << "left mounted: " << p;
        lazy_unmount(p);
      }
    }
  }
}

Mibz2fs* FsMountTest::mount(const stdfs::path& source, const std::vector<std::string>& options,
                            std::optional<stdfs::path> mnt, std::optional<stdfs::path> idx) {
  const stdfs::path at = mnt.value_or(mnt_);
  stdfs::create_directories(at);
  std::vector<std::string> args{"-f", "-o", "index_dir=" + idx.value_or(idx_).string()};
  args.insert(args.end(), options.begin(), options.end());
  args.push_back(source.string());
  args.push_back(at.string());
  const stdfs::path log = work_->path() / ("log" + std::to_string(mounts_.size()) + ".txt");
  mounts_.push_back(std::make_unique<Mibz2fs>(args, at, log));
  const std::string why = mounts_.back()->wait_mounted();
  if (!why.empty()) {
    ADD_FAILURE() << why;
    return nullptr;
  }
  return mounts_.back().get();
}

stdfs::path FsMountTest::new_source() {
  const stdfs::path p = stdfs::canonical(work_->path()) / "src";
  stdfs::create_directories(p);
  return p;
}

}  // namespace mibz2::test
