#include "engine/source_access.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "engine/catalog.h"
#include "index/index_store.h"
#include "io/fd_io.h"

namespace mibz2::engine {

int sidecar_open_result(int fd_or_errno) { return fd_or_errno == -ENAMETOOLONG ? -ENOENT : fd_or_errno; }

int PlainSourceAccess::open(const CatalogFile& file, struct stat* st) const {
  return io::open_regular(file.path().c_str(), st);
}

int PlainSourceAccess::open_sidecar(const CatalogFile& file) const {
  struct stat st;
  return sidecar_open_result(io::open_regular((file.path() + index::kSidecarSuffix).c_str(), &st));
}

int PlainSourceAccess::stat(const CatalogFile& file, struct stat* st) const {
  return ::stat(file.path().c_str(), st) == 0 ? 0 : errno;
}

}  // namespace mibz2::engine
