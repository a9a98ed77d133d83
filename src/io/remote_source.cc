#include "io/remote_source.h"

#include <curl/curl.h>
#include <xxhash.h>

#include <cerrno>
#include <ctime>

namespace mibz2::io {

SourceStamp remote_stamp(const std::string& shown, const ObjectInfo& info) {
  // A NUL between the two: no URL holds one, so no (URL, ETag) pair hashes as another's text.
  std::string identity = shown;
  identity.push_back('\0');
  identity += info.etag;
  SourceStamp stamp;
  stamp.inode = XXH3_64bits(identity.data(), identity.size());
  stamp.size = info.size;
  const time_t modified = info.last_modified.empty() ? -1 : curl_getdate(info.last_modified.c_str(), nullptr);
  if (modified > 0) stamp.mtime_ns = static_cast<uint64_t>(modified) * 1'000'000'000ull;
  return stamp;
}

RemoteSource::RemoteSource(std::unique_ptr<RemoteBytes> bytes)
    : Source(bytes->size(), remote_stamp(bytes->object().shown, bytes->info())), bytes_(std::move(bytes)) {}

base::Result<SourceStamp> RemoteSource::stamp_now() const {
  if (bytes_->changed())
    return base::Status::error(ESTALE, bytes_->object().shown + ": the object changed since it was opened");
  return stamp();
}

}  // namespace mibz2::io
