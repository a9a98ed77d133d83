// A source named by URL rather than by path: an object on a web server (http://, https://) or in
// object storage (s3://BUCKET/KEY). This file only takes the text apart and says how to show it;
// how to reach the object is io/remote_object.h's.
//
// Two forms are not URLs in the same sense:
//   - http(s)://HOST/PATH?QUERY is a real URL, sent as it is written (percent-encoded by whoever
//     wrote it); its object's name is the last component of PATH, percent-decoded.
//   - s3://BUCKET/KEY names a key literally, as the AWS command line and fsspec take it: "a%20b"
//     is the key a%20b, not "a b" (the request's URL is encoded from the key, s3_settings.h).
//     A KEY that is empty or ends with '/' is a prefix: the objects under it (a tree to mount).
//
// A URL can carry secrets: a user and password before the host, or a signature in its query (a
// presigned S3 URL's X-Amz-Signature and X-Amz-Credential, a token parameter). Every message and
// log line shows a URL through redacted_url(), never as given.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace mibz2::io {

enum class UrlScheme { kHttp, kHttps, kS3 };

struct SourceUrl {
  UrlScheme scheme = UrlScheme::kHttp;
  // http(s): the URL to request (as given, without a #fragment, which is never sent); s3: the
  // URL as given.
  std::string url;
  // http(s): the path as written in the URL (percent-encoded, "/" when none), without the query.
  std::string path;
  // s3: the bucket and the key (literal; empty for the bucket's root).
  std::string bucket;
  std::string key;

  bool is_s3() const { return scheme == UrlScheme::kS3; }
  // An s3:// URL naming the objects under a prefix rather than one object.
  bool is_prefix() const { return is_s3() && (key.empty() || key.back() == '/'); }
};

// Whether TEXT is a URL of a remote source (http://, https:// or s3://, the scheme in any case),
// as opposed to a path. Says nothing of whether the rest is well formed (parse_source_url does).
bool is_url(std::string_view text);

// Takes a URL apart. Fails with EINVAL and a message naming the URL (redacted) when it is not one
// of the forms above: no host, no bucket, a control character anywhere, a space in an http(s)
// URL (an S3 key may hold one), a port that is no number, another scheme.
base::Result<SourceUrl> parse_source_url(std::string_view text);

// The object's name, as a mount would show it: the last component of the path (http, percent-
// decoded) or of the key (s3, literal). Empty when there is no usable name: the URL names a
// directory or a prefix ("https://host/", "s3://bucket/dir/"), or the component decodes to "." or
// "..", or to text holding a '/' or a NUL.
std::string object_name(const SourceUrl& url);

// TEXT with its secrets taken out, for messages: the user and password before the host dropped,
// and the value of every query parameter that may hold a secret (a signature, a credential, a
// token, a key, a password: X-Amz-Signature, X-Amz-Credential, X-Amz-Security-Token, Signature,
// AWSAccessKeyId, sig, token, access_token, ...) replaced by REDACTED. Any text is accepted (a URL
// that does not parse is redacted as far as it can be).
std::string redacted_url(std::string_view text);

// %XX sequences decoded (an invalid one is kept as it is); '+' is kept (it means a space only in
// form data, not in a path).
std::string percent_decode(std::string_view text);
// Every byte but the unreserved characters of RFC 3986 (A-Z a-z 0-9 - . _ ~), and '/' when
// `keep_slash`, as %XX with capital hex digits: the encoding SigV4 signs (an S3 key in a path
// keeps its '/', a query value does not).
std::string percent_encode(std::string_view text, bool keep_slash);

}  // namespace mibz2::io
