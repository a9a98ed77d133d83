#include "engine/source_access.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "engine/catalog.h"

namespace mibz2::engine {

int PlainSourceAccess::open(const CatalogFile& file, struct stat* st) const {
  const int fd = ::open(file.path().c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
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

int PlainSourceAccess::stat(const CatalogFile& file, struct stat* st) const {
  return ::stat(file.path().c_str(), st) == 0 ? 0 : errno;
}

}  // namespace mibz2::engine
