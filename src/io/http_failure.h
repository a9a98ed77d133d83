// What a failed request was, in words and as an errno: which failures are worth trying again, and
// the messages that name them (http_client.h says what each reply means).
#pragma once

#include <string>

#include "base/status.h"
#include "io/http_transfer.h"
#include "io/remote_object.h"

namespace mibz2::io {

// A transfer that failed in a way another attempt may not: a reset or refused connection, a
// timeout or stall, a short body, a name that did not resolve, a TLS handshake that broke off.
// Not a certificate that is not trusted, nor a URL libcurl refuses.
bool is_transient_transfer(const HttpReply& reply);
// 408, 429, 500, 502, 503, 504.
bool is_transient_status(long status);

// The words of a failed transfer: libcurl's ("Recv failure: Connection reset by peer"), with what
// it means where it is not plain ("no byte for 30 s").
std::string transfer_words(const HttpReply& reply);
// "HTTP 503", and for an S3 error its Code and Message ("HTTP 403 (SignatureDoesNotMatch: The
// request signature we calculated does not match ...)").
std::string status_words(const HttpReply& reply);

// A transfer that failed for good: EIO with the object's name, the words, and for a certificate
// that is not trusted, how to trust one (CURL_CA_BUNDLE, AWS_CA_BUNDLE).
base::Status transfer_failure(const HttpReply& reply, const RemoteObject& object);
// A reply whose status is a failure: 401 and 403 EACCES (and S3's 400 for a token or key it
// cannot take), 404 and 410 ENOENT, and anything else EIO (for S3 naming the bucket's region,
// when S3 says it is another).
base::Status status_failure(const HttpReply& reply, const RemoteObject& object);

// The status with every credential of `object` (key id, secret, token) that may have slipped into
// its message replaced by REDACTED: the last guard before a message leaves the client.
base::Status scrub(base::Status status, const RemoteObject& object);

}  // namespace mibz2::io
