// S3 against moto on loopback: requests signed with SigV4 (libcurl's) read every byte; wrong
// credentials fail cleanly with no secret in the message; a public object reads anonymously and a
// private one does not; ListObjectsV2 pages through more keys than one page holds; the settings
// come from the environment as the AWS tools take them.
#include <gtest/gtest.h>

#include <cstdlib>

#include "io/http_client.h"
#include "io/remote_bytes.h"
#include "io/s3_listing.h"
#include "remote_servers.h"

namespace mibz2::io {
namespace {

using test::Bytes;

// Sets environment variables for its lifetime, and puts back what was there.
class ScopedEnvironment {
 public:
  void set(const std::string& name, const std::string& value) {
    if (!saved_.count(name)) {
      const char* old = std::getenv(name.c_str());
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnvironment() {
    for (const auto& [name, value] : saved_) {
      if (value) ::setenv(name.c_str(), value->c_str(), 1);
      else ::unsetenv(name.c_str());
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

class RemoteS3 : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    s3_ = test::S3Server::shared(&why);
    MIBZ2_NEED_SERVER(s3_, why);
    static bool filled = false;
    if (!filled) {
      s3_->make_bucket("mibz2-private");
      s3_->make_bucket("mibz2-public");
      filled = true;
    }
  }
  S3Settings settings(const std::string& key, const std::string& secret) const {
    S3Options o;
    o.key = key;
    o.secret = secret;
    o.endpoint_url = s3_->endpoint();
    o.region = s3_->region();
    return *resolve_s3_settings(o, [](const std::string&) { return std::nullopt; });
  }
  S3Settings good() const { return settings(s3_->key(), s3_->secret()); }
  static RemoteObject object(const S3Settings& s, const std::string& url) {
    return *remote_object(*parse_source_url(url), &s);
  }
  test::S3Server* s3_ = nullptr;
};

TEST_F(RemoteS3, SignedRequestsReadEveryByte) {
  const Bytes data = test::random_bytes(3'000'000, 41);
  s3_->put("mibz2-private", "dumps/signed dump.json.bz2", data);
  s3_->require_signatures(true);
  HttpClient client;
  const S3Settings s = good();
  const RemoteObject o = object(s, "s3://mibz2-private/dumps/signed dump.json.bz2");
  EXPECT_EQ(o.url, s3_->endpoint() + "/mibz2-private/dumps/signed%20dump.json.bz2");
  base::Result<ObjectInfo> info = client.stat(o);
  ASSERT_TRUE(info.ok()) << info.status().message();
  EXPECT_EQ(info->size, data.size());
  EXPECT_TRUE(info->strong_etag());
  Bytes got(1'000'000);
  const base::Status st = client.get_range(o, 1'500'000, got.size(), got.data(), *info);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(test::same_bytes(got, Bytes(data.begin() + 1'500'000, data.begin() + 2'500'000)));
  s3_->require_signatures(false);
}

TEST_F(RemoteS3, TemporaryCredentialsSignWithTheirSessionToken) {
  const Bytes data = test::random_bytes(100'000, 47);
  s3_->put("mibz2-private", "dumps/session.bz2", data);
  s3_->require_signatures(true);
  HttpClient client;
  S3Options o;
  o.key = s3_->session_key();
  o.secret = s3_->session_secret();
  o.token = s3_->session_token();
  o.endpoint_url = s3_->endpoint();
  const S3Settings s = *resolve_s3_settings(o, [](const std::string&) { return std::nullopt; });
  const RemoteObject good_token = object(s, "s3://mibz2-private/dumps/session.bz2");
  base::Result<ObjectInfo> info = client.stat(good_token);
  ASSERT_TRUE(info.ok()) << info.status().message();
  Bytes got(data.size());
  ASSERT_TRUE(client.get_range(good_token, 0, got.size(), got.data(), *info).ok());
  EXPECT_TRUE(test::same_bytes(got, data));
  // Another token (moto checks x-amz-security-token against the session's): refused, unnamed.
  const std::string wrong_token = s3_->session_token() + "Tampered";
  o.token = wrong_token;
  const S3Settings wrong = *resolve_s3_settings(o, [](const std::string&) { return std::nullopt; });
  info = client.stat(object(wrong, "s3://mibz2-private/dumps/session.bz2"));
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), EACCES) << info.status().message();
  EXPECT_EQ(info.status().message().find(wrong_token), std::string::npos) << info.status().message();
  EXPECT_EQ(info.status().message().find(s3_->session_secret()), std::string::npos) << info.status().message();
  s3_->require_signatures(false);
}

TEST_F(RemoteS3, WrongCredentialsFailCleanlyAndNameNoSecret) {
  s3_->put("mibz2-private", "dumps/guarded.bz2", test::random_bytes(1000, 42));
  s3_->require_signatures(true);
  HttpClient client;
  const std::string wrong_secret = "WrongSecretKeyThatMustNeverBeShown0123456";
  base::Result<ObjectInfo> info = client.stat(object(settings(s3_->key(), wrong_secret), "s3://mibz2-private/dumps/guarded.bz2"));
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), EACCES);
  const std::string m = info.status().message();
  EXPECT_NE(m.find("s3://mibz2-private/dumps/guarded.bz2"), std::string::npos) << m;
  EXPECT_NE(m.find("HTTP 403"), std::string::npos) << m;
  EXPECT_NE(m.find("SignatureDoesNotMatch"), std::string::npos) << m;  // the GET after HEAD says why
  EXPECT_EQ(m.find(wrong_secret), std::string::npos) << m;
  EXPECT_EQ(m.find(s3_->key()), std::string::npos) << m;
  EXPECT_EQ(client.stats().retries, 0u);

