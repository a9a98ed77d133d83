#include "fs/beneath_access.h"

#include <unistd.h>

#include <cerrno>

#include "catalog/catalog.h"
#include "index/index_store.h"

namespace mibz2::fs {

base::Result<io::UniqueFd> BeneathAccess::open(const catalog::CatalogFile& file, struct stat* st) const {
  const auto rel = root_.relative(file.path());
  if (!rel) return catalog::source_opened(-ENOENT);
  const int fd = root_.open(*rel, io::SourceRoot::Kind::kRegular, st);
  if (fd >= 0 && (static_cast<uint64_t>(st->st_dev) != file.device() || static_cast<uint64_t>(st->st_ino) != file.inode())) {
    close(fd);
    return catalog::source_opened(-ESTALE);
  }
  return catalog::source_opened(fd);
}

base::Result<io::UniqueFd> BeneathAccess::open_sidecar(const catalog::CatalogFile& file, struct stat* dir_st) const {
  const auto rel = root_.relative(file.path());
  if (!rel) return catalog::sidecar_opened(-ENOENT, file);
  struct stat st;
  return catalog::sidecar_opened(root_.open_in_dir(*rel + index::kSidecarSuffix, &st, dir_st), file);
}

base::Status BeneathAccess::stat(const catalog::CatalogFile& file, struct stat* st) const {
  const auto rel = root_.relative(file.path());
  return catalog::source_stated(rel ? root_.lstat(*rel, st) : ENOENT);
}

}  // namespace mibz2::fs
