// Every fault a network or a server can make, injected by testtools/fault_proxy.py in front of
// nginx: no wrong byte ever, and the documented outcome (retried and read; EIO naming the URL and
// what happened after the retries; ESTALE for an object that changed; EIO at once for a server
// that ignores Range).
#include <gtest/gtest.h>

#include "io/http_client.h"
#include "remote_servers.h"

namespace mibz2::io {
namespace {

using std::chrono::milliseconds;
using test::Bytes;

constexpr size_t kObjectBytes = 4 << 20;

class RemoteFaults : public ::testing::Test {
 protected:
  // One proxy for the suite (each test sets its faults, and resets it first).
  static void SetUpTestSuite() {
    test::NginxServer* nginx = test::NginxServer::shared(&why_);
    if (!nginx) return;
    data_ = new Bytes(test::random_bytes(kObjectBytes, 11));
    nginx->put("faults.bin", *data_);
    proxy_ = test::FaultProxy::start(nginx->base(), &why_).release();
  }
  static void TearDownTestSuite() {
    delete proxy_;
    proxy_ = nullptr;
    delete data_;
    data_ = nullptr;
  }

  void SetUp() override {
    MIBZ2_NEED_SERVER(proxy_, why_);
    proxy_->reset();
    object_ = *remote_object(*parse_source_url(proxy_->url("faults.bin")));
    // Short waits, so that the retries of a test take milliseconds; a stall of 1 s is a timeout.
    HttpOptions options;
    options.first_backoff = milliseconds(10);
    options.max_backoff = milliseconds(40);
    options.max_retry_after = milliseconds(1500);
    options.stall_timeout = std::chrono::seconds(1);
    client_ = std::make_unique<HttpClient>(options);
    base::Result<ObjectInfo> info = client_->stat(object_);
    ASSERT_TRUE(info.ok()) << info.status().message();
    info_ = *info;
    proxy_->reset();
  }

  // Reads [at, at + len) and checks every byte when it succeeds.
  base::Status read(uint64_t at, size_t len) {
    Bytes got(len, 0xEE);
    const base::Status s = client_->get_range(object_, at, len, got.data(), info_);
    if (s.ok()) {
      EXPECT_TRUE(test::same_bytes(got, Bytes(data_->begin() + at, data_->begin() + at + len)));
    }
    return s;
  }

