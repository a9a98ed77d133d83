// An index the user named for a file (mibz2's --index, mibz2fs's -o index=): a path or a URL,
// given instead of the file's sidecar. It is read as a sidecar is (every field checked, the
// source's identity compared, and a sample of its blocks decoded before it is believed:
// index/FORMAT.md), without the sidecar's trust rule for a local file (who can write where it
// lies): the user chose it, as they chose the file. An index that does not describe the file is
// said once and not used; the file is then indexed as if there were none.
#pragma once

#include <string>

#include "catalog/remote_source_access.h"
#include "catalog/source_access.h"
#include "io/source_url.h"

namespace mibz2::catalog {

class NamedIndexAccess final : public SourceAccess {
 public:
  // Sources are reached through `inner`, an index named by URL through `remote` (both must
  // outlive this access); their index is `index`.
  NamedIndexAccess(const SourceAccess& inner, std::string index, const RemoteSourceAccess& remote)
      : inner_(inner), index_(std::move(index)), remote_(remote) {}

  base::Result<std::unique_ptr<io::Source>> open_source(const CatalogFile& file) const override {
    return inner_.open_source(file);
  }
  base::Result<io::SourceStamp> stamp(const CatalogFile& file) const override { return inner_.stamp(file); }
  base::Result<index::LoadedIndex> load_sidecar(const CatalogFile& file, const index::SourceIdentity& id) const override;
  std::string sidecar_name(const CatalogFile&) const override { return io::is_url(index_) ? io::redacted_url(index_) : index_; }

 private:
  base::Result<index::LoadedIndex> load(const index::SourceIdentity& id) const;

  const SourceAccess& inner_;
  const std::string index_;
  const RemoteSourceAccess& remote_;
};

}  // namespace mibz2::catalog
