// How the catalog reaches the sources of a mount: beneath SOURCE's descriptor (io::SourceRoot), and
// only the file a node stands for (its device and inode): a path that holds another file now is
// ESTALE, so that the kernel looks the name up again.
#pragma once

#include "catalog/source_access.h"
#include "io/source_root.h"

namespace mibz2::fs {

class BeneathAccess final : public catalog::SourceAccess {
 public:
  explicit BeneathAccess(const io::SourceRoot& root) : root_(root) {}
  base::Result<io::UniqueFd> open(const catalog::CatalogFile& file, struct stat* st) const override;
  base::Status stat(const catalog::CatalogFile& file, struct stat* st) const override;
  // The sidecar beneath SOURCE like any other file there (no symlink, a regular file only).
  base::Result<io::UniqueFd> open_sidecar(const catalog::CatalogFile& file, struct stat* dir_st) const override;

 private:
  const io::SourceRoot& root_;
};

}  // namespace mibz2::fs
