// mibz2fs mounted for real: a generated source tree (nested directories, plain files, symlinks,
// single-block, multi-block and multistream .bz2 files, .tbz2 and .tbz archives, a name collision,
// a fake .bz2, names with spaces and UTF-8) is mounted with `mibz2fs -f` as a child process and
// compared with what it must show: listings, names, sizes, modes, symlink targets, contents, reads
// by real programs, random reads from several processes at once, extended attributes, EROFS for
// every write, statfs; then the life cycle: bad options and paths, signals and fusermount3 -u,
// -o wait_index, a second mount with current indexes, a source replaced while mounted, and a
// damaged block.
//
// Needs /dev/fuse (and root or a usable fusermount3); skipped with a message when it is missing.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "bz2/block_decoder.h"
#include "bz2/byte_buffer.h"
#include "test_support.h"

#ifndef MIBZ2FS_BINARY
#error "MIBZ2FS_BINARY must name the mibz2fs program"
#endif

namespace mibz2::test {
namespace {

namespace stdfs = std::filesystem;
using Clock = std::chrono::steady_clock;

const std::string kMibz2fs = MIBZ2FS_BINARY;

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

// Mount points in /proc/self/mountinfo (field 5, with its \ooo escapes undone).
std::vector<std::string> mount_points() {
  std::vector<std::string> out;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, devno, root, target;
    fields >> id >> parent >> devno >> root >> target;
    std::string plain;
    for (size_t i = 0; i < target.size(); ++i) {
      if (target[i] == '\\' && i + 3 < target.size()) {
        plain += static_cast<char>(std::strtol(target.substr(i + 1, 3).c_str(), nullptr, 8));
        i += 3;
      } else {
        plain += target[i];
      }
    }
    out.push_back(plain);
  }
  return out;
}

bool is_mounted(const stdfs::path& mnt) {
  const auto points = mount_points();
  return std::find(points.begin(), points.end(), mnt.string()) != points.end();
}

// Processes (other than this one) whose command line mentions `s`; zombies have none.
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

// One `mibz2fs` child process, its output appended to a log file.
class Mibz2fs {
 public:
  Mibz2fs(std::vector<std::string> args, stdfs::path mnt, stdfs::path log)
      : args_(std::move(args)), mnt_(std::move(mnt)), log_(std::move(log)) {
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(kMibz2fs.c_str()));
    for (auto& a : args_) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::fflush(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      const int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
      }
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  ~Mibz2fs() { stop(); }
  Mibz2fs(const Mibz2fs&) = delete;
  Mibz2fs& operator=(const Mibz2fs&) = delete;

  pid_t pid() const { return pid_; }
  const stdfs::path& mnt() const { return mnt_; }
  const stdfs::path& log() const { return log_; }
  std::optional<int> exit_status() const { return status_; }

  // Waits until the mount appears; "" or why not (the child exited: its status and log).
  std::string wait_mounted(double timeout_s = 30) {
    const auto t0 = Clock::now();
    while (seconds_since(t0) < timeout_s) {
      if (is_mounted(mnt_)) return {};
      if (!running()) return "mibz2fs ended before mounting (" + describe_status(*status_) + "); its log:\n" + slurp(log_);
      sleep_ms(5);
    }
    return "no mount at " + mnt_.string() + " after " + std::to_string(timeout_s) + " s; log:\n" + slurp(log_);
  }

  bool running() {
    if (status_) return false;
    int st = 0;
    if (waitpid(pid_, &st, WNOHANG) == pid_) {
      status_ = st;
      return false;
    }
    return true;
  }

  // Waits for the child to end; its wait status, or nullopt on timeout.
  std::optional<int> wait_exit(double timeout_s) {
    const auto t0 = Clock::now();
    while (running()) {
      if (seconds_since(t0) > timeout_s) return std::nullopt;
      sleep_ms(5);
    }
    return status_;
  }

