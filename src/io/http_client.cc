#include "io/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <ctime>
#include <random>
#include <thread>

#include "io/http_failure.h"

namespace mibz2::io {

using std::chrono::milliseconds;

struct HttpClient::Attempt {
  enum Kind { kDone, kTransient, kFailed };
  Kind kind = kDone;
  base::Status status;  // kFailed: the failure (its message names the object); kTransient: its cause
  milliseconds retry_after{0};

  static Attempt done() { return {}; }
  static Attempt failed(base::Status s) { return {kFailed, std::move(s), milliseconds(0)}; }
  static Attempt transient(std::string why, milliseconds retry_after = milliseconds(0)) {
    return {kTransient, base::Status::error(EIO, std::move(why)), retry_after};
  }
};

namespace {

// A delay before attempt `n` + 1 (n >= 1): `first` doubled for each attempt before, at most
// `most`, drawn from its upper half so that clients that failed together do not retry together.
milliseconds backoff(int n, milliseconds first, milliseconds most) {
  milliseconds d = first;
  for (int i = 1; i < n && d < most; ++i) d *= 2;
  d = std::min(d, most);
  thread_local std::minstd_rand rng{std::random_device{}()};
  std::uniform_int_distribution<long long> half(d.count() / 2, std::max<long long>(d.count(), 1));
  return milliseconds(half(rng));
}

// Sleeps `d`, or less when `cancel` is set meanwhile (looked at every 50 ms).
void sleep_unless_cancelled(milliseconds d, const std::atomic<bool>* cancel) {
  const auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
    if (cancel && cancel->load(std::memory_order_relaxed)) return;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(milliseconds(50), end - std::chrono::steady_clock::now()));
  }
}

// Retry-After's wait: a number of seconds or an HTTP date.
milliseconds retry_after_of(const HttpReply& r) {
  if (r.retry_after.empty()) return milliseconds(0);
  if (std::all_of(r.retry_after.begin(), r.retry_after.end(), [](unsigned char c) { return std::isdigit(c); }))
    return std::chrono::seconds(std::strtoll(r.retry_after.c_str(), nullptr, 10));
  const time_t when = curl_getdate(r.retry_after.c_str(), nullptr);
  const time_t now = std::time(nullptr);
  return when > now ? std::chrono::seconds(when - now) : milliseconds(0);
}

// Why the reply says the object is no longer `expect`, or empty.
std::string identity_change(const HttpReply& r, const ObjectInfo& expect) {
  if (!expect.etag.empty() && !r.etag.empty() && r.etag != expect.etag)
    return "its ETag is now " + r.etag + ", was " + expect.etag;
  if (expect.etag.empty() && !expect.last_modified.empty() && !r.last_modified.empty() &&
      r.last_modified != expect.last_modified)
    return "its Last-Modified is now " + r.last_modified + ", was " + expect.last_modified;
  return {};
}

}  // namespace

HttpOptions HttpOptions::from_environment(const EnvironmentLookup& env) {
  HttpOptions o;
  if (std::optional<std::string> ca = env("CURL_CA_BUNDLE"); ca && !ca->empty()) o.ca_bundle = *ca;
  return o;
}

HttpClient::HttpClient(HttpOptions options)
    : options_(std::move(options)),
      transfer_(TransferSettings{options_.connect_timeout, options_.stall_timeout, options_.ca_bundle,
                                 options_.idle_handles}),
      pool_(options_.fetch_threads) {}

HttpStats HttpClient::stats() const {
  return {requests_.load(), retries_.load(), body_bytes_.load(), http2_requests_.load()};
}

void HttpClient::count(const HttpReply& reply) {
  requests_.fetch_add(1, std::memory_order_relaxed);
  body_bytes_.fetch_add(reply.body_bytes, std::memory_order_relaxed);
  if (reply.http_version == 2) http2_requests_.fetch_add(1, std::memory_order_relaxed);
}