  static inline std::string why_;
  static inline Bytes* data_ = nullptr;
  static inline test::FaultProxy* proxy_ = nullptr;
  RemoteObject object_;
  std::unique_ptr<HttpClient> client_;
  ObjectInfo info_;
};

TEST_F(RemoteFaults, AResetMidBodyIsRetriedForTheRestOnly) {
  proxy_->set_faults(R"([{"kind": "reset", "after_bytes": 300000, "times": 2}])");
  const base::Status s = read(100, 2'000'000);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(client_->stats().retries, 2u);
  // What arrived before each reset was kept: the attempts after asked only for the rest.
  const std::string stats = proxy_->stats();
  EXPECT_NE(stats.find("bytes=100-2000099"), std::string::npos) << stats;
  EXPECT_EQ(stats.find("\"bytes=100-2000099\", \"bytes=100-2000099\""), std::string::npos) << stats;
}

TEST_F(RemoteFaults, ResetsEveryTimeAreEIONamingTheUrlAfterFiveAttempts) {
  proxy_->set_faults(R"([{"kind": "reset", "after_bytes": 0, "times": -1}])");
  const base::Status s = read(0, 100'000);
  EXPECT_EQ(s.code(), EIO);
  EXPECT_NE(s.message().find(proxy_->url("faults.bin")), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("5 attempts"), std::string::npos) << s.message();
  EXPECT_EQ(proxy_->gets(), 5u);
}

TEST_F(RemoteFaults, ServiceUnavailableAndTooManyRequestsAreRetriedHonouringRetryAfter) {
  proxy_->set_faults(R"([{"kind": "status", "status": 503, "times": 2},
                         {"kind": "status", "status": 429, "retry_after": 1, "times": 1}])");
  const auto start = std::chrono::steady_clock::now();
  const base::Status s = read(5000, 70'000);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(client_->stats().retries, 3u);
  EXPECT_EQ(proxy_->gets(), 4u);
  // Retry-After: 1 was waited (the backoff alone is at most 40 ms): a lower bound, never flaky.
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(1000));
}

TEST_F(RemoteFaults, AServerErrorThatLastsIsEIOWithItsStatus) {
  proxy_->set_faults(R"([{"kind": "status", "status": 500, "times": -1}])");
  const base::Status s = read(0, 1000);
  EXPECT_EQ(s.code(), EIO);
  EXPECT_NE(s.message().find("HTTP 500"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("5 attempts"), std::string::npos) << s.message();
}

TEST_F(RemoteFaults, ASlowFirstByteTimesOutAndIsRetried) {
  proxy_->set_faults(R"([{"kind": "slow", "delay_ms": 3000, "times": 1}])");
  const base::Status s = read(1'000'000, 500'000);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(client_->stats().retries, 1u);
}

TEST_F(RemoteFaults, AShortBodyIsAReadErrorNeverATruncation) {
  proxy_->set_faults(R"([{"kind": "short", "after_bytes": 1000, "times": 1}])");
  ASSERT_TRUE(read(0, 50'000).ok());
  EXPECT_EQ(client_->stats().retries, 1u);
  proxy_->set_faults(R"([{"kind": "short", "after_bytes": 1000, "times": -1}])");
  const base::Status s = read(0, 50'000);
  EXPECT_EQ(s.code(), EIO);
  EXPECT_NE(s.message().find("short"), std::string::npos) << s.message();
}

TEST_F(RemoteFaults, AShorterRangeThanAskedIsFollowedByTheRest) {
  proxy_->set_faults(R"([{"kind": "short_range", "bytes": 10000, "times": 3}])");
  ASSERT_TRUE(read(777, 100'000).ok());
  EXPECT_EQ(client_->stats().retries, 0u);  // a server may answer less: no failure
  EXPECT_EQ(proxy_->gets(), 4u);
}

TEST_F(RemoteFaults, AnObjectChangedBehindIfMatchIsESTALE) {
  proxy_->set_faults(R"([{"kind": "etag", "skip": 2, "times": -1}])");
  ASSERT_TRUE(read(0, 1000).ok());
  ASSERT_TRUE(read(1000, 1000).ok());
  const base::Status s = read(2000, 1000);
  EXPECT_EQ(s.code(), ESTALE) << s.message();
  EXPECT_NE(s.message().find("412"), std::string::npos) << s.message();
  EXPECT_EQ(client_->stats().retries, 0u);  // a changed object is never tried again
}

TEST_F(RemoteFaults, AnotherETagInTheReplyIsESTALEAndNoByteIsKept) {
  // A server that does not honour If-Match: the reply's own ETag gives the change away.
  proxy_->set_faults(R"([{"kind": "etag", "honour_if_match": false, "times": -1}])");
  Bytes got(50'000, 0xEE);
  const base::Status s = client_->get_range(object_, 0, got.size(), got.data(), info_);
  EXPECT_EQ(s.code(), ESTALE) << s.message();
  EXPECT_NE(s.message().find("ETag"), std::string::npos) << s.message();
  EXPECT_EQ(got, Bytes(got.size(), 0xEE));  // nothing of the new content was written
}

TEST_F(RemoteFaults, AServerThatIgnoresRangeIsRefusedWithoutReadingTheBody) {
  proxy_->set_faults(R"([{"kind": "ignore_range", "times": -1}])");
  const base::Status s = read(1000, 1000);
  EXPECT_EQ(s.code(), EIO);
  EXPECT_NE(s.message().find("ignores Range"), std::string::npos) << s.message();
  EXPECT_EQ(proxy_->gets(), 1u);  // refused at once, not tried again
  // The body was not read to its end: at most what came with the headers' first piece.
  EXPECT_LT(client_->stats().body_bytes, kObjectBytes / 4);
}

TEST_F(RemoteFaults, StatFallsBackToAGetWhenHeadIsRefused) {
  proxy_->set_faults(R"([{"kind": "status", "status": 403, "methods": ["HEAD"], "times": -1}])");
  base::Result<ObjectInfo> info = client_->stat(object_);
  ASSERT_TRUE(info.ok()) << info.status().message();
  EXPECT_EQ(info->size, kObjectBytes);
  EXPECT_EQ(info->etag, info_.etag);
}

TEST_F(RemoteFaults, ACancelledRequestStopsWithinASecond) {
  proxy_->set_faults(R"([{"kind": "slow", "delay_ms": 20000, "times": -1}])");
  HttpOptions options;
  options.stall_timeout = std::chrono::seconds(30);
  HttpClient patient(options);
  std::atomic<bool> cancel{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(milliseconds(300));
    cancel = true;
  });
  Bytes got(1000);
  const base::Status s = patient.get_range(object_, 0, got.size(), got.data(), info_, &cancel);
  stopper.join();
  EXPECT_EQ(s.code(), ECANCELED) << s.message();
}

}  // namespace
}  // namespace mibz2::io
