// One HTTP request with libcurl, and what came back: the layer under http_client.h, which decides
// what a reply means and whether to try again.
//
// libcurl does the protocol: connections kept alive and reused (each pooled handle keeps its
// own), HTTP/2 where a TLS server offers it (CURL_HTTP_VERSION_2TLS), TLS checked against the
// system's CAs (or a CA file), and S3's SigV4 signature (CURLOPT_AWS_SIGV4). Only http and https
// are allowed, also for redirects (followed for plain HTTP, never for signed S3 requests).
// Nothing here logs: a request's words (the URL, headers) never reach a log, as they may carry
// credentials; libcurl's own verbose output is never turned on.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "io/remote_object.h"

namespace mibz2::io {

// The reply's status and the headers the client reads (of the last reply, after redirects).
struct HttpReply {
  int curl_code = 0;          // CURLcode: 0, or why the transfer failed
  std::string curl_error;     // libcurl's words for it (names a host, never a credential)
  long status = 0;            // HTTP status, 0 when none came
  int http_version = 0;       // 11 for HTTP/1.1, 2 for HTTP/2, 0 when unknown
  std::string etag;
  std::string last_modified;
  std::string content_range;  // "bytes 0-99/1000", "bytes */1000"
  std::optional<uint64_t> content_length;
  std::string retry_after;    // seconds, or an HTTP date
  std::string bucket_region;  // S3's x-amz-bucket-region
  std::string error_body;     // the first few KiB of a reply with a status of 300 or more
  uint64_t body_bytes = 0;    // body bytes handed to the sink (or kept as error_body)
  bool stopped_by_sink = false;  // the sink refused the body
  bool cancelled = false;        // the caller's cancel flag stopped the transfer
};

// A Content-Range header: "bytes FIRST-LAST/TOTAL" (TOTAL may be '*'), or "bytes */TOTAL".
struct ContentRange {
  bool has_range = false;  // FIRST-LAST given
  uint64_t first = 0;
  uint64_t last = 0;       // inclusive
  bool has_total = false;  // TOTAL given as a number
  uint64_t total = 0;
};
ContentRange parse_content_range(const std::string& value);

struct HttpRequest {
  const RemoteObject* object = nullptr;
  std::string url;  // empty: object->url
  bool head = false;
  // An inclusive byte range to ask for ("Range: bytes=FIRST-LAST"), or none.
  std::optional<std::pair<uint64_t, uint64_t>> range;
  std::string if_match;  // an ETag for If-Match, or empty
  // The body of a reply with a status below 300, piece by piece; false stops the transfer
  // (stopped_by_sink). `reply` holds the status and headers already. None: the body is dropped.
  std::function<bool(const HttpReply& reply, const char* data, size_t size)> sink;
  const std::atomic<bool>* cancel = nullptr;  // set: the transfer stops within about a second
};

struct TransferSettings {
  std::chrono::milliseconds connect_timeout{10000};
  // A transfer with no byte moving for this long (waiting for the reply's first byte included)
  // failed: libcurl's low-speed limit of 1 byte per second over this time.
  std::chrono::seconds stall_timeout{30};
  std::string ca_bundle;  // a CA file, or empty: the system's
  size_t idle_handles = 16;  // handles (and their live connections) kept between requests
};

// libcurl easy handles kept between requests, so that each keeps its connections alive; taken
// and given back by any thread.
class HttpTransfer {
 public:
  explicit HttpTransfer(TransferSettings settings);
  ~HttpTransfer();
  HttpTransfer(const HttpTransfer&) = delete;
  HttpTransfer& operator=(const HttpTransfer&) = delete;

  // Makes the request and waits for its end (no lock held meanwhile).
  HttpReply perform(const HttpRequest& request);

 private:
  void* take_handle();
  void give_handle(void* handle);

  const TransferSettings settings_;
  std::mutex mu_;  // a leaf lock: guards idle_
  std::vector<void*> idle_;
};

}  // namespace mibz2::io
