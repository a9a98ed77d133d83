#include "catalog/source_access.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "catalog/catalog_file.h"
#include "index/index_store.h"
#include "io/fd_io.h"

namespace mibz2::catalog {

base::Result<io::UniqueFd> source_opened(int fd_or_errno) {
  if (fd_or_errno >= 0) return io::UniqueFd(fd_or_errno);
  return base::Status::os_error(-fd_or_errno, "cannot open: " + io::errno_words(-fd_or_errno));
}

base::Result<io::UniqueFd> sidecar_opened(int fd_or_errno, const CatalogFile& file) {
  if (fd_or_errno >= 0) return io::UniqueFd(fd_or_errno);
  const int e = fd_or_errno == -ENAMETOOLONG ? ENOENT : -fd_or_errno;
  return base::Status::os_error(e, "cannot open " + file.path() + index::kSidecarSuffix + ": " + std::strerror(e));
}

base::Status source_stated(int errno_value) {
  if (errno_value == 0) return {};
  return base::Status::os_error(errno_value, "cannot stat: " + io::errno_words(errno_value));
}

base::Result<OpenedSource> open_source(const SourceAccess& access, const CatalogFile& file) {
  OpenedSource opened;
  base::Result<std::unique_ptr<io::Source>> source = access.open_source(file);
  MIBZ2_FORWARD_IF_ERROR(source);
  opened.source = std::move(source).value();
  base::Result<index::SourceIdentity> id = index::identify_source(*opened.source);
  MIBZ2_FORWARD_IF_ERROR(id);  // its words say what failed, and where
  opened.id = *id;
  return opened;
}

base::Result<std::unique_ptr<io::Source>> SourceAccess::open_source(const CatalogFile& file) const {
  struct stat st;
  base::Result<io::UniqueFd> fd = open(file, &st);
  MIBZ2_FORWARD_IF_ERROR(fd);
  const io::SourceStamp stamp = io::SourceStamp::of(st);
  std::unique_ptr<io::SourceBytes> read = bytes(fd->get(), stamp.size);
  return std::unique_ptr<io::Source>(new io::FileSource(std::move(fd).value(), stamp, std::move(read)));
}

base::Result<io::SourceStamp> SourceAccess::stamp(const CatalogFile& file) const {
  struct stat st;
  MIBZ2_FORWARD_IF_ERROR(stat(file, &st));
  return io::SourceStamp::of(st);
}

base::Result<index::LoadedIndex> SourceAccess::load_sidecar(const CatalogFile& file, const index::SourceIdentity& id) const {
  struct stat dir;
  const base::Result<io::UniqueFd> fd = open_sidecar(file, &dir);
  MIBZ2_FORWARD_IF_ERROR(fd);
  return index::read_index_file(fd->get(), dir, file.path() + index::kSidecarSuffix, id);
}

std::string SourceAccess::sidecar_name(const CatalogFile& file) const { return file.name() + index::kSidecarSuffix; }

namespace {
base::Status not_a_local_file() { return base::Status::error(ENOTSUP, "not a local file"); }
}  // namespace

base::Result<io::UniqueFd> SourceAccess::open(const CatalogFile&, struct stat*) const { return not_a_local_file(); }
base::Status SourceAccess::stat(const CatalogFile&, struct stat*) const { return not_a_local_file(); }
base::Result<io::UniqueFd> SourceAccess::open_sidecar(const CatalogFile&, struct stat*) const {
  return not_a_local_file();
}

std::unique_ptr<io::SourceBytes> SourceAccess::bytes(int fd, uint64_t size) const {
  return std::make_unique<io::FdBytes>(fd, size);
}

base::Result<io::UniqueFd> PlainSourceAccess::open(const CatalogFile& file, struct stat* st) const {
  return source_opened(io::open_regular(file.path().c_str(), st));
}

base::Result<io::UniqueFd> PlainSourceAccess::open_sidecar(const CatalogFile& file, struct stat* dir_st) const {
  const std::string path = file.path() + index::kSidecarSuffix;
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const io::UniqueFd dfd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!dfd.valid()) return sidecar_opened(-errno, file);
  struct stat st;
  return sidecar_opened(
      io::open_regular_in(dfd.get(), path.c_str() + (slash == std::string::npos ? 0 : slash + 1), &st, dir_st), file);
}

base::Status PlainSourceAccess::stat(const CatalogFile& file, struct stat* st) const {
  return source_stated(::stat(file.path().c_str(), st) == 0 ? 0 : errno);
}

}  // namespace mibz2::catalog
