#include "io/remote_object.h"

namespace mibz2::io {

RemoteObject s3_request(const S3Settings& s3, std::string url, std::string shown) {
  RemoteObject o;
  o.url = std::move(url);
  o.shown = std::move(shown);
  o.s3 = true;
  o.region = s3.region;
  if (!s3.anonymous) o.credentials = s3.credentials;
  o.ca_bundle = s3.ca_bundle;
  return o;
}

base::Result<RemoteObject> remote_object(const SourceUrl& url, const S3Settings* s3) {
  if (!url.is_s3()) {
    RemoteObject o;
    o.url = url.url;
    o.shown = redacted_url(url.url);
    return o;
  }
  MIBZ2_RETURN_ERROR_IF(!s3, EINVAL, url.url + ": an s3:// URL needs S3 settings");
  MIBZ2_RETURN_ERROR_IF(url.is_prefix(), EISDIR, url.url + ": names the objects under a prefix, not one object");
  return s3_request(*s3, s3_object_url(*s3, url.bucket, url.key), "s3://" + url.bucket + "/" + url.key);
}

}  // namespace mibz2::io
