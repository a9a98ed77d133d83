// The HTTP client against nginx on loopback: stat, range reads byte for byte, HTTPS with the
// test's own certificate (HTTP/2), an untrusted certificate, a missing object, a replaced one.
#include <gtest/gtest.h>

#include "io/http_client.h"
#include "remote_servers.h"

namespace mibz2::io {
namespace {

using test::Bytes;
using test::NginxServer;

RemoteObject object_at(const std::string& url) {
  base::Result<SourceUrl> u = parse_source_url(url);
  EXPECT_TRUE(u.ok()) << u.status().message();
  return *remote_object(*u);
}

class RemoteHttp : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    nginx_ = NginxServer::shared(&why);
    MIBZ2_NEED_SERVER(nginx_, why);
  }
  // A file of `size` random bytes served under a name of this test's.
  Bytes serve(const std::string& name, size_t size, uint64_t seed = 1) {
    Bytes data = test::random_bytes(size, seed);
    nginx_->put(name, data);
    return data;
  }
  NginxServer* nginx_ = nullptr;
};

TEST_F(RemoteHttp, StatsAndReadsRangesByteForByte) {
  const Bytes data = serve("http-ranges.bin", 3'000'001);
  HttpClient client;
  const RemoteObject object = object_at(nginx_->url("http-ranges.bin"));
  base::Result<ObjectInfo> info = client.stat(object);
  ASSERT_TRUE(info.ok()) << info.status().message();
  EXPECT_EQ(info->size, data.size());
  EXPECT_TRUE(info->strong_etag()) << info->etag;
  EXPECT_FALSE(info->last_modified.empty());
  test::Rng rng(3);
  for (int i = 0; i < 50; ++i) {
    const uint64_t at = rng.below(static_cast<uint32_t>(data.size()));
    const size_t len = 1 + rng.below(static_cast<uint32_t>(std::min<uint64_t>(data.size() - at, 700'000)));
    Bytes got(len);
    const base::Status s = client.get_range(object, at, len, got.data(), *info);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_TRUE(test::same_bytes(got, Bytes(data.begin() + at, data.begin() + at + len))) << at << "+" << len;
  }
  // The whole object (a 200 would be right for it too), and its last byte.
  Bytes all(data.size());
  ASSERT_TRUE(client.get_range(object, 0, all.size(), all.data(), *info).ok());
  EXPECT_TRUE(test::same_bytes(all, data));
  uint8_t last = 0;
  ASSERT_TRUE(client.get_range(object, data.size() - 1, 1, &last, *info).ok());
  EXPECT_EQ(last, data.back());
  // Past the end is the caller's mistake, said as such.
  EXPECT_EQ(client.get_range(object, data.size(), 1, &last, *info).code(), EINVAL);
  EXPECT_EQ(client.stats().retries, 0u);
}

TEST_F(RemoteHttp, AnEmptyObjectHasSizeZero) {
  serve("http-empty.bin", 0);
  HttpClient client;
  base::Result<ObjectInfo> info = client.stat(object_at(nginx_->url("http-empty.bin")));
  ASSERT_TRUE(info.ok()) << info.status().message();
  EXPECT_EQ(info->size, 0u);
}

TEST_F(RemoteHttp, AMissingObjectIsENOENTNamingTheUrlAndStatus) {
  HttpClient client;
  base::Result<ObjectInfo> info = client.stat(object_at(nginx_->url("no-such-object.bz2?token=s3cr3t")));
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), ENOENT);
  const std::string m = info.status().message();
  EXPECT_NE(m.find("/no-such-object.bz2?token=REDACTED"), std::string::npos) << m;
  EXPECT_NE(m.find("HTTP 404"), std::string::npos) << m;
  EXPECT_EQ(m.find("s3cr3t"), std::string::npos) << m;
  EXPECT_EQ(client.stats().retries, 0u);  // a 404 is no transient failure
}

TEST_F(RemoteHttp, APasswordInTheUrlNeverAppearsInAMessage) {
  HttpOptions options;
  options.first_backoff = std::chrono::milliseconds(1);
  options.max_backoff = std::chrono::milliseconds(2);
  options.connect_timeout = std::chrono::milliseconds(2000);
  HttpClient client(options);
  // Port 1 on loopback: nothing listens there; the connection is refused, five times.
  base::Result<ObjectInfo> info = client.stat(object_at("http://alice:pw-never-shown@127.0.0.1:1/x.bz2"));
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), EIO);
  const std::string m = info.status().message();
  EXPECT_EQ(m.find("pw-never-shown"), std::string::npos) << m;
  EXPECT_EQ(m.find("alice"), std::string::npos) << m;
  EXPECT_NE(m.find("http://127.0.0.1:1/x.bz2"), std::string::npos) << m;
  EXPECT_NE(m.find("5 attempts"), std::string::npos) << m;
}

