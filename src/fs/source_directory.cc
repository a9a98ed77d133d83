#include "fs/source_directory.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/catalog.h"

namespace mibz2::fs {
namespace {

// True if the entry is (or, with follow, leads to) a regular file whose content the catalog can
// show decompressed.
bool starts_like_bzip2(int dirfd, const char* name, bool follow) {
  const int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW));
  if (fd < 0) return false;
  struct stat st;
  const bool yes = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && engine::Catalog::starts_like_bzip2(fd);
  close(fd);
  return yes;
}

// A symlink is shown like the file it points to (decompressed) only when its target is relative,
// so that it leads somewhere inside the mount too.
bool relative_link(int dirfd, const char* name) {
  char target[2];
  const ssize_t n = readlinkat(dirfd, name, target, sizeof target);
  return n > 0 && target[0] != '/';
}

}  // namespace

std::string child_path(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

std::string shown_link_target(const std::string& link_path, const std::string& target) {
  const size_t slash = target.rfind('/');
  const std::string last = slash == std::string::npos ? target : target.substr(slash + 1);
  const auto shown = decompressed_name(last);
  if (!shown) return target;
  const std::string rewritten = target.substr(0, slash == std::string::npos ? 0 : slash + 1) + *shown;
  // The target keeps its compressed name in the mount when a real entry has the shorter one.
  const size_t link_slash = link_path.rfind('/');
  const std::string base = link_path.substr(0, link_slash == std::string::npos ? 0 : link_slash + 1);
  struct stat st;
  if (lstat((base + rewritten).c_str(), &st) == 0) return target;
  return rewritten;
}

int list_source_directory(const std::string& dir, std::vector<SourceEntry>* out) {
  DIR* d = opendir(dir.c_str());
  if (!d) return errno;
  const int dfd = dirfd(d);
  while (dirent* de = readdir(d)) {
    if (!std::strcmp(de->d_name, ".") || !std::strcmp(de->d_name, "..")) continue;
    struct stat st;
    if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // vanished meanwhile
    SourceEntry e{de->d_name, SourceEntry::Type::kOther, false};
    if (S_ISDIR(st.st_mode)) e.type = SourceEntry::Type::kDirectory;
    else if (S_ISLNK(st.st_mode)) e.type = SourceEntry::Type::kSymlink;
    else if (S_ISREG(st.st_mode)) e.type = SourceEntry::Type::kRegular;
    else continue;  // devices, fifos and sockets are not mirrored
    if (e.type == SourceEntry::Type::kRegular && decompressed_name(e.name))
      e.is_bzip2 = starts_like_bzip2(dfd, de->d_name, false);
    else if (e.type == SourceEntry::Type::kSymlink && decompressed_name(e.name))
      e.is_bzip2 = relative_link(dfd, de->d_name) && starts_like_bzip2(dfd, de->d_name, true);
    out->push_back(std::move(e));
  }
  closedir(d);
  return 0;
}

}  // namespace mibz2::fs