  info = client.stat(object(settings("AKIANOSUCHKEY0000000", "whatever"), "s3://mibz2-private/dumps/guarded.bz2"));
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), EACCES);
  EXPECT_EQ(info.status().message().find("AKIANOSUCHKEY0000000"), std::string::npos) << info.status().message();
  s3_->require_signatures(false);
}

TEST_F(RemoteS3, APublicObjectReadsAnonymouslyAndAPrivateOneDoesNot) {
  const Bytes data = test::random_bytes(200'000, 43);
  s3_->put("mibz2-public", "open/data.bz2", data, /*is_public=*/true);
  s3_->put("mibz2-public", "closed/data.bz2", data, /*is_public=*/false);
  S3Options o;
  o.anon = true;
  o.endpoint_url = s3_->endpoint();
  const S3Settings anon = *resolve_s3_settings(o, [](const std::string&) { return std::nullopt; });
  HttpClient client;
  const RemoteObject open = object(anon, "s3://mibz2-public/open/data.bz2");
  base::Result<ObjectInfo> info = client.stat(open);
  ASSERT_TRUE(info.ok()) << info.status().message();
  Bytes got(data.size());
  ASSERT_TRUE(client.get_range(open, 0, got.size(), got.data(), *info).ok());
  EXPECT_TRUE(test::same_bytes(got, data));
  base::Result<ObjectInfo> closed = client.stat(object(anon, "s3://mibz2-public/closed/data.bz2"));
  ASSERT_FALSE(closed.ok());
  EXPECT_EQ(closed.status().code(), EACCES) << closed.status().message();
}

TEST_F(RemoteS3, ListingPagesThroughMoreKeysThanAPageHolds) {
  for (int i = 0; i < 23; ++i) s3_->put("mibz2-private", "many/k" + std::to_string(100 + i) + ".bz2", test::to_bytes("x"));
  s3_->put("mibz2-private", "many/sub/deeper key+1.bz2", test::to_bytes("yy"));
  s3_->put("mibz2-private", "manyother", test::to_bytes("z"));
  HttpClient client;
  const S3Settings s = good();
  base::Result<S3Listing> all = list_s3_objects(client, s, "mibz2-private", "many/", "", /*page_keys=*/5);
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_EQ(all->objects.size(), 24u);
  EXPECT_EQ(all->pages, 5u);
  EXPECT_EQ(all->objects[0].key, "many/k100.bz2");
  EXPECT_EQ(all->objects[0].size, 1u);
  EXPECT_EQ(all->objects.back().key, "many/sub/deeper key+1.bz2");
  EXPECT_EQ(all->objects.back().size, 2u);
  // One level, with the delimiter: the keys and the prefix below.
  base::Result<S3Listing> level = list_s3_objects(client, s, "mibz2-private", "many/", "/", 10);
  ASSERT_TRUE(level.ok()) << level.status().message();
  EXPECT_EQ(level->objects.size(), 23u);
  EXPECT_EQ(level->prefixes, std::vector<std::string>{"many/sub/"});
  // Signed: moto checks the signature of the query too (a prefix without '/': see s3_server.py).
  s3_->require_signatures(true);
  base::Result<S3Listing> signed_list = list_s3_objects(client, s, "mibz2-private", "many", "", 7);
  s3_->require_signatures(false);
  ASSERT_TRUE(signed_list.ok()) << signed_list.status().message();
  EXPECT_EQ(signed_list->objects.size(), 25u);  // "manyother" too
  EXPECT_EQ(signed_list->pages, 4u);
  // A bucket that does not exist.
  base::Result<S3Listing> none = list_s3_objects(client, s, "mibz2-no-such-bucket", "");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), ENOENT) << none.status().message();
}

TEST_F(RemoteS3, TheEnvironmentAsAwsUsersSetItOpensAnObject) {
  const Bytes data = test::random_bytes(5 << 20, 44);
  s3_->put("mibz2-private", "env/dump.bz2", data);
  s3_->require_signatures(true);
  {
    test::TempDir home;
    ScopedEnvironment env;
    env.set("HOME", home.path().string());
    env.set("AWS_ENDPOINT_URL", s3_->endpoint());
    env.set("AWS_ACCESS_KEY_ID", s3_->key());
    env.set("AWS_SECRET_ACCESS_KEY", s3_->secret());
    env.set("AWS_DEFAULT_REGION", s3_->region());
    base::Result<std::unique_ptr<RemoteBytes>> source =
        open_remote_bytes(std::make_shared<HttpClient>(), "s3://mibz2-private/env/dump.bz2");
    ASSERT_TRUE(source.ok()) << source.status().message();
    Bytes got(data.size());
    for (uint64_t at = 0; at < data.size(); at += 1 << 20) {
      const SourceRead r = (*source)->read(at, 1 << 20, got.data() + at);
      ASSERT_FALSE(r.failed()) << r.describe() << ": " << (*source)->last_failure().message();
    }
    EXPECT_TRUE(test::same_bytes(got, data));
  }
  s3_->require_signatures(false);
}

TEST_F(RemoteS3, AReplacedObjectIsChangedForItsOldOpen) {
  s3_->put("mibz2-private", "replaced.bz2", test::random_bytes(300'000, 45));
  HttpClient client;
  const RemoteObject o = object(good(), "s3://mibz2-private/replaced.bz2");
  base::Result<ObjectInfo> info = client.stat(o);
  ASSERT_TRUE(info.ok());
  s3_->put("mibz2-private", "replaced.bz2", test::random_bytes(300'000, 46));
  Bytes got(1000);
  EXPECT_EQ(client.get_range(o, 0, got.size(), got.data(), *info).code(), ESTALE);
}

}  // namespace
}  // namespace mibz2::io
