#include "io/http_transfer.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <string_view>

#include "version.h"

namespace mibz2::io {
namespace {

// The first bytes of an error reply are kept for its message (S3's XML names the error).
constexpr size_t kErrorBodyBytes = 4096;
// libcurl's receive buffer: larger than its 16 KiB default, so that a fast link hands the body
// over in fewer, larger pieces.
constexpr long kReceiveBufferBytes = 256 << 10;

void init_curl_once() {
  // curl_global_init before any handle, once (this libcurl's is thread-safe, still once is enough).
  static const CURLcode done = curl_global_init(CURL_GLOBAL_DEFAULT);
  (void)done;
}

struct Context {
  const HttpRequest* request;
  HttpReply* reply;
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Each header line of each reply (a redirect's, a 100 Continue's, then the last one's): a status
// line starts a reply afresh.
size_t on_header(char* data, size_t size, size_t count, void* user) {
  const size_t n = size * count;
  HttpReply& r = *static_cast<Context*>(user)->reply;
  const std::string_view line = trim(std::string_view(data, n));
  if (line.rfind("HTTP/", 0) == 0) {
    r.status = 0;
    r.etag.clear();
    r.last_modified.clear();
    r.content_range.clear();
    r.content_length.reset();
    r.retry_after.clear();
    r.bucket_region.clear();
    const size_t sp = line.find(' ');
    if (sp != std::string_view::npos) r.status = std::strtol(std::string(line.substr(sp + 1, 3)).c_str(), nullptr, 10);
    return n;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return n;
  const std::string name = lower(trim(line.substr(0, colon)));
  const std::string value(trim(line.substr(colon + 1)));
  if (name == "etag") r.etag = value;
  else if (name == "last-modified") r.last_modified = value;
  else if (name == "content-range") r.content_range = value;
  else if (name == "retry-after") r.retry_after = value;
  else if (name == "x-amz-bucket-region") r.bucket_region = value;
  else if (name == "content-length") {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(value.c_str(), &end, 10);
    if (!value.empty() && end && *end == '\0') r.content_length = v;
  }
  return n;
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
  const size_t n = size * count;
  const Context& c = *static_cast<Context*>(user);
  HttpReply& r = *c.reply;
  if (r.status < 200 || r.status >= 300) {
    r.error_body.append(data, std::min(n, kErrorBodyBytes - std::min(kErrorBodyBytes, r.error_body.size())));
    r.body_bytes += n;
    return n;
  }
  if (c.request->sink && !c.request->sink(r, data, n)) {
    r.stopped_by_sink = true;
    return 0;  // not the count given: libcurl stops with CURLE_WRITE_ERROR
  }
  r.body_bytes += n;
  return n;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const Context& c = *static_cast<Context*>(user);
  if (c.request->cancel && c.request->cancel->load(std::memory_order_relaxed)) {
    c.reply->cancelled = true;
    return 1;  // CURLE_ABORTED_BY_CALLBACK
  }
  return 0;
}

}  // namespace

ContentRange parse_content_range(const std::string& value) {
  ContentRange c;
  if (value.rfind("bytes ", 0) != 0) return c;
  const char* p = value.c_str() + 6;
  char* end = nullptr;
  if (*p == '*') {
    ++p;
  } else {
    const uint64_t first = std::strtoull(p, &end, 10);
    if (end == p || *end != '-') return c;
    p = end + 1;
    const uint64_t last = std::strtoull(p, &end, 10);
    if (end == p || last < first) return c;
    p = end;
    c = {true, first, last, false, 0};
  }
  if (*p++ != '/' || *p == '*') return c;
  const uint64_t total = std::strtoull(p, &end, 10);
  if (end != p && *end == '\0') {
    c.has_total = true;
    c.total = total;
  }
  return c;
}

HttpTransfer::HttpTransfer(TransferSettings settings) : settings_(std::move(settings)) { init_curl_once(); }

HttpTransfer::~HttpTransfer() {
  for (void* h : idle_) curl_easy_cleanup(static_cast<CURL*>(h));
}

void* HttpTransfer::take_handle() {
  {
    std::lock_guard lk(mu_);
    if (!idle_.empty()) {
      void* h = idle_.back();  // the most recently used: its connection is the likeliest alive
      idle_.pop_back();
      return h;
    }
  }
  return curl_easy_init();
}

void HttpTransfer::give_handle(void* handle) {
  {
    std::lock_guard lk(mu_);
    if (idle_.size() < settings_.idle_handles) {
      idle_.push_back(handle);
      return;
    }
  }
  curl_easy_cleanup(static_cast<CURL*>(handle));
}

HttpReply HttpTransfer::perform(const HttpRequest& request) {
  HttpReply reply;
  CURL* h = static_cast<CURL*>(take_handle());
  if (!h) {
    reply.curl_code = CURLE_OUT_OF_MEMORY;
    reply.curl_error = "cannot make a libcurl handle";
    return reply;
  }
  // Every option afresh: curl_easy_reset keeps the handle's live connections, DNS and TLS
  // session caches, and forgets the last request's options (its credentials among them).
  curl_easy_reset(h);
  const RemoteObject& object = *request.object;
  const std::string& url = request.url.empty() ? object.url : request.url;
  Context context{&request, &reply};
  char error[CURL_ERROR_SIZE] = {};
  curl_slist* headers = nullptr;
  const bool signed_s3 = object.s3 && !object.credentials.empty();
  std::string range;

  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  // A signed request is signed for its own host; a redirect of S3 (another region) is an error.
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, object.s3 ? 0L : 1L);
  curl_easy_setopt(h, CURLOPT_MAXREDIRS, 8L);
  curl_easy_setopt(h, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(settings_.connect_timeout.count()));
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, static_cast<long>(settings_.stall_timeout.count()));
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(h, CURLOPT_BUFFERSIZE, kReceiveBufferBytes);
  curl_easy_setopt(h, CURLOPT_USERAGENT, "mibz2fs/" MIBZ2FS_VERSION);
  const std::string& ca = object.ca_bundle.empty() ? settings_.ca_bundle : object.ca_bundle;
  if (!ca.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, ca.c_str());
  if (request.head) curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  if (request.range) {
    range = std::to_string(request.range->first) + "-" + std::to_string(request.range->second);
    curl_easy_setopt(h, CURLOPT_RANGE, range.c_str());
  }
  if (!request.if_match.empty()) headers = curl_slist_append(headers, ("If-Match: " + request.if_match).c_str());
  if (signed_s3) {
    // S3 wants the payload's hash in a header it signs; there is no payload.
    headers = curl_slist_append(headers, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
    if (!object.credentials.session_token.empty())
      headers = curl_slist_append(headers, ("x-amz-security-token: " + object.credentials.session_token).c_str());
    const std::string sigv4 = "aws:amz:" + object.region + ":s3";
    curl_easy_setopt(h, CURLOPT_AWS_SIGV4, sigv4.c_str());  // copied by libcurl
    curl_easy_setopt(h, CURLOPT_USERNAME, object.credentials.access_key_id.c_str());
    curl_easy_setopt(h, CURLOPT_PASSWORD, object.credentials.secret_access_key.c_str());
  }
  if (headers) curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &context);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &context);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, &context);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);

  const CURLcode code = curl_easy_perform(h);
  reply.curl_code = code;
  if (code != CURLE_OK) reply.curl_error = error[0] ? error : curl_easy_strerror(code);
  long status = 0;
  if (curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK && status) reply.status = status;
  long version = 0;
  if (curl_easy_getinfo(h, CURLINFO_HTTP_VERSION, &version) == CURLE_OK) {
    reply.http_version = version == CURL_HTTP_VERSION_2_0 ? 2 : version == CURL_HTTP_VERSION_1_1 ? 11
                         : version == CURL_HTTP_VERSION_1_0 ? 10 : version == CURL_HTTP_VERSION_3 ? 3 : 0;
  }
  // The handle keeps nothing of this request but its connection: no pointer into this frame.
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, nullptr);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, nullptr);
  curl_slist_free_all(headers);
  give_handle(h);
  return reply;
}

}  // namespace mibz2::io