template <class Once>
base::Status HttpClient::with_retries(const RemoteObject& object, const std::atomic<bool>* cancel, Once&& once) {
  for (int attempt = 1;; ++attempt) {
    if (cancel && cancel->load(std::memory_order_relaxed))
      return base::Status::error(ECANCELED, object.shown + ": stopped");
    Attempt a = once();
    if (a.kind == Attempt::kDone) return {};
    if (a.kind == Attempt::kFailed) return scrub(std::move(a.status), object);
    if (attempt > options_.retries)
      return scrub(base::Status::error(EIO, object.shown + ": " + a.status.message() + " (" +
                                                std::to_string(attempt) + " attempts)"),
                   object);
    retries_.fetch_add(1, std::memory_order_relaxed);
    milliseconds wait = backoff(attempt, options_.first_backoff, options_.max_backoff);
    if (a.retry_after > wait) wait = std::min(a.retry_after, options_.max_retry_after);
    sleep_unless_cancelled(wait, cancel);
  }
}

// The attempt that failed for `r`'s transfer or status (not for its body): transient or not.
HttpClient::Attempt HttpClient::failed_attempt(const HttpReply& r, const RemoteObject& object) {
  if (r.cancelled) return Attempt::failed(base::Status::error(ECANCELED, object.shown + ": stopped"));
  if (r.curl_code)
    return is_transient_transfer(r) ? Attempt::transient(transfer_words(r)) : Attempt::failed(transfer_failure(r, object));
  if (is_transient_status(r.status)) return Attempt::transient(status_words(r), retry_after_of(r));
  return Attempt::failed(status_failure(r, object));
}

base::Result<ObjectInfo> HttpClient::stat(const RemoteObject& object, const std::atomic<bool>* cancel) {
  ObjectInfo info;
  bool by_get = false;
  base::Status s = with_retries(object, cancel, [&]() -> Attempt {
    HttpRequest rq;
    rq.object = &object;
    rq.cancel = cancel;
    rq.head = true;
    const HttpReply r = transfer_.perform(rq);
    count(r);
    const bool ok = !r.curl_code && r.status >= 200 && r.status < 300;
    // A HEAD refused, or failed with no body to say why (S3 says it in the XML of a GET's reply).
    const bool ask_by_get = r.status == 403 || r.status == 405 || r.status == 501 || (object.s3 && r.status == 400);
    if ((ok && !r.content_length) || (!r.curl_code && ask_by_get)) {
      by_get = true;
      return Attempt::done();
    }
    if (!ok) return failed_attempt(r, object);
    info = {*r.content_length, r.etag, r.last_modified};
    return Attempt::done();
  });
  if (!s.ok() || !by_get) return s.ok() ? base::Result<ObjectInfo>(info) : base::Result<ObjectInfo>(s);
  // A GET of the first byte: its Content-Range says the size. A server that ignores Range says it
  // in Content-Length, and its body is not read.
  s = with_retries(object, cancel, [&]() -> Attempt {
    HttpRequest rq;
    rq.object = &object;
    rq.cancel = cancel;
    rq.range = std::pair<uint64_t, uint64_t>(0, 0);
    rq.sink = [](const HttpReply& r, const char*, size_t) { return r.status == 206; };
    const HttpReply r = transfer_.perform(rq);
    count(r);
    const ContentRange c = parse_content_range(r.content_range);
    info = {0, r.etag, r.last_modified};
    if (r.status == 416 && c.has_total && c.total == 0) return Attempt::done();  // empty: no byte 0
    if (r.status == 206 && !r.curl_code && c.has_total) {
      info.size = c.total;
      return Attempt::done();
    }
    if (r.status == 200 && (!r.curl_code || r.stopped_by_sink) && r.content_length) {
      info.size = *r.content_length;
      return Attempt::done();
    }
    if ((r.status == 200 || r.status == 206) && !r.curl_code)
      return Attempt::failed(base::Status::error(EIO, object.shown + ": the server does not say the object's size"));
    return failed_attempt(r, object);
  });
  if (!s.ok()) return s;
  return info;
}