  // Unmounts (fusermount3 -u -z) if mounted and reaps the child (SIGKILL after 15 s). Returns
  // false if the child had to be killed.
  bool stop() {
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

 private:
  std::vector<std::string> args_;
  stdfs::path mnt_;
  stdfs::path log_;
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// ---- file access helpers ----------------------------------------------------------------------

// The whole file by read(2), or the errno that stopped it.
struct ReadAll {
  int error = 0;
  Bytes data;
};
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

// pread until `len` bytes or end of file; the count, or -errno.
ssize_t pread_full(int fd, uint8_t* buf, size_t len, off_t off) {
  size_t got = 0;
  while (got < len) {
    const ssize_t n = pread(fd, buf + got, len - got, off + static_cast<off_t>(got));
    if (n < 0) return -errno;
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(got);
}

// The value of an extended attribute, or the errno.
struct Xattr {
  int error = 0;
  std::string value;
};
Xattr get_xattr(const stdfs::path& p, const char* name) {
  Xattr x;
  char buf[4096];
  const ssize_t n = lgetxattr(p.c_str(), name, buf, sizeof buf);
  if (n < 0) x.error = errno;
  else x.value.assign(buf, static_cast<size_t>(n));
  return x;
}

constexpr const char* kXattrs[] = {"user.mibz2fs.compressed_size", "user.mibz2fs.blocks", "user.mibz2fs.index",
                                   "user.mibz2fs.damaged_blocks"};

size_t block_count(const Bytes& compressed) {
  FileLayout layout;
  if (!walk_file(as_span(compressed), &layout)) return SIZE_MAX;
  return layout.blocks.size();
}

Bytes libbz2_multistream(const std::vector<Bytes>& parts, int level) {
  Bytes out;
  for (const Bytes& p : parts) {
    const Bytes s = libbz2_compress(as_span(p), level);
    out.insert(out.end(), s.begin(), s.end());
  }
  return out;
}

// ---- the source tree and what the mount must show ---------------------------------------------

struct Shown {
  enum Kind { kDir, kFile, kSymlink } kind = kFile;
  mode_t mode = 0;        // permission bits
  Bytes content;          // files: what reading gives
  std::string target;     // symlinks
  bool decompressed = false;
  stdfs::path source;     // the source entry
  size_t blocks = 0;      // decompressed: bzip2 blocks in the source
  stdfs::path original;   // files: the content as a plain file outside the mount (for programs)
};

class Tree {
 public:
  Tree() : src_(dir_.file("src")), originals_(dir_.file("originals")) {
    stdfs::create_directories(src_);
    stdfs::create_directories(originals_);
  }
  const stdfs::path& src() const { return src_; }
  const std::map<std::string, Shown>& shown() const { return shown_; }
  const Shown& at(const std::string& rel) const { return shown_.at(rel); }

  void dir(const std::string& rel, mode_t mode = 0755) {
    stdfs::create_directories(src_ / rel);
    Shown s;
    s.kind = Shown::kDir;
    s.mode = mode;
    s.source = src_ / rel;
    shown_[rel] = s;
    modes_.emplace_back(src_ / rel, mode);  // set last: a 0500 directory must still be filled
  }
  // A file shown as it is.
  void plain(const std::string& rel, const Bytes& content, mode_t mode = 0644) {
    const stdfs::path p = src_ / rel;
    write_file(p, as_span(content));
    chmod(p.c_str(), mode);
    add_file(rel, content, mode, p);
  }
  // `compressed` stored as source_rel, shown decompressed (as `original`) under shown_rel.
  void bz2(const std::string& source_rel, const std::string& shown_rel, const Bytes& original, const Bytes& compressed,
           mode_t mode = 0644) {
    const stdfs::path p = src_ / source_rel;
    write_file(p, as_span(compressed));
    chmod(p.c_str(), mode);
    Shown& s = add_file(shown_rel, original, mode, p);
    s.decompressed = true;
    s.blocks = block_count(compressed);
  }
  void symlink(const std::string& rel, const std::string& target) {
    const stdfs::path p = src_ / rel;
    if (::symlink(target.c_str(), p.c_str()) != 0) throw std::runtime_error("symlink " + p.string());
    Shown s;
    s.kind = Shown::kSymlink;
    s.mode = 0777;
    s.target = target;
    s.source = p;
    shown_[rel] = s;
  }
  void finish() {
    for (auto it = modes_.rbegin(); it != modes_.rend(); ++it) chmod(it->first.c_str(), it->second);
  }

 private:
  Shown& add_file(const std::string& rel, const Bytes& content, mode_t mode, const stdfs::path& source) {
    Shown s;
    s.kind = Shown::kFile;
    s.mode = mode;
    s.content = content;
    s.source = source;
    s.original = originals_ / std::to_string(shown_.size());
    write_file(s.original, as_span(content));
    return shown_[rel] = std::move(s);
  }

  TempDir dir_;
  stdfs::path src_;
  stdfs::path originals_;
  std::map<std::string, Shown> shown_;
  std::vector<std::pair<stdfs::path, mode_t>> modes_;
};

Bytes tar_of(const std::map<std::string, Bytes>& files) {
  TempDir t;
  for (const auto& [name, data] : files) {
    stdfs::create_directories((t.path() / "in" / name).parent_path());
    write_file(t.path() / "in" / name, as_span(data));
  }
  CommandResult r = run_command("tar --owner=0 --group=0 --mtime=@1700000000 -cf - -C " +
                                shell_quote((t.path() / "in").string()) + " .");
  if (r.status != 0) throw std::runtime_error("tar failed");
  return r.out;
}

// ~3 MB of mixed content: ~35 blocks at level 1.
Bytes multi_block_content() {
  std::vector<Bytes> parts;
  for (uint64_t i = 0; i < 12; ++i) {
    parts.push_back(text_bytes(150000, 100 + i));
    parts.push_back(runs_bytes(60000, 200 + i));
    parts.push_back(random_bytes(40000, 300 + i));
  }
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

const std::string kUtf8Name = "\xc3\xbcn\xc3\xaf\x63\xc3\xb6\x64\xc3\xa9 \xe2\x98\x83 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e.txt";

std::unique_ptr<Tree> make_main_tree() {
  auto t = std::make_unique<Tree>();
  t->plain("plain.txt", text_bytes(20000, 1));
  t->plain("empty", {});
  t->plain("script.sh", to_bytes("#!/bin/sh\necho hello\n"), 0755);
  t->plain("private.dat", random_bytes(5000, 2), 0600);

  const Bytes single = text_bytes(200000, 3);
  t->bz2("single.txt.bz2", "single.txt", single, libbz2_compress(as_span(single), 9));
  const Bytes multi = multi_block_content();
  t->bz2("multi.bin.bz2", "multi.bin", multi, libbz2_compress(as_span(multi), 1), 0640);
  // pbzip2-like: one stream per part, and one of them with two blocks.
  std::vector<Bytes> parts;
  for (uint64_t i = 0; i < 5; ++i) parts.push_back(text_bytes(90000 + 1000 * i, 10 + i));
  parts.push_back(text_bytes(150000, 20));
  Bytes whole;
  for (const Bytes& p : parts) whole.insert(whole.end(), p.begin(), p.end());
  Bytes ms = libbz2_multistream({parts.begin(), parts.end() - 1}, 9);
  const Bytes last = libbz2_compress(as_span(parts.back()), 1);
  ms.insert(ms.end(), last.begin(), last.end());
  t->bz2("multistream.txt.bz2", "multistream.txt", whole, ms);

  const Bytes tar1 = tar_of({{"doc/readme.txt", text_bytes(30000, 30)}, {"data.bin", random_bytes(20000, 31)}});
  t->bz2("archive.tbz2", "archive.tar", tar1, libbz2_compress(as_span(tar1), 9));
  const Bytes tar2 = tar_of({{"notes.txt", text_bytes(12000, 32)}});
  t->bz2("backup.tbz", "backup.tar", tar2, libbz2_compress(as_span(tar2), 5));
  // Two compressed files that both want "dup.tar": the first by source name wins, the other
  // stays raw under its own name.
  const Bytes dup = text_bytes(5000, 33);
  t->bz2("dup.tar.bz2", "dup.tar", dup, libbz2_compress(as_span(dup), 9));
  const Bytes dup2 = libbz2_compress(as_span(text_bytes(6000, 34)), 9);
  t->plain("dup.tbz", dup2);

  // A collision: the real "a" keeps its name, "a.bz2" stays raw.
  t->plain("a", to_bytes("I am the real a\n"));
  t->plain("a.bz2", libbz2_compress(as_span(text_bytes(3000, 35)), 9));
  // Only looks compressed.
  t->plain("fake.bz2", to_bytes("this is not bzip2 at all\njust text\n"));
  t->plain("zero.bz2", {});
  t->plain(".bz2", libbz2_compress(as_span(text_bytes(100, 36)), 9));  // no name left without the suffix
  const Bytes nothing;
  t->bz2("empty-stream.bz2", "empty-stream", nothing, libbz2_compress(as_span(nothing), 9));

  const Bytes spaces = text_bytes(40000, 40);
  t->bz2("name with spaces.txt.bz2", "name with spaces.txt", spaces, libbz2_compress(as_span(spaces), 9));
  const Bytes utf8 = text_bytes(30000, 41);
  t->bz2(kUtf8Name + ".bz2", kUtf8Name, utf8, libbz2_compress(as_span(utf8), 9));

  t->dir("dir");
  const Bytes nested = text_bytes(250000, 50);
  t->bz2("dir/nested.log.bz2", "dir/nested.log", nested, libbz2_compress(as_span(nested), 2), 0600);
  t->dir("dir/sub", 0750);
  t->plain("dir/sub/deep.bin", random_bytes(70000, 51));
  t->dir("dir/sub/deeper", 0700);
  const Bytes csv = text_bytes(10000, 52);
  t->bz2("dir/sub/deeper/x.csv.bz2", "dir/sub/deeper/x.csv", csv, libbz2_compress(as_span(csv), 9), 0444);
  t->plain("dir/sub/deeper/readme", to_bytes("deep down\n"));
  t->dir("empty-dir", 0555);
  t->dir("dir with space");
  t->plain("dir with space/f", to_bytes("f\n"));

  t->symlink("link-plain", "plain.txt");
  t->symlink("dir/link-up", "../single.txt.bz2");
  t->symlink("dangling", "does/not/exist");
  t->symlink("abs-link", "/etc/hostname");
  t->symlink("link-dir", "dir");
  t->finish();
  return t;
}

// ---- the fixture -------------------------------------------------------------------------------

class FsMountTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (fuse_missing().empty() && !tree_) tree_ = make_main_tree().release();
  }
  static void TearDownTestSuite() {
    delete tree_;
    tree_ = nullptr;
  }

  // Why FUSE mounts cannot work here, or "".
  static std::string fuse_missing() {
    if (access("/dev/fuse", F_OK) != 0) return "/dev/fuse is missing: FUSE mounts are not possible here";
    const int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
    if (fd < 0) return std::string("/dev/fuse cannot be opened: ") + std::strerror(errno);
    close(fd);
    return {};
  }

  void SetUp() override {
    if (const std::string why = fuse_missing(); !why.empty()) GTEST_SKIP() << why;
    ASSERT_NE(tree_, nullptr);
    work_ = std::make_unique<TempDir>();
    mnt_ = stdfs::canonical(work_->path()) / "mnt";
    idx_ = stdfs::canonical(work_->path()) / "idx";
    stdfs::create_directories(mnt_);
  }

  void TearDown() override {
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

  // Starts `mibz2fs -f -o index_dir=IDX OPTIONS SOURCE MNT` and waits for the mount.
  Mibz2fs* mount(const stdfs::path& source, const std::vector<std::string>& options = {},
                 std::optional<stdfs::path> mnt = std::nullopt, std::optional<stdfs::path> idx = std::nullopt) {
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
  Mibz2fs* mount_tree(const std::vector<std::string>& options = {}) { return mount(tree_->src(), options); }
  // A source directory of the test's own, removed after the unmount.
  stdfs::path new_source() {
    const stdfs::path p = stdfs::canonical(work_->path()) / "src";
    stdfs::create_directories(p);
    return p;
  }

  static Tree* tree_;
  std::unique_ptr<TempDir> work_;
  stdfs::path mnt_;
  stdfs::path idx_;
  std::vector<std::unique_ptr<Mibz2fs>> mounts_;
};

Tree* FsMountTest::tree_ = nullptr;

#define MOUNT_OR_RETURN(expr)      \
  do {                             \
    if ((expr) == nullptr) return; \
  } while (0)

// ---- what the mount shows ----------------------------------------------------------------------

TEST_F(FsMountTest, ListingNamesTypesModesSizesAndSymlinks) {
  MOUNT_OR_RETURN(mount_tree());
  // Every path under the mount, walked with readdir (symlinks not followed).
  std::set<std::string> seen;
  for (auto it = stdfs::recursive_directory_iterator(mnt_); it != stdfs::recursive_directory_iterator(); ++it)
    seen.insert(it->path().lexically_relative(mnt_).string());
  std::set<std::string> expected;
  for (const auto& [rel, s] : tree_->shown()) expected.insert(rel);
  EXPECT_EQ(seen, expected);

  for (const auto& [rel, s] : tree_->shown()) {
    SCOPED_TRACE(rel);
    const stdfs::path p = mnt_ / rel;
    struct stat st;
    ASSERT_EQ(lstat(p.c_str(), &st), 0) << std::strerror(errno);
    EXPECT_EQ(st.st_mode & 07777, s.mode) << std::oct << (st.st_mode & 07777);
    struct stat src;
    ASSERT_EQ(lstat(s.source.c_str(), &src), 0);
    EXPECT_EQ(st.st_uid, src.st_uid);
    EXPECT_EQ(st.st_gid, src.st_gid);
    EXPECT_EQ(st.st_mtim.tv_sec, src.st_mtim.tv_sec);
    switch (s.kind) {
      case Shown::kDir: EXPECT_TRUE(S_ISDIR(st.st_mode)); break;
      case Shown::kFile:
        EXPECT_TRUE(S_ISREG(st.st_mode));
        EXPECT_EQ(static_cast<uint64_t>(st.st_size), s.content.size());
        break;
      case Shown::kSymlink: {
        EXPECT_TRUE(S_ISLNK(st.st_mode));
        char buf[4096];
        const ssize_t n = readlink(p.c_str(), buf, sizeof buf);
        ASSERT_GE(n, 0) << std::strerror(errno);
        EXPECT_EQ(std::string(buf, static_cast<size_t>(n)), s.target);
        EXPECT_EQ(static_cast<uint64_t>(st.st_size), s.target.size());
        break;
      }
    }
  }
  // Inode numbers are stable: the same on a second look.
  struct stat a, b;
  ASSERT_EQ(stat((mnt_ / "multi.bin").c_str(), &a), 0);
  ASSERT_EQ(stat((mnt_ / "multi.bin").c_str(), &b), 0);
  EXPECT_EQ(a.st_ino, b.st_ino);
  // Following symlinks through the mount.
  EXPECT_EQ(text_of(read_all(mnt_ / "link-plain").data), text_of(tree_->at("plain.txt").content));
  EXPECT_TRUE(stdfs::is_directory(mnt_ / "link-dir"));
  EXPECT_EQ(stdfs::exists(mnt_ / "dangling"), false);
  // Names that are not there.
  struct stat st;
  EXPECT_EQ(lstat((mnt_ / "single.txt.bz2").c_str(), &st), -1);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_EQ(lstat((mnt_ / "dir/nope").c_str(), &st), -1);
  EXPECT_EQ(errno, ENOENT);
}

TEST_F(FsMountTest, ReadingEveryFileGivesItsContent) {
  MOUNT_OR_RETURN(mount_tree());
  for (const auto& [rel, s] : tree_->shown()) {
    if (s.kind != Shown::kFile) continue;
    SCOPED_TRACE(rel);
    const ReadAll r = read_all(mnt_ / rel);
    ASSERT_EQ(r.error, 0) << std::strerror(r.error);
    EXPECT_TRUE(same_bytes(r.data, s.content));
  }
  // And again, now partly from caches.
  for (const char* rel : {"multi.bin", "multistream.txt", "single.txt"}) {
    SCOPED_TRACE(rel);
    const ReadAll r = read_all(mnt_ / rel);
    ASSERT_EQ(r.error, 0);
    EXPECT_TRUE(same_bytes(r.data, tree_->at(rel).content));
  }
}

TEST_F(FsMountTest, ExtendedAttributesOfDecompressedFiles) {
  MOUNT_OR_RETURN(mount_tree());
  for (const auto& [rel, s] : tree_->shown()) {
    if (s.kind != Shown::kFile) continue;
    SCOPED_TRACE(rel);
    const stdfs::path p = mnt_ / rel;
    if (!s.decompressed) {
      const Xattr x = get_xattr(p, kXattrs[0]);
      EXPECT_EQ(x.error, ENODATA) << "a file shown as it is has no mibz2fs attributes: " << x.value;
      continue;
    }
    EXPECT_EQ(get_xattr(p, kXattrs[0]).value, std::to_string(stdfs::file_size(s.source)));
    EXPECT_EQ(get_xattr(p, kXattrs[1]).value, std::to_string(s.blocks));
    EXPECT_EQ(get_xattr(p, kXattrs[2]).value, "ready");
    EXPECT_EQ(get_xattr(p, kXattrs[3]).value, "0");
    EXPECT_EQ(get_xattr(p, "user.mibz2fs.nonsense").error, ENODATA);
    char names[1024];
    const ssize_t n = llistxattr(p.c_str(), names, sizeof names);
    ASSERT_GT(n, 0) << std::strerror(errno);
    std::set<std::string> listed;
    for (size_t i = 0; i < static_cast<size_t>(n); i += std::strlen(names + i) + 1) listed.insert(names + i);
    EXPECT_EQ(listed, std::set<std::string>(std::begin(kXattrs), std::end(kXattrs)));
    // A buffer too small is ERANGE; size 0 asks for the size.
    char tiny[1];
    EXPECT_EQ(lgetxattr(p.c_str(), kXattrs[2], tiny, sizeof tiny), -1);
    EXPECT_EQ(errno, ERANGE);
    EXPECT_EQ(lgetxattr(p.c_str(), kXattrs[2], nullptr, 0), 5);
  }
  EXPECT_EQ(get_xattr(mnt_ / "dir", kXattrs[2]).error, ENODATA);
}

// The engine's counters are on the root directory: after reading a file they count what happened.
TEST_F(FsMountTest, RootCarriesTheEngineCounters) {
  MOUNT_OR_RETURN(mount_tree());
  auto counter = [&](const std::string& name) -> long long {
    const Xattr x = get_xattr(mnt_, "user.mibz2fs.stats");
    EXPECT_EQ(x.error, 0);
    const size_t at = x.value.find(name + "=");
    if (at == std::string::npos) return -1;
    return std::stoll(x.value.substr(at + name.size() + 1));
  };
  uint64_t expected = 0;
  for (const auto& [rel, s] : tree_->shown()) {
    if (s.kind != Shown::kFile || !s.decompressed) continue;
    const ReadAll r = read_all(mnt_ / rel);
    ASSERT_EQ(r.error, 0) << rel;
    expected += r.data.size();
  }
  EXPECT_GE(counter("bytes_decoded"), static_cast<long long>(expected));
  EXPECT_GT(counter("decodes"), 0);
  EXPECT_GE(counter("bytes_read"), static_cast<long long>(expected));
  EXPECT_EQ(counter("decode_errors"), 0);
  EXPECT_EQ(get_xattr(mnt_ / "dir", "user.mibz2fs.stats").error, ENODATA);
}

TEST_F(FsMountTest, StatfsSaysReadOnly) {
  MOUNT_OR_RETURN(mount_tree());
  struct statvfs sv;
  ASSERT_EQ(statvfs(mnt_.c_str(), &sv), 0) << std::strerror(errno);
  EXPECT_TRUE(sv.f_flag & ST_RDONLY);
  EXPECT_GT(sv.f_blocks, 0u);
}

TEST_F(FsMountTest, EveryWriteFailsWithErofs) {
  MOUNT_OR_RETURN(mount_tree());
  const std::string file = (mnt_ / "single.txt").string();
  const std::string plain = (mnt_ / "plain.txt").string();
  const std::string fresh = (mnt_ / "new-file").string();
  struct Attempt {
    const char* what;
    std::function<int()> run;  // -1 with errno set on failure
  };
  auto open_close = [](const std::string& p, int flags) {
    const int fd = open(p.c_str(), flags | O_CLOEXEC, 0644);
    if (fd >= 0) close(fd);
    return fd < 0 ? -1 : 0;
  };
  const std::vector<Attempt> attempts = {
      {"open O_WRONLY", [&] { return open_close(file, O_WRONLY); }},
      {"open O_RDWR (plain)", [&] { return open_close(plain, O_RDWR); }},
      {"open O_RDONLY|O_TRUNC", [&] { return open_close(file, O_RDONLY | O_TRUNC); }},
      {"open O_WRONLY|O_APPEND", [&] { return open_close(plain, O_WRONLY | O_APPEND); }},
      {"open O_CREAT", [&] { return open_close(fresh, O_WRONLY | O_CREAT); }},
      {"creat over an existing name", [&] { return open_close(file, O_WRONLY | O_CREAT | O_TRUNC); }},
      {"mkdir", [&] { return mkdir((mnt_ / "newdir").c_str(), 0755); }},
      {"rmdir", [&] { return rmdir((mnt_ / "empty-dir").c_str()); }},
      {"unlink", [&] { return unlink(file.c_str()); }},
      {"rename", [&] { return rename(file.c_str(), (mnt_ / "renamed").c_str()); }},
      {"link", [&] { return link(plain.c_str(), (mnt_ / "hard").c_str()); }},
      {"symlink", [&] { return symlink("x", (mnt_ / "sym").c_str()); }},
      {"truncate", [&] { return truncate(file.c_str(), 0); }},
      {"truncate (plain)", [&] { return truncate(plain.c_str(), 1); }},
      {"chmod", [&] { return chmod(file.c_str(), 0600); }},
      {"chown", [&] { return chown(file.c_str(), 1, 1); }},
      {"utimes", [&] { return utimensat(AT_FDCWD, file.c_str(), nullptr, 0); }},
      {"setxattr", [&] { return setxattr(file.c_str(), "user.test", "x", 1, 0); }},
      {"setxattr mibz2fs name", [&] { return setxattr(file.c_str(), kXattrs[2], "x", 1, 0); }},
      {"removexattr", [&] { return removexattr(file.c_str(), kXattrs[2]); }},
      {"mknod fifo", [&] { return mkfifo((mnt_ / "fifo").c_str(), 0644); }},
  };
  for (const Attempt& a : attempts) {
    errno = 0;
    const int rc = a.run();
    EXPECT_EQ(rc, -1) << a.what << " succeeded";
    EXPECT_EQ(errno, EROFS) << a.what << ": " << std::strerror(errno);
  }
  // Nothing changed in the mount or in the source.
  EXPECT_FALSE(stdfs::exists(mnt_ / "new-file"));
  EXPECT_FALSE(stdfs::exists(tree_->src() / "new-file"));
  EXPECT_TRUE(same_bytes(read_all(file).data, tree_->at("single.txt").content));
  EXPECT_TRUE(same_bytes(read_file(tree_->src() / "plain.txt"), tree_->at("plain.txt").content));
}

// Real programs on a mounted file give what they give on the same content as a plain file.
TEST_F(FsMountTest, ProgramsReadLikeFromAPlainFile) {
  MOUNT_OR_RETURN(mount_tree());
  const std::vector<std::string> commands = {
      "grep -c -a the",         "grep -c -a -E '[Hh]uffman|bzip2'", "tail -c 10000",  "tail -c 1",
      "head -c 123457",         "head -c 1",                        "wc -c",          "md5sum",
      "dd bs=4096 skip=37 count=20 status=none",                   "dd bs=65536 skip=3 status=none",
      "dd bs=1 skip=100003 count=3000 status=none",                 "tail -n 3",
  };
  for (const char* rel : {"multi.bin", "single.txt", "multistream.txt", "name with spaces.txt", "plain.txt",
                          "dir/nested.log"}) {
    const Shown& s = tree_->at(rel);
    for (const std::string& c : commands) {
      SCOPED_TRACE(std::string(rel) + ": " + c);
      // Input by name (programs seek and stat) and by standard input (where the command allows).
      const bool stdin_only = c.rfind("dd ", 0) == 0;
      const std::string on_mount = stdin_only ? c + " if=" + shell_quote((mnt_ / rel).string())
                                              : c + " " + shell_quote((mnt_ / rel).string());
      const std::string on_plain = stdin_only ? c + " if=" + shell_quote(s.original.string())
                                              : c + " " + shell_quote(s.original.string());
      const CommandResult m = run_command(on_mount + (c == "md5sum" || c == "wc -c" ? " | cut -d' ' -f1" : ""));
      const CommandResult p = run_command(on_plain + (c == "md5sum" || c == "wc -c" ? " | cut -d' ' -f1" : ""));
      EXPECT_EQ(m.status, p.status);
      EXPECT_TRUE(same_bytes(m.out, p.out));
      if (!stdin_only) {
        EXPECT_FALSE(p.out.empty());
      }
    }
  }
  // An archive through the mount lists and extracts like the original.
  for (const char* rel : {"archive.tar", "backup.tar"}) {
    SCOPED_TRACE(rel);
    const CommandResult m = run_command("tar -tvf " + shell_quote((mnt_ / rel).string()));
    const CommandResult p = run_command("tar -tvf " + shell_quote(tree_->at(rel).original.string()));
    EXPECT_EQ(m.status, 0);
    EXPECT_TRUE(same_bytes(m.out, p.out));
  }
  const CommandResult x = run_command("tar -xOf " + shell_quote((mnt_ / "archive.tar").string()) + " ./doc/readme.txt");
  EXPECT_EQ(x.status, 0);
  EXPECT_TRUE(same_bytes(x.out, text_bytes(30000, 30)));
  // cmp over the whole file, through a pipe.
  EXPECT_EQ(run_command("cat " + shell_quote((mnt_ / kUtf8Name).string()) + " | cmp -s - " +
                        shell_quote(tree_->at(kUtf8Name).original.string()))
                .status,
            0);
}

// Several processes at once, each with thousands of random preads over every file (half of them
// with O_DIRECT so that their reads reach mibz2fs instead of the page cache).
TEST_F(FsMountTest, ConcurrentRandomPreadsFromSeveralProcesses) {
  // A cache smaller than multi.bin, so that blocks are evicted and decoded again meanwhile.
  MOUNT_OR_RETURN(mount_tree({"-o", "cache_size=2M"}));
  struct Target {
    std::string path;
    const Bytes* content;
  };
  std::vector<Target> targets;
  for (const auto& [rel, s] : tree_->shown())
    if (s.kind == Shown::kFile) targets.push_back({(mnt_ / rel).string(), &s.content});
  // The big ones more often.
  for (int i = 0; i < 6; ++i) {
    targets.push_back({(mnt_ / "multi.bin").string(), &tree_->at("multi.bin").content});
    targets.push_back({(mnt_ / "multistream.txt").string(), &tree_->at("multistream.txt").content});
  }
  constexpr int kChildren = 4;
  constexpr int kReads = 1500;
  std::vector<pid_t> children;
  std::fflush(nullptr);
  for (int c = 0; c < kChildren; ++c) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      const bool direct = c % 2 == 1;
      std::vector<int> fds;
      for (const Target& t : targets) {
        int fd = open(t.path.c_str(), O_RDONLY | O_CLOEXEC | (direct ? O_DIRECT : 0));
        if (fd < 0 && direct) fd = open(t.path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
          std::fprintf(stderr, "child %d: open %s: %s\n", c, t.path.c_str(), std::strerror(errno));
          _exit(2);
        }
        fds.push_back(fd);
      }
      Rng rng(1000 + static_cast<uint64_t>(c));
      std::vector<uint8_t> buf(1 << 20);
      for (int i = 0; i < kReads; ++i) {
        const size_t k = rng.below(static_cast<uint32_t>(targets.size()));
        const Bytes& want = *targets[k].content;
        const uint64_t off = rng.below(static_cast<uint32_t>(want.size() + 5000));
        size_t len;
        switch (rng.below(4)) {
          case 0: len = 1 + rng.below(64); break;
          case 1: len = 4096; break;
          case 2: len = 1 + rng.below(200000); break;
          default: len = 1 + rng.below(1 << 20); break;
        }
        const ssize_t n = pread_full(fds[k], buf.data(), len, static_cast<off_t>(off));
        const size_t expect = off >= want.size() ? 0 : std::min<size_t>(len, want.size() - off);
        if (n < 0 || static_cast<size_t>(n) != expect ||
            (expect && std::memcmp(buf.data(), want.data() + off, expect) != 0)) {
          std::fprintf(stderr, "child %d read %d: %s at %llu length %zu: got %zd (%s), want %zu bytes%s\n", c, i,
                       targets[k].path.c_str(), static_cast<unsigned long long>(off), len, n,
                       n < 0 ? std::strerror(static_cast<int>(-n)) : "ok", expect,
                       n == static_cast<ssize_t>(expect) ? " (content differs)" : "");
          _exit(1);
        }
      }
      for (int fd : fds) close(fd);
      _exit(0);
    }
    children.push_back(pid);
  }
  const auto t0 = Clock::now();
  for (size_t c = 0; c < children.size(); ++c) {
    int st = 0;
    pid_t got = 0;
    while ((got = waitpid(children[c], &st, WNOHANG)) == 0 && seconds_since(t0) < 240) sleep_ms(10);
    if (got == 0) {
      kill(children[c], SIGKILL);
      waitpid(children[c], &st, 0);
      ADD_FAILURE() << "reader " << c << " did not finish in 240 s";
      continue;
    }
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "reader " << c << ": " << describe_status(st);
  }
  EXPECT_TRUE(mounts_.back()->running()) << "mibz2fs ended during the reads";
  if (std::getenv("MIBZ2_FS_TEST_VERBOSE")) {
    mounts_.back()->stop();
    std::fprintf(stderr, "%s", slurp(mounts_.back()->log()).c_str());
  }
}

// ---- changes under the mount, damage --------------------------------------------------------

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
    // open (size, mtime, inode), which re-indexes and drops the kernel's cached size and pages.
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
    // Noticed at the next open, as for compressed files: then the cached pages and size go.
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
    bz2::ByteBuffer out;
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
    const ssize_t n = pread_full(fd, buf.data(), len, static_cast<off_t>(off));
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
  // The last whole page before the damaged block, and the first whole page after it (the kernel
  // reads whole pages, so a page shared with the damaged block cannot be read).
  expect_read(bad_start / page * page - page, page, "page just before");
  expect_read((bad_end + page - 1) / page * page, page, "page just after");
  expect_eio(bad_start - 10, 100, "range starting before it");
  close(fd);
  const ReadAll whole = read_all(p);
  EXPECT_EQ(whole.error, EIO);
  EXPECT_LE(whole.data.size(), bad_start);

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

// ---- options, life cycle ---------------------------------------------------------------------

struct BadRun {
  int status;
  std::string output;  // standard output and error
};

// Runs mibz2fs (not in the foreground: an error must come before it daemonizes) with a time limit.
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

TEST_F(FsMountTest, BadOptionsAndPathsGiveOneLineAndNoMount) {
  const stdfs::path src = tree_->src();
  const stdfs::path file = tree_->src() / "plain.txt";
  const stdfs::path missing = work_->path() / "missing";
  const std::string idx = "index_dir=" + idx_.string();
  struct Case {
    const char* what;
    std::vector<std::string> args;
  };
  const std::vector<Case> cases = {
      {"-o threads=0", {"-o", "threads=0", src, mnt_}},
      {"-o threads=abc", {"-o", "threads=abc", src, mnt_}},
      {"-o threads=100000", {"-o", "threads=100000", src, mnt_}},
      {"-o cache_size=abc", {"-o", "cache_size=abc", src, mnt_}},
      {"-o cache_size=-5M", {"-o", "cache_size=-5M", src, mnt_}},
      {"-o log_level=loud", {"-o", "log_level=loud", src, mnt_}},
      {"-o nonsense_option", {"-o", "nonsense_option", src, mnt_}},
      {"-o threads=2,nonsense_option", {"-o", "threads=2,nonsense_option", src, mnt_}},
      {"--nonsense", {"--nonsense", src, mnt_}},
      {"missing SOURCE", {"-o", idx, missing, mnt_}},
      {"SOURCE is a file", {"-o", idx, file, mnt_}},
      {"missing MOUNTPOINT", {"-o", idx, src, missing}},
      {"MOUNTPOINT is a file", {"-o", idx, src, file}},
      {"no MOUNTPOINT argument", {"-o", idx, src}},
      {"no arguments", {}},
      {"three arguments", {src, mnt_, missing}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const BadRun r = run_mibz2fs(c.args);
    EXPECT_NE(r.status, 0);
    EXPECT_NE(r.status, 124) << "timed out";
    EXPECT_FALSE(r.output.empty());
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << "output:\n" << r.output;
    EXPECT_EQ(r.output.back(), '\n');
    EXPECT_FALSE(is_mounted(mnt_));
    if (is_mounted(mnt_)) lazy_unmount(mnt_);
  }
  EXPECT_TRUE(processes_mentioning(mnt_.string()).empty());

  // A mount point that a first mibz2fs already uses.
  MOUNT_OR_RETURN(mount_tree());
  const BadRun r = run_mibz2fs({"-o", idx, src, mnt_});
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << "output:\n" << r.output;
  EXPECT_NE(r.output.find("already mounted"), std::string::npos) << r.output;
  const auto points = mount_points();
  EXPECT_EQ(std::count(points.begin(), points.end(), mnt_.string()), 1) << "a second mount was stacked";
  EXPECT_EQ(processes_mentioning(mnt_.string()).size(), 1u);
  EXPECT_TRUE(same_bytes(read_all(mnt_ / "single.txt").data, tree_->at("single.txt").content));
  // Help and version are not errors.
  EXPECT_EQ(run_mibz2fs({"--help"}).status, 0);
  const BadRun v = run_mibz2fs({"-V"});
  EXPECT_EQ(v.status, 0);
  EXPECT_NE(v.output.find("mibz2fs"), std::string::npos);
}

enum class Ending { kSigterm, kSigint, kSighup, kFusermount };

class FsEndingTest : public FsMountTest, public ::testing::WithParamInterface<Ending> {};

TEST_P(FsEndingTest, LeavesNoMountAndNoProcessAndExitsZero) {
  Mibz2fs* m = mount_tree();
  MOUNT_OR_RETURN(m);
  // Some work first: files open, blocks cached, a read-ahead under way.
  const int fd = open((mnt_ / "multi.bin").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::vector<uint8_t> buf(1 << 16);
  ASSERT_EQ(pread_full(fd, buf.data(), buf.size(), 0), static_cast<ssize_t>(buf.size()));
  close(fd);
  ASSERT_EQ(read_all(mnt_ / "single.txt").error, 0);

  switch (GetParam()) {
    case Ending::kSigterm: kill(m->pid(), SIGTERM); break;
    case Ending::kSigint: kill(m->pid(), SIGINT); break;
    case Ending::kSighup: kill(m->pid(), SIGHUP); break;
    case Ending::kFusermount:
      EXPECT_EQ(run_command("fusermount3 -u " + shell_quote(mnt_.string()) + " 2>&1").status, 0);
      break;
  }
  const std::optional<int> st = m->wait_exit(15);
  ASSERT_TRUE(st.has_value()) << "mibz2fs still running 15 s later; log:\n" << slurp(m->log());
  EXPECT_TRUE(WIFEXITED(*st) && WEXITSTATUS(*st) == 0) << describe_status(*st) << "; log:\n" << slurp(m->log());
  EXPECT_FALSE(is_mounted(mnt_));
  EXPECT_TRUE(processes_mentioning(mnt_.string()).empty());
  EXPECT_NE(slurp(m->log()).find("unmounted"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Endings, FsEndingTest,
                         ::testing::Values(Ending::kSigterm, Ending::kSigint, Ending::kSighup, Ending::kFusermount),
                         [](const auto& info) {
                           switch (info.param) {
                             case Ending::kSigterm: return std::string("Sigterm");
                             case Ending::kSigint: return std::string("Sigint");
                             case Ending::kSighup: return std::string("Sighup");
                             default: return std::string("Fusermount");
                           }
                         });

// Without -f: the parent returns 0 once mounted, the daemon lives on and ends on SIGTERM.
TEST_F(FsMountTest, DaemonizedMountEndsOnSigterm) {
  const BadRun r = run_mibz2fs({"-o", "index_dir=" + idx_.string(), tree_->src(), mnt_});
  ASSERT_EQ(r.status, 0) << r.output;
  ASSERT_TRUE(is_mounted(mnt_)) << "mounted when the parent returned";
  std::vector<pid_t> daemons = processes_mentioning(mnt_.string());
  ASSERT_EQ(daemons.size(), 1u);
  EXPECT_TRUE(same_bytes(read_all(mnt_ / "multistream.txt").data, tree_->at("multistream.txt").content));
  kill(daemons[0], SIGTERM);
  const auto t0 = Clock::now();
  while ((is_mounted(mnt_) || !processes_mentioning(mnt_.string()).empty()) && seconds_since(t0) < 15) sleep_ms(10);
  EXPECT_FALSE(is_mounted(mnt_));
  EXPECT_TRUE(processes_mentioning(mnt_.string()).empty());
  if (is_mounted(mnt_)) lazy_unmount(mnt_);
  for (pid_t p : processes_mentioning(mnt_.string())) kill(p, SIGKILL);
}

size_t count_index_files(const stdfs::path& dir) {
  size_t n = 0;
  std::error_code ec;
  for (auto it = stdfs::recursive_directory_iterator(dir, ec); !ec && it != stdfs::recursive_directory_iterator();
       it.increment(ec))
    if (it->path().extension() == ".idx") ++n;
  return n;
}

TEST_F(FsMountTest, WaitIndexMountsOnlyOnceEverythingIsIndexed) {
  size_t decompressed = 0;
  for (const auto& [rel, s] : tree_->shown()) decompressed += s.decompressed;
  Mibz2fs* m = mount_tree({"-o", "wait_index"});
  MOUNT_OR_RETURN(m);
  // Before anything looks at the mount: every index is stored and reported ready.
  EXPECT_EQ(count_index_files(idx_), decompressed);
  for (const auto& [rel, s] : tree_->shown()) {
    if (!s.decompressed) continue;
    SCOPED_TRACE(rel);
    EXPECT_EQ(get_xattr(mnt_ / rel, kXattrs[2]).value, "ready");
  }
  // The progress lines come before the mount.
  const std::string log = slurp(m->log());
  const size_t mounted = log.find("mounted ");
  const size_t last_progress = log.rfind("indexed ");
  ASSERT_NE(mounted, std::string::npos) << log;
  ASSERT_NE(last_progress, std::string::npos) << log;
  EXPECT_LT(last_progress, mounted) << log;
  EXPECT_NE(log.find("[" + std::to_string(decompressed) + "/" + std::to_string(decompressed) + "]"), std::string::npos)
      << log;
}

TEST_F(FsMountTest, SecondMountFindsItsIndexesCurrent) {
  std::vector<std::string> files;
  for (const auto& [rel, s] : tree_->shown())
    if (s.decompressed) files.push_back(rel);
  {
    Mibz2fs* first = mount_tree();
    MOUNT_OR_RETURN(first);
    for (const auto& rel : files) EXPECT_EQ(get_xattr(mnt_ / rel, kXattrs[2]).value, "ready") << rel;
    EXPECT_NE(slurp(first->log()).find("indexing"), std::string::npos);
    EXPECT_TRUE(first->stop());
  }
  EXPECT_EQ(count_index_files(idx_), files.size());
  const auto t0 = Clock::now();
  Mibz2fs* second = mount_tree();
  MOUNT_OR_RETURN(second);
  for (const auto& rel : files) {
    EXPECT_EQ(stdfs::file_size(mnt_ / rel), tree_->at(rel).content.size()) << rel;
    EXPECT_EQ(get_xattr(mnt_ / rel, kXattrs[2]).value, "ready") << rel;
  }
  const double took = seconds_since(t0);
  EXPECT_LT(took, 5.0) << "mount and stat of every file with current indexes";
  const std::string log = slurp(second->log());
  for (const char* word : {"indexing", "indexed", "rebuilding", "not used"})
    EXPECT_EQ(log.find(word), std::string::npos) << "the second mount's log mentions '" << word << "':\n" << log;
  EXPECT_TRUE(same_bytes(read_all(mnt_ / "multi.bin").data, tree_->at("multi.bin").content));
}

}  // namespace
}  // namespace mibz2::test
