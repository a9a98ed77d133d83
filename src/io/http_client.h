// The requests a remote source makes, and what their replies mean: the size and identity of an
// object (stat), its bytes by range (get_range), and a small whole reply (a listing's page). Any
// thread may call; requests share a pool of libcurl handles (http_transfer.h) and so their
// connections.
//
// What a reply means:
//   - 2xx with what was asked: done. A range reply is checked before its first byte is kept: its
//     Content-Range is the range asked for of an object of the size opened, its ETag (or, without
//     one, its Last-Modified) is the one opened;
//   - the object is no longer the content it was opened on (412 to If-Match, another ETag, size
//     or Last-Modified, 404 or 410, 416 for a range that was inside it): ESTALE, at once;
//   - a transient failure (a reset or refused connection, a timeout or stalled transfer, a short
//     body, 408, 429, 500, 502, 503, 504): tried again with exponential backoff (250 ms doubling,
//     with jitter; Retry-After of 429 and 503 honoured, up to a bound) a bounded number of times,
//     then EIO naming the URL and the last failure. Bytes of an interrupted range that were
//     checked and kept are not asked for again;
//   - a server that ignores Range (200 with the whole object for a range): refused at once, its
//     body not read (EIO: it cannot be read in place);
//   - 401 or 403: EACCES; 404 at stat: ENOENT; anything else: EIO, naming the status.
//
// Every message names the object as RemoteObject::shown does (redacted) and never holds a
// credential: only the status, libcurl's words for a failed transfer (they name hosts) and, for
// S3, the error's Code and Message from its XML reply.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.h"
#include "io/fetch_pool.h"
#include "io/http_transfer.h"
#include "io/remote_object.h"
#include "io/s3_settings.h"

namespace mibz2::io {

// What an object is, from its stat: its size and what identifies its content.
struct ObjectInfo {
  uint64_t size = 0;
  std::string etag;           // as the server sent it (quotes, a W/ prefix included), or empty
  std::string last_modified;  // as sent, or empty
  // A strong ETag: sent as If-Match with every range request (a weak one never matches there).
  bool strong_etag() const { return !etag.empty() && etag.rfind("W/", 0) != 0; }
};

struct HttpOptions {
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::seconds stall_timeout{30};  // no byte for this long: the attempt failed
  int retries = 4;                         // attempts after the first, for transient failures
  std::chrono::milliseconds first_backoff{250};
  std::chrono::milliseconds max_backoff{8000};
  std::chrono::milliseconds max_retry_after{30000};  // a longer Retry-After is waited this long
  std::string ca_bundle;     // a CA file for TLS, or empty: the system's
  size_t idle_handles = 16;  // libcurl handles kept with their connections
  // Threads of the fetch pool (fetch_pool.h): read-ahead requests in flight at once, for every
  // remote source of this client together.
  size_t fetch_threads = 8;

  // The defaults, with CURL_CA_BUNDLE's file (when set) as the CA file.
  static HttpOptions from_environment(const EnvironmentLookup& env = process_environment());
};

// Counts since the client was made (for tests and benchmarks).
struct HttpStats {
  uint64_t requests = 0;        // attempts made, each one request
  uint64_t retries = 0;         // attempts after a transient failure
  uint64_t body_bytes = 0;      // body bytes received, of every reply
  uint64_t http2_requests = 0;  // requests answered over HTTP/2
};

class HttpClient {
 public:
  explicit HttpClient(HttpOptions options = HttpOptions::from_environment());

  const HttpOptions& options() const { return options_; }

  // The object's size, ETag and Last-Modified: HEAD, or a GET of its first byte when HEAD is
  // refused (S3 and presigned URLs answer 403 to a HEAD they were not signed for; some servers
  // 405; S3's failures say why only in a GET's body) or says no size.
  base::Result<ObjectInfo> stat(const RemoteObject& object, const std::atomic<bool>* cancel = nullptr);

  // Bytes [offset, offset + length) of the object into `out`, all of them (the range must be
  // within expect.size): ok, ESTALE when the object is no longer `expect`, or another errno (see
  // above). `cancel`, when set, stops it (ECANCELED) within about a second.
  base::Status get_range(const RemoteObject& object, uint64_t offset, size_t length, uint8_t* out,
                         const ObjectInfo& expect, const std::atomic<bool>* cancel = nullptr);

  // The whole body of a small reply (at most `max_bytes`) to a GET of `url` signed as `object`
  // is (a listing's page): with the same retries.
  base::Result<std::string> get_small(const RemoteObject& object, const std::string& url, size_t max_bytes);

  HttpStats stats() const;

  // The threads that fetch ahead of readers, for every remote source of this client.
  FetchPool& fetch_pool() { return pool_; }

 private:
  struct Attempt;
  // Runs `once` until it succeeds, fails for good, or has failed transiently 1 + retries times.
  template <class Once>
  base::Status with_retries(const RemoteObject& object, const std::atomic<bool>* cancel, Once&& once);
  Attempt failed_attempt(const HttpReply& reply, const RemoteObject& object);
  static Attempt changed_attempt(const RemoteObject& object, const std::string& why);
  void count(const HttpReply& reply);

  const HttpOptions options_;
  HttpTransfer transfer_;
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> retries_{0};
  std::atomic<uint64_t> body_bytes_{0};
  std::atomic<uint64_t> http2_requests_{0};
  // Last: destroyed first, its threads joined while everything its jobs use is still there.
  FetchPool pool_;
};

}  // namespace mibz2::io
