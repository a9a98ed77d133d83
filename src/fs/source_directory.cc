#include "fs/source_directory.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "index/bzip2_head.h"
#include "io/descriptor_limit.h"
#include "io/source_bytes.h"

namespace mibz2::fs {
namespace {

// Whether the head of an open file says bzip2. A head that cannot be read says nothing, and a read
// error must not change what the mount shows (the file under its own name, with its compressed
// size): the name, which looks compressed, decides, and the listing is not kept (*sure false), so
// the next one looks again. The catalog then answers EIO for the file until it can be read.
bool head_is_bzip2(int fd, bool* sure) {
  const int yes = index::starts_like_bzip2(fd);
  if (yes < 0) *sure = false;
  return yes != 0;
}

// An entry of an open directory: never followed, never blocking, never a controlling terminal.
bool entry_is_bzip2(int dirfd, const char* name, bool* sure) {
  const int fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    io::note_open_errno(errno);
    return false;
  }
  struct stat st;
  const bool yes = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && head_is_bzip2(fd, sure);
  close(fd);
  return yes;
}

// A symlink is shown like the file it points to (decompressed) only when its target is relative
// and names a regular bzip2 file beneath SOURCE, reached without any further symlink.
bool link_leads_to_bzip2(const io::SourceRoot& root, int dirfd, const std::string& link, const char* name, bool* sure) {
  char buf[4096];
  const ssize_t n = readlinkat(dirfd, name, buf, sizeof buf);
  if (n <= 0 || static_cast<size_t>(n) == sizeof buf) return false;
  const auto target = io::lexically_beneath(link, std::string(buf, static_cast<size_t>(n)));
  if (!target) return false;
  struct stat st;
  const int fd = root.open(*target, io::SourceRoot::Kind::kRegular, &st);
  if (fd < 0) return false;
  const bool yes = head_is_bzip2(fd, sure);
  close(fd);
  return yes;
}

}  // namespace

int list_source_directory(const io::SourceRoot& root, const std::string& dir, std::vector<catalog::SourceEntry>* out,
                          bool* sure) {
  bool ignored;
  if (!sure) sure = &ignored;
  *sure = true;
  struct stat dst;
  const int fd = root.open(dir, io::SourceRoot::Kind::kDirectory, &dst);
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
    struct stat st;
    if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // vanished meanwhile
    catalog::SourceEntry e{de->d_name, catalog::SourceEntry::Type::kOther, false, io::SourceStamp::of(st)};
    if (S_ISDIR(st.st_mode)) e.type = catalog::SourceEntry::Type::kDirectory;
    else if (S_ISLNK(st.st_mode)) e.type = catalog::SourceEntry::Type::kSymlink;
    else if (S_ISREG(st.st_mode)) e.type = catalog::SourceEntry::Type::kRegular;
    else continue;  // devices, fifos and sockets are not mirrored
    if (e.type == catalog::SourceEntry::Type::kRegular && catalog::decompressed_name(e.name))
      e.is_bzip2 = entry_is_bzip2(dfd, de->d_name, sure);
    else if (e.type == catalog::SourceEntry::Type::kSymlink && catalog::decompressed_name(e.name))
      e.is_bzip2 = link_leads_to_bzip2(root, dfd, io::join_rel(dir, e.name), de->d_name, sure);
    out->push_back(std::move(e));
  }
  closedir(d);
  return 0;
}

std::string shown_link_target(const io::SourceRoot& root, const std::string& link, const std::string& target) {
  const auto resolved = io::lexically_beneath(link, target);
  const size_t slash = target.rfind('/');
  if (!resolved || slash + 1 == target.size()) return target;
  // How the target's own directory is shown: the same rules as any listing of it.
  const size_t rslash = resolved->rfind('/');
  const std::string dir = rslash == std::string::npos ? std::string() : resolved->substr(0, rslash);
  const std::string name = rslash == std::string::npos ? *resolved : resolved->substr(rslash + 1);
  std::vector<catalog::SourceEntry> entries;
  if (list_source_directory(root, dir, &entries) != 0) return target;
  std::vector<catalog::NamingNote> notes;
  for (const catalog::ShownEntry& e : catalog::map_directory(std::move(entries), &notes)) {
    if (e.source_name != name) continue;
    if (!e.decompressed || e.type != catalog::SourceEntry::Type::kRegular) return target;
    return target.substr(0, slash == std::string::npos ? 0 : slash + 1) + e.name;
  }
  return target;
}

}  // namespace mibz2::fs
