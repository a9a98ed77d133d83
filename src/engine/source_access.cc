#include "engine/source_access.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "engine/catalog.h"
#include "index/index_store.h"

namespace mibz2::engine {

namespace {

int open_regular(const std::string& path, struct stat* st) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return -errno;
  int err = 0;
  if (fstat(fd, st) != 0) err = errno;
  else if (!S_ISREG(st->st_mode)) err = S_ISDIR(st->st_mode) ? EISDIR : EINVAL;
  if (err) {
    close(fd);
    return -err;
  }
  return fd;
}

}  // namespace

int PlainSourceAccess::open(const CatalogFile& file, struct stat* st) const { return open_regular(file.path(), st); }

int PlainSourceAccess::open_sidecar(const CatalogFile& file) const {
  struct stat st;
  return open_regular(file.path() + index::kSidecarSuffix, &st);
}

int PlainSourceAccess::stat(const CatalogFile& file, struct stat* st) const {
  return ::stat(file.path().c_str(), st) == 0 ? 0 : errno;
}

}  // namespace mibz2::engine
