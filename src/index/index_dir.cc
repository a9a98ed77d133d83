#include "index/index_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace mibz2::index {

DefaultIndexDir choose_default_index_dir(const IndexDirEnvironment& env) {
  if (env.xdg_cache_home && env.xdg_cache_home[0] == '/') return {std::string(env.xdg_cache_home) + "/mibz2fs", false};
  if (env.root) return {kSystemIndexDir, true};
  if (env.home && *env.home) return {std::string(env.home) + "/.cache/mibz2fs", false};
  return {};
}

DefaultIndexDir default_index_dir_of_process() {
  return choose_default_index_dir({std::getenv("XDG_CACHE_HOME"), std::getenv("HOME"), geteuid() == 0});
}

std::string named_index_dir(const std::string& given) {
  if (given.empty() || given[0] == '/') return given;
  std::error_code ec;
  const std::filesystem::path abs = std::filesystem::absolute(given, ec);
  return ec ? given : abs.string();
}

std::string ensure_private_dir(const std::string& dir, uid_t owner) {
  // mkdir never follows a symlink in the last component (EEXIST): the checks below see it.
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return "cannot create " + dir + ": " + std::strerror(errno);
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    struct stat st;
    if (lstat(dir.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) return dir + " is a symlink: refused as index directory";
    if (e == ENOTDIR) return dir + " is not a directory";
    return "cannot open " + dir + ": " + std::strerror(e);
  }
  struct stat st;
  const int rc = fstat(fd, &st);
  close(fd);
  if (rc != 0) return "cannot stat " + dir + ": " + std::strerror(errno);
  if (st.st_uid != owner)
    return dir + " is owned by uid " + std::to_string(st.st_uid) + ", not " + std::to_string(owner) +
           ": refused as index directory";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return dir + " is writable by others (mode " + mode + "): refused as index directory";
  }
  return {};
}

}  // namespace mibz2::index