base::Status HttpClient::get_range(const RemoteObject& object, uint64_t offset, size_t length, uint8_t* out,
                                   const ObjectInfo& expect, const std::atomic<bool>* cancel) {
  if (length == 0) return {};
  MIBZ2_RETURN_ERROR_IF(offset > expect.size || length > expect.size - offset, EINVAL,
                        object.shown + ": a read past the end of the object");
  size_t done = 0;  // bytes checked and kept, by every attempt so far: never asked for again
  return with_retries(object, cancel, [&]() -> Attempt {
    for (;;) {  // a complete reply for less than was asked: the rest is asked for at once
      const uint64_t first = offset + done;
      const uint64_t last = offset + length - 1;
      const bool whole = first == 0 && last + 1 == expect.size;  // a 200 is the right answer
      HttpRequest rq;
      rq.object = &object;
      rq.cancel = cancel;
      rq.range = std::pair<uint64_t, uint64_t>(first, last);
      if (expect.strong_etag()) rq.if_match = expect.etag;
      std::string changed;  // the object is no longer `expect`
      std::string refused;  // the server ignores Range
      std::string bad;      // a reply that does not fit what was asked
      bool checked = false;
      uint64_t reply_last = last;
      size_t got = 0;
      // The headers are checked before the first byte is kept; a reply that fails the check is
      // stopped there, its body not read.
      rq.sink = [&](const HttpReply& r, const char* data, size_t n) {
        if (!checked) {
          checked = true;
          changed = identity_change(r, expect);
          const ContentRange c = parse_content_range(r.content_range);
          if (changed.empty() && r.status == 206 && c.has_total && c.total != expect.size)
            changed = "its size is now " + std::to_string(c.total) + " bytes, was " + std::to_string(expect.size);
          if (!changed.empty()) return false;
          if (r.status == 200 && !whole) {
            refused = "the server ignores Range requests: it answered a request for bytes " + std::to_string(first) +
                      "-" + std::to_string(last) + " with the whole object (HTTP 200), which cannot be read in place";
            return false;
          }
          if (r.status == 206 && (!c.has_range || c.first != first || c.last > last)) {
            bad = "a reply for another range than bytes " + std::to_string(first) + "-" + std::to_string(last) +
                  " (Content-Range: " + (r.content_range.empty() ? "none" : r.content_range) + ")";
            return false;
          }
          if (r.status == 206) reply_last = c.last;
          if (r.status != 200 && r.status != 206) {
            bad = "an unexpected reply to a range request: " + status_words(r);
            return false;
          }
        }
        if (n > reply_last - first + 1 - got) {
          bad = "a reply longer than the range it says it holds";
          return false;
        }
        std::memcpy(out + done + got, data, n);
        got += n;
        return true;
      };
      const HttpReply r = transfer_.perform(rq);
      count(r);
      done += got;  // checked bytes, in their place: kept even when the transfer then broke off
      if (!changed.empty()) return changed_attempt(object, changed);
      if (!refused.empty()) return Attempt::failed(base::Status::error(EIO, object.shown + ": " + refused));
      if (!bad.empty()) return Attempt::transient(bad);
      if (!r.curl_code && r.status == 412)
        return changed_attempt(object, "it no longer has the ETag " + expect.etag + " (HTTP 412 to If-Match)");
      if (!r.curl_code && (r.status == 404 || r.status == 410))
        return changed_attempt(object, "it is no longer there (" + status_words(r) + ")");
      if (!r.curl_code && r.status == 416)
        return changed_attempt(object, "it is now shorter than " + std::to_string(last + 1) + " bytes (HTTP 416)");
      if (r.curl_code || r.status < 200 || r.status >= 300) return failed_attempt(r, object);
      if (done == length) return Attempt::done();
      if (got && first + got == reply_last + 1 && reply_last < last) continue;
      return Attempt::transient("a short reply: " + std::to_string(got) + " of " +
                                std::to_string(reply_last - first + 1) + " bytes");
    }
  });
}

base::Result<std::string> HttpClient::get_small(const RemoteObject& object, const std::string& url, size_t max_bytes) {
  std::string body;
  bool too_large = false;
  base::Status s = with_retries(object, nullptr, [&]() -> Attempt {
    body.clear();
    HttpRequest rq;
    rq.object = &object;
    rq.url = url;
    rq.sink = [&](const HttpReply&, const char* data, size_t n) {
      if (n > max_bytes - body.size()) return !(too_large = true);
      body.append(data, n);
      return true;
    };
    const HttpReply r = transfer_.perform(rq);
    count(r);
    if (too_large)
      return Attempt::failed(base::Status::error(EIO, object.shown + ": a reply of more than " +
                                                          std::to_string(max_bytes) + " bytes"));
    if (r.curl_code || r.status < 200 || r.status >= 300) return failed_attempt(r, object);
    return Attempt::done();
  });
  if (!s.ok()) return s;
  return body;
}

HttpClient::Attempt HttpClient::changed_attempt(const RemoteObject& object, const std::string& why) {
  return Attempt::failed(base::Status::error(ESTALE, object.shown + ": the object changed since it was opened (" + why + ")"));
}

}  // namespace mibz2::io
