#include "fs/source_directory.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "bz2/stream_parser.h"

namespace mibz2::fs {
namespace {

// True if the file starts with a bzip2 stream header ("BZh1".."BZh9").
bool starts_like_bzip2(int dirfd, const char* name) {
  const int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  uint8_t head[4];
  const ssize_t n = pread(fd, head, sizeof head, 0);
  close(fd);
  int level;
  return n == 4 && bz2::classify_stream_start({head, 4}, 0, &level) == bz2::StreamStart::kStream;
}

}  // namespace

std::string child_path(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
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
    if (e.type == SourceEntry::Type::kRegular && decompressed_name(e.name)) e.is_bzip2 = starts_like_bzip2(dfd, de->d_name);
    out->push_back(std::move(e));
  }
  closedir(d);
  return 0;
}

}  // namespace mibz2::fs
