// The access the front ends use for names a user wrote: an http://, https:// or s3:// URL is a
// remote object (remote_source_access.h), anything else a local path (the local access given).
// Each of the catalog's three steps goes to one of them by the file's name, so a front door holds
// local files and remote objects side by side.
#pragma once

#include "catalog/source_access.h"

namespace mibz2::catalog {

class SourceAccessByName final : public SourceAccess {
 public:
  // Both must outlive this access.
  SourceAccessByName(const SourceAccess& local, const SourceAccess& remote) : local_(local), remote_(remote) {}

  base::Result<std::unique_ptr<io::Source>> open_source(const CatalogFile& file) const override {
    return of(file).open_source(file);
  }
  base::Result<io::SourceStamp> stamp(const CatalogFile& file) const override { return of(file).stamp(file); }
  base::Result<index::LoadedIndex> load_sidecar(const CatalogFile& file, const index::SourceIdentity& id) const override {
    return of(file).load_sidecar(file, id);
  }
  std::string sidecar_name(const CatalogFile& file) const override { return of(file).sidecar_name(file); }

 private:
  const SourceAccess& of(const CatalogFile& file) const;

  const SourceAccess& local_;
  const SourceAccess& remote_;
};

}  // namespace mibz2::catalog
