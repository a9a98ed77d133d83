#include "io/source_root.h"

#include "io/descriptor_limit.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <vector>

#include "io/fd_io.h"

namespace mibz2::io {
namespace {

// Every open under SOURCE: no blocking on a fifo, no controlling terminal, no leak into children.
constexpr int kSafeFlags = O_NONBLOCK | O_NOCTTY | O_CLOEXEC;

// Whether openat2 exists here (Linux 5.6+); learnt at the first call.
std::atomic<int> openat2_state{0};  // 0 unknown, 1 yes, -1 no

int sys_openat2(int dirfd, const char* path, int flags) {
  open_how how{};
  how.flags = static_cast<uint64_t>(flags);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  for (;;) {
    const long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
    if (fd >= 0) return static_cast<int>(fd);
    if (errno == EINTR) continue;
    // EAGAIN: a rename raced the lookup (the kernel asks us to retry).
    if (errno == EAGAIN) continue;
    return -note_open_errno(errno);
  }
}

// Splits "a/b/c" into its components; false for an empty component, "." or "..".
bool components(const std::string& rel, std::vector<std::string>* out) {
  size_t start = 0;
  while (start <= rel.size()) {
    const size_t slash = rel.find('/', start);
    const size_t end = slash == std::string::npos ? rel.size() : slash;
    const std::string c = rel.substr(start, end - start);
    if (c.empty() || c == "." || c == "..") return false;
    out->push_back(c);
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return true;
}

// The same without openat2: one component at a time, each opened O_NOFOLLOW, the directories on
// the way as O_PATH descriptors.
int walk_open(int root, const std::string& rel, int flags) {
  std::vector<std::string> parts;
  if (!components(rel, &parts)) return -EINVAL;
  int dir = root;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    const int next = openat(dir, parts[i].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    const int err = note_open_errno(errno);
    if (dir != root) close(dir);
    if (next < 0) return -err;
    dir = next;
  }
  const int fd = openat(dir, parts.back().c_str(), flags | O_NOFOLLOW);
  const int err = note_open_errno(errno);
  if (dir != root) close(dir);
  return fd >= 0 ? fd : -err;
}

}  // namespace

int LocalSourceRoot::open(const std::string& root) {
  path_ = root;
  fd_ = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | kSafeFlags);
  return fd_ >= 0 ? 0 : note_open_errno(errno);
}

LocalSourceRoot::~LocalSourceRoot() {
  if (fd_ >= 0) close(fd_);
}

std::string LocalSourceRoot::absolute(const std::string& rel) const {
  if (rel.empty()) return path_;
  return path_ == "/" ? "/" + rel : path_ + "/" + rel;
}

std::optional<std::string> LocalSourceRoot::relative(const std::string& abs) const {
  if (abs == path_) return std::string();
  const std::string prefix = path_ == "/" ? "/" : path_ + "/";
  if (abs.size() <= prefix.size() || abs.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  return abs.substr(prefix.size());
}

int LocalSourceRoot::open_beneath(const std::string& rel, int flags) const {
  if (rel.empty()) {
    const int fd = openat(fd_, ".", flags);
    return fd >= 0 ? fd : -note_open_errno(errno);
  }
  std::vector<std::string> parts;
  if (!components(rel, &parts)) return -EINVAL;
  if (openat2_state.load(std::memory_order_relaxed) >= 0) {
    const int fd = sys_openat2(fd_, rel.c_str(), flags);
    if (fd != -ENOSYS) {
      openat2_state.store(1, std::memory_order_relaxed);
      return fd;
    }
    openat2_state.store(-1, std::memory_order_relaxed);
  }
  return walk_open(fd_, rel, flags);
}

int LocalSourceRoot::open(const std::string& rel, Kind kind, struct stat* st) const {
  const int fd = open_beneath(rel, O_RDONLY | kSafeFlags | (kind == Kind::kDirectory ? O_DIRECTORY : 0));
  if (fd < 0) return fd;
  int err = 0;
  if (fstat(fd, st) != 0) err = errno;
  else if (kind == Kind::kRegular && !S_ISREG(st->st_mode)) err = S_ISDIR(st->st_mode) ? EISDIR : EINVAL;
  else if (kind == Kind::kDirectory && !S_ISDIR(st->st_mode)) err = ENOTDIR;
  if (err) {
    close(fd);
    return -err;
  }
  return fd;
}

int LocalSourceRoot::open_parent(const std::string& rel, std::string* name) const {
  const size_t slash = rel.rfind('/');
  *name = slash == std::string::npos ? rel : rel.substr(slash + 1);
  if (name->empty() || *name == "." || *name == "..") return -EINVAL;
  return open_beneath(slash == std::string::npos ? std::string() : rel.substr(0, slash),
                      O_PATH | O_DIRECTORY | O_CLOEXEC);
}

int LocalSourceRoot::open_in_dir(const std::string& rel, struct stat* st, struct stat* dir_st) const {
  std::string name;
  const int dir = open_parent(rel, &name);
  if (dir < 0) return dir;
  const int fd = open_regular_in(dir, name.c_str(), st, dir_st);
  close(dir);
  return fd;
}

int LocalSourceRoot::lstat(const std::string& rel, struct stat* st) const {
  if (rel.empty()) return fstat(fd_, st) == 0 ? 0 : errno;
  std::string name;
  const int dir = open_parent(rel, &name);
  if (dir < 0) return -dir;
  const int rc = fstatat(dir, name.c_str(), st, AT_SYMLINK_NOFOLLOW);
  const int err = errno;
  close(dir);
  return rc == 0 ? 0 : err;
}

int LocalSourceRoot::list(const std::string& rel, std::vector<Entry>* out) const {
  struct stat dst;
  const int fd = open(rel, Kind::kDirectory, &dst);
  if (fd < 0) return -fd;
  DIR* d = fdopendir(fd);
  if (!d) {
    const int err = errno;
    close(fd);
    return err;
  }
  const int dfd = dirfd(d);
  while (dirent* de = readdir(d)) {
    if (!std::strcmp(de->d_name, ".") || !std::strcmp(de->d_name, "..")) continue;
    Entry e{de->d_name, {}, std::nullopt};
    if (fstatat(dfd, de->d_name, &e.st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // vanished meanwhile
    out->push_back(std::move(e));
  }
  closedir(d);
  return 0;
}

int LocalSourceRoot::readlink(const std::string& rel, std::string* target) const {
  std::string name;
  const int dir = open_parent(rel, &name);
  if (dir < 0) return -dir;
  char buf[PATH_MAX + 1];
  const ssize_t n = readlinkat(dir, name.c_str(), buf, PATH_MAX);
  const int err = errno;
  close(dir);
  if (n < 0) return err;
  target->assign(buf, static_cast<size_t>(n));
  return 0;
}

int LocalSourceRoot::statvfs(struct statvfs* out) const { return fstatvfs(fd_, out) == 0 ? 0 : errno; }

void LocalSourceRoot::use_component_walk_for_testing(bool yes) { openat2_state.store(yes ? -1 : 0); }

std::optional<std::string> lexically_beneath(const std::string& link_rel, const std::string& target) {
  if (target.empty() || target[0] == '/') return std::nullopt;
  std::vector<std::string> stack;
  const size_t slash = link_rel.rfind('/');
  if (slash != std::string::npos) {
    // The link's own directory: components made by the mount, never "." or "..".
    if (!components(link_rel.substr(0, slash), &stack)) return std::nullopt;
  }
  size_t start = 0;
  while (start <= target.size()) {
    const size_t s = target.find('/', start);
    const size_t end = s == std::string::npos ? target.size() : s;
    const std::string c = target.substr(start, end - start);
    if (c == "..") {
      if (stack.empty()) return std::nullopt;  // would leave SOURCE
      stack.pop_back();
    } else if (!c.empty() && c != ".") {
      stack.push_back(c);
    }
    if (s == std::string::npos) break;
    start = s + 1;
  }
  if (stack.empty()) return std::nullopt;
  std::string out = stack[0];
  for (size_t i = 1; i < stack.size(); ++i) out += "/" + stack[i];
  return out;
}

std::string join_rel(const std::string& dir, const std::string& name) { return dir.empty() ? name : dir + "/" + name; }

}  // namespace mibz2::io
