// How to ask for one remote object: the URL each request goes to, how it is signed, and how
// messages name it. Made once from the URL a user gave (and, for s3://, the S3 settings of
// s3_settings.h), then handed to every request of the HTTP client (http_client.h).
#pragma once

#include <string>

#include "base/status.h"
#include "io/s3_settings.h"
#include "io/source_url.h"

namespace mibz2::io {

struct RemoteObject {
  std::string url;    // what is requested (for S3, the endpoint's URL of the key)
  std::string shown;  // what messages say: the URL redacted, or "s3://BUCKET/KEY"
  bool s3 = false;    // an S3 request: signed with SigV4 unless anonymous; HEAD may be refused
  std::string region;          // S3: the region requests are signed for
  S3Credentials credentials;   // S3: the credentials that sign; empty: unsigned
  std::string ca_bundle;       // a CA file for TLS, or empty: the HTTP client's default
};

// The object URL names: as it is for http(s); for s3:// the key's URL under `s3` (which must be
// given for an s3:// URL). An s3:// prefix (s3://BUCKET/DIR/) names no object: EISDIR.
base::Result<RemoteObject> remote_object(const SourceUrl& url, const S3Settings* s3 = nullptr);

// A request to `url` signed as `s3` signs (a listing, or an object whose URL is already made);
// `shown` names it in messages.
RemoteObject s3_request(const S3Settings& s3, std::string url, std::string shown);

}  // namespace mibz2::io
