#include "engine/source_access.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "engine/catalog.h"
#include "index/index_store.h"
#include "io/fd_io.h"

namespace mibz2::engine {

std::unique_ptr<index::SourceBytes> SourceAccess::bytes(int fd, uint64_t size) const {
  return std::make_unique<index::FdBytes>(fd, size);
}

int PlainSourceAccess::open(const CatalogFile& file, struct stat* st) const {
  return io::open_regular(file.path().c_str(), st);
}

int PlainSourceAccess::open_sidecar(const CatalogFile& file) const {
  struct stat st;
  return io::open_regular((file.path() + index::kSidecarSuffix).c_str(), &st);
}

int PlainSourceAccess::stat(const CatalogFile& file, struct stat* st) const {
  return ::stat(file.path().c_str(), st) == 0 ? 0 : errno;
}

}  // namespace mibz2::engine
