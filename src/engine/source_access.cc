#include "engine/source_access.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "engine/catalog_file.h"
#include "index/index_store.h"
#include "io/fd_io.h"

namespace mibz2::engine {

int sidecar_open_result(int fd_or_errno) { return fd_or_errno == -ENAMETOOLONG ? -ENOENT : fd_or_errno; }

base::Result<OpenedSource> open_source(const SourceAccess& access, const CatalogFile& file) {
  struct stat st;
  OpenedSource opened;
  opened.fd.reset(access.open(file, &st));
  if (!opened.fd.valid()) {
    const int e = -opened.fd.release();
    return base::Status::os_error(e, "cannot open: " + index::errno_words(e));
  }
  base::Result<index::SourceIdentity> id = index::identify_source(opened.fd.get());
  MIBZ2_FORWARD_IF_ERROR(id);  // its words say what failed, and where
  opened.id = *id;
  return opened;
}

std::unique_ptr<index::SourceBytes> SourceAccess::bytes(int fd, uint64_t size) const {
  return std::make_unique<index::FdBytes>(fd, size);
}

int PlainSourceAccess::open(const CatalogFile& file, struct stat* st) const {
  return io::open_regular(file.path().c_str(), st);
}

int PlainSourceAccess::open_sidecar(const CatalogFile& file, struct stat* dir_st) const {
  const std::string path = file.path() + index::kSidecarSuffix;
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const int dfd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return -errno;
  struct stat st;
  const int fd = io::open_regular_in(dfd, path.c_str() + (slash == std::string::npos ? 0 : slash + 1), &st, dir_st);
  close(dfd);
  return sidecar_open_result(fd);
}

int PlainSourceAccess::stat(const CatalogFile& file, struct stat* st) const {
  return ::stat(file.path().c_str(), st) == 0 ? 0 : errno;
}

}  // namespace mibz2::engine
