// How the catalog reaches a remote object (an http://, https:// or s3:// URL as its file's path):
// the three things it ever does to a source (source_access.h), made of requests.
//   - open_source: the object's stat (HEAD, or a GET of a byte) and a RemoteSource over it
//     (io/remote_source.h), its reads by range;
//   - stamp: the object's stat again, as the stamp a RemoteSource opened now would have, so that
//     an object replaced on its server is seen as a file rewritten in place is;
//   - load_sidecar: the index published beside the object, URL + ".mibz2idx" (before the query of
//     an http(s) URL), fetched whole and read under the same checks as a local sidecar. It is as
//     trusted as the object itself (index/FORMAT.md, "Sidecar indexes"): whoever can replace one
//     can replace the other, and a sidecar is used only after a sample of its blocks decodes as
//     its records say. None (404, or 403: S3 answers that for a missing key to whoever may not list
//     the bucket) is ENOENT.
// The HTTP client (its connections and fetch threads) is made at the first request and shared by
// every object this access opens.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "catalog/source_access.h"
#include "io/http_client.h"
#include "io/remote_bytes.h"
#include "io/s3_settings.h"

namespace mibz2::catalog {

class RemoteSourceAccess final : public SourceAccess {
 public:
  // `s3`: settings that override the environment's for s3:// URLs (fsspec's storage options);
  // `bytes`: how each opened object is read (remote_bytes.h).
  explicit RemoteSourceAccess(io::S3Options s3 = {}, io::RemoteBytesOptions bytes = {});

  base::Result<std::unique_ptr<io::Source>> open_source(const CatalogFile& file) const override;
  base::Result<io::SourceStamp> stamp(const CatalogFile& file) const override;
  base::Result<index::LoadedIndex> load_sidecar(const CatalogFile& file, const index::SourceIdentity& id) const override;
  std::string sidecar_name(const CatalogFile& file) const override;
  // The index at `url` (a sidecar's, or one a user named), read as load_sidecar reads one.
  base::Result<index::LoadedIndex> load_index_at(const std::string& url, const index::SourceIdentity& id) const;

 private:
  std::shared_ptr<io::HttpClient> client() const;

  const io::S3Options s3_;
  const io::RemoteBytesOptions bytes_;
  mutable std::mutex mu_;  // guards client_
  mutable std::shared_ptr<io::HttpClient> client_;
};

// The URL of the index published beside the object `url` names: ".mibz2idx" after its path (an
// http(s) URL's query, if any, kept after it) or after its key.
std::string sidecar_url(const io::SourceUrl& url);

}  // namespace mibz2::catalog
