#include "io/http_failure.h"

#include <curl/curl.h>

#include "io/xml_text.h"

namespace mibz2::io {
namespace {

void replace_all(std::string& text, const std::string& secret) {
  if (secret.empty()) return;
  for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at))
    text.replace(at, secret.size(), "REDACTED");
}

}  // namespace

bool is_transient_transfer(const HttpReply& r) {
  switch (r.curl_code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_AGAIN:
      return true;
    default:
      return false;
  }
}

bool is_transient_status(long status) {
  return status == 408 || status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

std::string transfer_words(const HttpReply& r) {
  std::string words = r.curl_error.empty() ? curl_easy_strerror(static_cast<CURLcode>(r.curl_code)) : r.curl_error;
  if (r.curl_code == CURLE_PARTIAL_FILE) return "a short reply: the connection ended before the body did (" + words + ")";
  if (r.curl_code == CURLE_OPERATION_TIMEDOUT) return "the server stopped sending (" + words + ")";
  return words;
}

std::string status_words(const HttpReply& r) {
  std::string words = "HTTP " + std::to_string(r.status);
  const std::string code = xml_first(r.error_body, "Code");
  if (!code.empty()) {
    const std::string message = xml_first(r.error_body, "Message");
    words += " (" + code + (message.empty() ? "" : ": " + message) + ")";
  }
  return words;
}

base::Status transfer_failure(const HttpReply& r, const RemoteObject& object) {
  std::string words = object.shown + ": " + transfer_words(r);
  if (r.curl_code == CURLE_PEER_FAILED_VERIFICATION || r.curl_code == CURLE_SSL_CACERT_BADFILE)
    words += object.s3 ? "; to trust another CA, name its file in AWS_CA_BUNDLE or CURL_CA_BUNDLE"
                       : "; to trust another CA, name its file in CURL_CA_BUNDLE";
  return base::Status::error(EIO, words);
}

base::Status status_failure(const HttpReply& r, const RemoteObject& object) {
  const std::string words = object.shown + ": " + status_words(r);
  // S3 answers 400 for credentials it cannot take (a session token that expired or is not the
  // session's, a key it does not know): refused access all the same.
  const std::string code = object.s3 ? xml_first(r.error_body, "Code") : std::string();
  const bool bad_credentials = code == "InvalidToken" || code == "ExpiredToken" || code == "TokenRefreshRequired" ||
                               code == "InvalidAccessKeyId";
  if (r.status == 401 || r.status == 403 || bad_credentials)
    return base::Status::error(EACCES, words + ": access denied");
  if (r.status == 404 || r.status == 410) return base::Status::error(ENOENT, words + ": no such object");
  if (object.s3 && r.status >= 300 && r.status < 500) {
    const std::string region = !r.bucket_region.empty() ? r.bucket_region : xml_first(r.error_body, "Region");
    if (!region.empty() && region != object.region)
      return base::Status::error(EIO, words + ": the bucket is in region " + region + ", not " + object.region +
                                          " (set AWS_REGION=" + region + ")");
  }
  return base::Status::error(EIO, words);
}

base::Status scrub(base::Status status, const RemoteObject& object) {
  if (status.ok()) return status;
  std::string message = status.message();
  replace_all(message, object.credentials.secret_access_key);
  replace_all(message, object.credentials.session_token);
  replace_all(message, object.credentials.access_key_id);
  return base::Status::error(status.code(), std::move(message));
}

}  // namespace mibz2::io
