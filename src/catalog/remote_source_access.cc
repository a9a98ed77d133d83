#include "catalog/remote_source_access.h"

#include <cerrno>
#include <span>

#include "catalog/catalog_file.h"
#include "index/index_store.h"
#include "io/remote_object.h"
#include "io/remote_source.h"
#include "io/source_url.h"

namespace mibz2::catalog {
namespace {

// The object `url` names, with the settings its requests are signed with (s3://: `s3` over the
// environment's).
base::Result<io::RemoteObject> object_of(const std::string& url, const io::S3Options& s3) {
  base::Result<io::SourceUrl> parsed = io::parse_source_url(url);
  MIBZ2_FORWARD_IF_ERROR(parsed);
  if (!parsed->is_s3()) return io::remote_object(*parsed);
  base::Result<io::S3Settings> settings = io::resolve_s3_settings(s3);
  MIBZ2_FORWARD_IF_ERROR(settings);
  return io::remote_object(*parsed, &*settings);
}

// A request's failure in the words a local file's would have: without the object's name in front
// (whoever reports it names the file, as for a path), naming the URL only where it is not the
// file's own (a sidecar's).
base::Status unnamed(const base::Status& why, const std::string& shown) {
  const std::string prefix = shown + ": ";
  if (why.ok() || why.message().rfind(prefix, 0) != 0) return why;
  return base::Status::error(why.code(), why.message().substr(prefix.size()));
}

}  // namespace

std::string sidecar_url(const io::SourceUrl& url) {
  if (url.is_s3()) return "s3://" + url.bucket + "/" + url.key + index::kSidecarSuffix;
  const size_t query = url.url.find('?');
  if (query == std::string::npos) return url.url + index::kSidecarSuffix;
  return url.url.substr(0, query) + index::kSidecarSuffix + url.url.substr(query);
}

RemoteSourceAccess::RemoteSourceAccess(io::S3Options s3, io::RemoteBytesOptions bytes)
    : s3_(std::move(s3)), bytes_(bytes) {}

std::shared_ptr<io::HttpClient> RemoteSourceAccess::client() const {
  std::lock_guard lk(mu_);
  if (!client_) client_ = std::make_shared<io::HttpClient>();
  return client_;
}

base::Result<std::unique_ptr<io::Source>> RemoteSourceAccess::open_source(const CatalogFile& file) const {
  base::Result<io::RemoteObject> object = object_of(file.path(), s3_);
  MIBZ2_FORWARD_IF_ERROR(object);
  const std::shared_ptr<io::HttpClient> http = client();
  base::Result<io::ObjectInfo> info = http->stat(*object);
  if (!info.ok()) return unnamed(info.status(), object->shown);
  auto bytes = std::make_unique<io::RemoteBytes>(http, std::move(*object), std::move(*info), bytes_);
  return std::unique_ptr<io::Source>(new io::RemoteSource(std::move(bytes)));
}

base::Result<io::SourceStamp> RemoteSourceAccess::stamp(const CatalogFile& file) const {
  base::Result<io::RemoteObject> object = object_of(file.path(), s3_);
  MIBZ2_FORWARD_IF_ERROR(object);
  base::Result<io::ObjectInfo> info = client()->stat(*object);
  if (!info.ok()) return unnamed(info.status(), object->shown);
  return io::remote_stamp(object->shown, *info);
}

base::Result<index::LoadedIndex> RemoteSourceAccess::load_sidecar(const CatalogFile& file,
                                                                  const index::SourceIdentity& id) const {
  base::Result<io::SourceUrl> parsed = io::parse_source_url(file.path());
  MIBZ2_FORWARD_IF_ERROR(parsed);
  return load_index_at(sidecar_url(*parsed), id);
}

std::string RemoteSourceAccess::sidecar_name(const CatalogFile& file) const {
  base::Result<io::SourceUrl> parsed = io::parse_source_url(file.path());
  return parsed.ok() ? io::redacted_url(sidecar_url(*parsed)) : SourceAccess::sidecar_name(file);
}

base::Result<index::LoadedIndex> RemoteSourceAccess::load_index_at(const std::string& url,
                                                                   const index::SourceIdentity& id) const {
  base::Result<io::RemoteObject> object = object_of(url, s3_);
  MIBZ2_FORWARD_IF_ERROR(object);
  base::Result<std::string> body = client()->get_small(*object, object->url, index::max_index_file_size(id.size));
  if (!body.ok()) {
    const int code = body.status().code();
    if (code == ENOENT || code == EACCES) return base::Status::error(ENOENT, body.status().message());
    return body.status();
  }
  const auto* data = reinterpret_cast<const uint8_t*>(body->data());
  return index::judge_index_bytes(std::span<const uint8_t>(data, body->size()), object->shown, id);
}

}  // namespace mibz2::catalog