TEST_F(RemoteHttp, HttpsWithTheTestsCertificateSpeaksHttp2) {
  const Bytes data = serve("https.bin", 1'000'000, 5);
  HttpOptions options;
  options.ca_bundle = nginx_->ca_file();
  HttpClient client(options);
  const RemoteObject object = object_at(nginx_->https_url("https.bin"));
  base::Result<ObjectInfo> info = client.stat(object);
  ASSERT_TRUE(info.ok()) << info.status().message();
  Bytes got(200'000);
  ASSERT_TRUE(client.get_range(object, 123'456, got.size(), got.data(), *info).ok());
  EXPECT_TRUE(test::same_bytes(got, Bytes(data.begin() + 123'456, data.begin() + 123'456 + got.size())));
  EXPECT_EQ(client.stats().http2_requests, client.stats().requests);
}

TEST_F(RemoteHttp, CurlCaBundleNamesTheCertificateToTrust) {
  serve("https-env.bin", 1000, 6);
  HttpClient client(HttpOptions::from_environment([&](const std::string& name) -> std::optional<std::string> {
    if (name == "CURL_CA_BUNDLE") return nginx_->ca_file();
    return std::nullopt;
  }));
  EXPECT_TRUE(client.stat(object_at(nginx_->https_url("https-env.bin"))).ok());
}

TEST_F(RemoteHttp, AnUntrustedCertificateFailsAtOnceSayingHowToTrustIt) {
  serve("https-untrusted.bin", 1000, 7);
  HttpOptions options;
  options.ca_bundle = "";  // the system's CAs, which never signed the test's certificate
  HttpClient client(options);
  base::Result<ObjectInfo> info = client.stat(object_at(nginx_->https_url("https-untrusted.bin")));
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), EIO);
  EXPECT_NE(info.status().message().find("CURL_CA_BUNDLE"), std::string::npos) << info.status().message();
  EXPECT_EQ(client.stats().retries, 0u);
}

TEST_F(RemoteHttp, AwsCaBundleNamesTheCertificateOfAnS3Endpoint) {
  // nginx over HTTPS stands for an S3-compatible store read anonymously: path-style, the bucket
  // is a directory of its root.
  const Bytes data = serve("ca-bucket/dump.bz2", 5000, 12);
  HttpOptions options;
  options.ca_bundle = "";  // the client's own default: the system's CAs
  HttpClient client(options);
  S3Options o;
  o.anon = true;
  o.endpoint_url = nginx_->https_url("");
  const auto env_with = [&](bool ca) {
    return [&, ca](const std::string& name) -> std::optional<std::string> {
      if (ca && name == "AWS_CA_BUNDLE") return nginx_->ca_file();
      return std::nullopt;
    };
  };
  base::Result<S3Settings> trusted = resolve_s3_settings(o, env_with(true));
  ASSERT_TRUE(trusted.ok()) << trusted.status().message();
  base::Result<ObjectInfo> info = client.stat(*remote_object(*parse_source_url("s3://ca-bucket/dump.bz2"), &*trusted));
  ASSERT_TRUE(info.ok()) << info.status().message();
  EXPECT_EQ(info->size, data.size());
  base::Result<S3Settings> untrusted = resolve_s3_settings(o, env_with(false));
  info = client.stat(*remote_object(*parse_source_url("s3://ca-bucket/dump.bz2"), &*untrusted));
  ASSERT_FALSE(info.ok());
  EXPECT_NE(info.status().message().find("AWS_CA_BUNDLE"), std::string::npos) << info.status().message();
}

TEST_F(RemoteHttp, AReplacedObjectIsESTALEForTheOldIdentity) {
  serve("http-replaced.bin", 100'000, 8);
  HttpClient client;
  const RemoteObject object = object_at(nginx_->url("http-replaced.bin"));
  base::Result<ObjectInfo> before = client.stat(object);
  ASSERT_TRUE(before.ok());
  const Bytes next = serve("http-replaced.bin", 100'001, 9);  // a new file: another size and ETag
  Bytes got(1000);
  const base::Status s = client.get_range(object, 0, got.size(), got.data(), *before);
  EXPECT_EQ(s.code(), ESTALE) << s.message();
  EXPECT_NE(s.message().find("changed"), std::string::npos) << s.message();
  // The next open sees the new content.
  base::Result<ObjectInfo> after = client.stat(object);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->size, next.size());
  EXPECT_NE(after->etag, before->etag);
  ASSERT_TRUE(client.get_range(object, 0, got.size(), got.data(), *after).ok());
  EXPECT_TRUE(test::same_bytes(got, Bytes(next.begin(), next.begin() + got.size())));
  // Gone altogether: also no longer the content opened.
  std::filesystem::remove(nginx_->root() / "http-replaced.bin");
  EXPECT_EQ(client.get_range(object, 0, got.size(), got.data(), *after).code(), ESTALE);
}

TEST_F(RemoteHttp, ConnectionsAreKeptAndReused) {
  serve("http-reuse.bin", 100'000, 10);
  std::string why;
  std::unique_ptr<test::FaultProxy> proxy = test::FaultProxy::start(nginx_->base(), &why);
  MIBZ2_NEED_SERVER(proxy, why);
  HttpClient client;
  const RemoteObject object = object_at(proxy->url("http-reuse.bin"));
  base::Result<ObjectInfo> info = client.stat(object);
  ASSERT_TRUE(info.ok());
  Bytes got(1000);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(client.get_range(object, 1000 * i, 1000, got.data(), *info).ok());
  EXPECT_EQ(std::stoi(test::json_field(proxy->stats(), "connections")), 1) << proxy->stats();
}

}  // namespace
}  // namespace mibz2::io
