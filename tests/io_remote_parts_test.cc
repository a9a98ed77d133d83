// The parts of remote sources that need no server: URLs taken apart and redacted, S3 settings from
// an environment and AWS files, the URLs of S3 requests, a listing's XML, which reads are
// sequential, and the cache of fetched extents.
#include <gtest/gtest.h>

#include <map>

#include "io/aws_profile.h"
#include "io/range_cache.h"
#include "io/remote_object.h"
#include "io/s3_listing.h"
#include "io/s3_settings.h"
#include "io/sequential_reads.h"
#include "io/source_url.h"
#include "test_support.h"

namespace mibz2::io {
namespace {

using test::TempDir;

// ---- URLs ---------------------------------------------------------------------------------------

TEST(RemotePartsUrl, TellsUrlsFromPaths) {
  EXPECT_TRUE(is_url("http://h/x"));
  EXPECT_TRUE(is_url("HTTPS://h/x"));
  EXPECT_TRUE(is_url("s3://bucket/key"));
  EXPECT_FALSE(is_url("dumps/x.bz2"));
  EXPECT_FALSE(is_url("/http://x"));
  EXPECT_FALSE(is_url("ftp://h/x"));
  EXPECT_FALSE(is_url("http:/h"));
}

TEST(RemotePartsUrl, TakesHttpApart) {
  base::Result<SourceUrl> u = parse_source_url("https://user:pw@dumps.example.org:8443/a/b%20c.json.bz2?x=1#frag");
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ(u->scheme, UrlScheme::kHttps);
  EXPECT_EQ(u->url, "https://user:pw@dumps.example.org:8443/a/b%20c.json.bz2?x=1");  // no fragment
  EXPECT_EQ(u->path, "/a/b%20c.json.bz2");
  EXPECT_EQ(object_name(*u), "b c.json.bz2");
  EXPECT_FALSE(u->is_prefix());

  base::Result<SourceUrl> root = parse_source_url("http://[::1]:8080");
  ASSERT_TRUE(root.ok()) << root.status().message();
  EXPECT_EQ(root->path, "/");
  EXPECT_EQ(object_name(*root), "");  // a directory has no object name
}

TEST(RemotePartsUrl, TakesS3Apart) {
  base::Result<SourceUrl> u = parse_source_url("s3://my-bucket/dumps/2026/latest%20all.json.bz2");
  ASSERT_TRUE(u.ok());
  EXPECT_TRUE(u->is_s3());
  EXPECT_EQ(u->bucket, "my-bucket");
  EXPECT_EQ(u->key, "dumps/2026/latest%20all.json.bz2");  // literal, as the AWS tools take it
  EXPECT_EQ(object_name(*u), "latest%20all.json.bz2");
  EXPECT_FALSE(u->is_prefix());
  EXPECT_TRUE(parse_source_url("s3://my-bucket/dumps/")->is_prefix());
  EXPECT_TRUE(parse_source_url("s3://my-bucket")->is_prefix());
  EXPECT_EQ(object_name(*parse_source_url("s3://my-bucket/dumps/")), "");
  EXPECT_EQ(parse_source_url("s3://my-bucket/a key with spaces")->key, "a key with spaces");
}

TEST(RemotePartsUrl, RefusesWhatIsNoUrl) {
  for (const char* bad : {"http://", "http:///path", "https://host:99999/x", "https://host:ab/x", "s3://",
                          "s3:///key", "http://host/a b", "http://host/a\nb", "s3://bkt/a\tb", "gopher://x/y"}) {
    base::Result<SourceUrl> u = parse_source_url(bad);
    EXPECT_FALSE(u.ok()) << bad;
    if (!u.ok()) {
      EXPECT_EQ(u.status().code(), EINVAL) << bad;
    }
  }
}

TEST(RemotePartsUrl, NamesThatCannotBeFileNamesAreNone) {
  EXPECT_EQ(object_name(*parse_source_url("http://h/a/%2E%2E")), "");
  EXPECT_EQ(object_name(*parse_source_url("http://h/a/x%2Fy")), "");
  EXPECT_EQ(object_name(*parse_source_url("http://h/a/x%00y")), "");
  EXPECT_EQ(object_name(*parse_source_url("http://h/a/dump.bz2?download=1")), "dump.bz2");
}

TEST(RemotePartsUrl, RedactsEverySecretItCarries) {
  const std::string presigned =
      "https://bucket.s3.amazonaws.com/k.bz2?X-Amz-Algorithm=AWS4-HMAC-SHA256"
      "&X-Amz-Credential=AKIAEXAMPLE%2F20261203%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261203T000000Z"
      "&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Security-Token=SESSIONTOKEN&X-Amz-Signature=abcdef0123";
  const std::string shown = redacted_url(presigned);
  for (const char* secret : {"AKIAEXAMPLE", "SESSIONTOKEN", "abcdef0123"}) EXPECT_EQ(shown.find(secret), std::string::npos) << shown;
  EXPECT_NE(shown.find("X-Amz-Expires=3600"), std::string::npos) << shown;  // what is no secret stays
  EXPECT_NE(shown.find("X-Amz-Signature=REDACTED"), std::string::npos) << shown;

  EXPECT_EQ(redacted_url("https://alice:hunter2@host/x?a=1&access_token=t0k&sig=s1g&Signature=S&AWSAccessKeyId=K"),
            "https://host/x?a=1&access_token=REDACTED&sig=REDACTED&Signature=REDACTED&AWSAccessKeyId=REDACTED");
  EXPECT_EQ(redacted_url("http://h/p?token=abc#frag"), "http://h/p?token=REDACTED#frag");
  EXPECT_EQ(redacted_url("not a url?password=x"), "not a url?password=REDACTED");
  // A URL refused as no URL is named redacted in its message too.
  base::Result<SourceUrl> bad = parse_source_url("https://u:topsecret@host:bad/x");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().find("topsecret"), std::string::npos) << bad.status().message();
}

TEST(RemotePartsUrl, EncodesAsSigV4Signs) {
  EXPECT_EQ(percent_encode("a b+c=d&e/f~g_h-i.j", true), "a%20b%2Bc%3Dd%26e/f~g_h-i.j");
  EXPECT_EQ(percent_encode("a/b", false), "a%2Fb");
  EXPECT_EQ(percent_encode("\xc3\xbc", true), "%C3%BC");
  EXPECT_EQ(percent_decode("a%20b%2fc%zz%4"), "a b/c%zz%4");
}

// ---- S3 settings --------------------------------------------------------------------------------

// An environment of the test's own, with HOME in a scratch directory (no ~/.aws of the machine).
struct FakeEnvironment {
  TempDir home;
  std::map<std::string, std::string> vars{{"HOME", home.path().string()}};
  EnvironmentLookup lookup() const {
    return [this](const std::string& name) -> std::optional<std::string> {
      const auto it = vars.find(name);
      return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
  }
  void write_aws(const std::string& file, const std::string& text) const {
    std::filesystem::create_directories(home.path() / ".aws");
    const std::string t = text;
    test::write_file(home.path() / ".aws" / file, {reinterpret_cast<const uint8_t*>(t.data()), t.size()});
  }
};

TEST(RemotePartsS3Settings, NoCredentialsAnywhereIsAnonymousOnAws) {
  FakeEnvironment env;
  base::Result<S3Settings> s = resolve_s3_settings({}, env.lookup());
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_TRUE(s->anonymous);
  EXPECT_EQ(s->region, "us-east-1");
  EXPECT_EQ(s->endpoint_url, "");
  EXPECT_EQ(s3_object_url(*s, "my-bucket", "dumps/a b.bz2"), "https://my-bucket.s3.us-east-1.amazonaws.com/dumps/a%20b.bz2");
  // A bucket name that cannot be a host name under AWS's certificate: path style.
  EXPECT_EQ(s3_object_url(*s, "my.bucket", "k"), "https://s3.us-east-1.amazonaws.com/my.bucket/k");
}

TEST(RemotePartsS3Settings, TheEnvironmentGivesKeysRegionAndEndpoint) {
  FakeEnvironment env;
  env.vars["AWS_ACCESS_KEY_ID"] = "AKIDENV";
  env.vars["AWS_SECRET_ACCESS_KEY"] = "secretenv";
  env.vars["AWS_SESSION_TOKEN"] = "tokenenv";
  env.vars["AWS_DEFAULT_REGION"] = "eu-west-3";
  env.vars["AWS_ENDPOINT_URL"] = "http://127.0.0.1:9000/";
  env.vars["AWS_CA_BUNDLE"] = "/etc/my-ca.pem";
  base::Result<S3Settings> s = resolve_s3_settings({}, env.lookup());
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_FALSE(s->anonymous);
  EXPECT_EQ(s->credentials.access_key_id, "AKIDENV");
  EXPECT_EQ(s->credentials.secret_access_key, "secretenv");
  EXPECT_EQ(s->credentials.session_token, "tokenenv");
  EXPECT_EQ(s->credentials_from, "the environment");
  EXPECT_EQ(s->region, "eu-west-3");
  EXPECT_EQ(s->ca_bundle, "/etc/my-ca.pem");
  // A custom endpoint is addressed path-style.
  EXPECT_EQ(s3_object_url(*s, "bkt", "a/b+c"), "http://127.0.0.1:9000/bkt/a/b%2Bc");
  // AWS_REGION wins over AWS_DEFAULT_REGION, AWS_ENDPOINT_URL_S3 over AWS_ENDPOINT_URL.
  env.vars["AWS_REGION"] = "ap-south-1";
  env.vars["AWS_ENDPOINT_URL_S3"] = "https://s3.example.org";
  s = resolve_s3_settings({}, env.lookup());
  EXPECT_EQ(s->region, "ap-south-1");
  EXPECT_EQ(s3_object_url(*s, "bkt", "k"), "https://s3.example.org/bkt/k");
}

TEST(RemotePartsS3Settings, ProfilesComeFromTheSharedFiles) {
  FakeEnvironment env;
  env.write_aws("credentials",
                "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = secretdefault\n\n"
                "# a comment\n[dev]\naws_access_key_id=AKIDDEV\naws_secret_access_key=secretdev\n"
                "aws_session_token = tokendev\n");
  env.write_aws("config",
                "[default]\nregion = us-west-2\n[profile dev]\nregion = eu-central-1\n"
                "endpoint_url = http://minio.local:9000\ns3 =\n  addressing_style = path\n  region = nested-ignored\n");
  base::Result<S3Settings> s = resolve_s3_settings({}, env.lookup());
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->credentials.access_key_id, "AKIDDEFAULT");
  EXPECT_EQ(s->region, "us-west-2");
  EXPECT_EQ(s->endpoint_url, "");

  env.vars["AWS_PROFILE"] = "dev";
  s = resolve_s3_settings({}, env.lookup());
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->credentials.access_key_id, "AKIDDEV");
  EXPECT_EQ(s->credentials.session_token, "tokendev");
  EXPECT_EQ(s->region, "eu-central-1");  // the nested s3 block's region is not the profile's
  EXPECT_EQ(s->endpoint_url, "http://minio.local:9000");
  EXPECT_NE(s->credentials_from.find("dev"), std::string::npos);

  // The files where AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE say.
  TempDir other;
  const std::string creds = "[dev]\naws_access_key_id = AKIDOTHER\naws_secret_access_key = s\n";
  env.vars["AWS_SHARED_CREDENTIALS_FILE"] =
      other.write("c", {reinterpret_cast<const uint8_t*>(creds.data()), creds.size()}).string();
  env.vars["AWS_CONFIG_FILE"] = (other.path() / "none").string();
  s = resolve_s3_settings({}, env.lookup());
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->credentials.access_key_id, "AKIDOTHER");
  EXPECT_EQ(s->region, "us-east-1");
}

TEST(RemotePartsS3Settings, OptionsWinAndAnonIsAnonymous) {
  FakeEnvironment env;
  env.vars["AWS_ACCESS_KEY_ID"] = "AKIDENV";
  env.vars["AWS_SECRET_ACCESS_KEY"] = "secretenv";
  env.vars["AWS_SESSION_TOKEN"] = "tokenenv";
  S3Options o;
  o.key = "AKIDOPT";
  o.secret = "secretopt";
  o.region = "sa-east-1";
  o.endpoint_url = "https://store.example:444";
  base::Result<S3Settings> s = resolve_s3_settings(o, env.lookup());
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->credentials.access_key_id, "AKIDOPT");
  EXPECT_EQ(s->credentials.session_token, "");  // the environment's token is not mixed in
  EXPECT_EQ(s->credentials_from, "the options");
  EXPECT_EQ(s->region, "sa-east-1");
  EXPECT_EQ(s->endpoint_url, "https://store.example:444");
  S3Options anon;
  anon.anon = true;
  s = resolve_s3_settings(anon, env.lookup());
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->anonymous);
  base::Result<RemoteObject> object = remote_object(*parse_source_url("s3://bkt/k"), &*s);
  ASSERT_TRUE(object.ok());
  EXPECT_TRUE(object->credentials.empty());  // an anonymous request carries no key
}

TEST(RemotePartsS3Settings, HalfCredentialsAndMissingProfilesAreErrorsThatNameNoSecret) {
  FakeEnvironment env;
  env.vars["AWS_SECRET_ACCESS_KEY"] = "lonelysecret";
  base::Result<S3Settings> s = resolve_s3_settings({}, env.lookup());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), EINVAL);
  EXPECT_NE(s.status().message().find("AWS_ACCESS_KEY_ID"), std::string::npos);
  EXPECT_EQ(s.status().message().find("lonelysecret"), std::string::npos);

  FakeEnvironment env2;
  env2.vars["AWS_PROFILE"] = "nosuch";
  s = resolve_s3_settings({}, env2.lookup());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), ENOENT);
  EXPECT_NE(s.status().message().find("'nosuch'"), std::string::npos);

  FakeEnvironment env3;
  env3.vars["AWS_ENDPOINT_URL"] = "ftp://x";
  s = resolve_s3_settings({}, env3.lookup());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), EINVAL);
}

TEST(RemotePartsS3Settings, ListUrlsAreSortedAndEncodedForSigning) {
  S3Settings s;
  s.endpoint_url = "http://127.0.0.1:9000";
  EXPECT_EQ(s3_list_url(s, "bkt", "dumps/2026/", "1/abc+=", "/", 10),
            "http://127.0.0.1:9000/bkt?continuation-token=1%2Fabc%2B%3D&delimiter=%2F&encoding-type=url&list-type=2"
            "&max-keys=10&prefix=dumps%2F2026%2F");
  S3Settings aws;
  aws.region = "eu-west-1";
  EXPECT_EQ(s3_list_url(aws, "bkt", ""), "https://bkt.s3.eu-west-1.amazonaws.com/?encoding-type=url&list-type=2&prefix=");
  EXPECT_EQ(s3_object_url(aws, "bkt", ""), "https://bkt.s3.eu-west-1.amazonaws.com/");
  S3Settings china;
  china.region = "cn-north-1";
  EXPECT_EQ(s3_object_url(china, "bkt", "k"), "https://bkt.s3.cn-north-1.amazonaws.com.cn/k");
}

TEST(RemotePartsS3Settings, IniSectionsAndNestedBlocks) {
  const auto sections = parse_ini("top = 1\n[ a ]\nK = v \n; c\n#c\nempty =\n  nested = x\nafter = y\n[b]\nz=1=2\n");
  ASSERT_EQ(sections.count("a"), 1u);
  EXPECT_EQ(sections.at("a").at("k"), "v");
  EXPECT_EQ(sections.at("a").count("nested"), 0u);
  EXPECT_EQ(sections.at("a").at("after"), "y");
  EXPECT_EQ(sections.at("b").at("z"), "1=2");
  EXPECT_EQ(sections.count(""), 0u);  // a key before any section belongs to none
}

// ---- a listing's page ---------------------------------------------------------------------------

TEST(RemotePartsListing, ReadsAPageOfKeysPrefixesAndTheNextToken) {
  const std::string xml =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<Name>bkt</Name><Prefix>d/</Prefix><KeyCount>2</KeyCount><MaxKeys>2</MaxKeys><IsTruncated>true</IsTruncated>"
      "<EncodingType>url</EncodingType>"
      "<Contents><Key>d/a+b%2Bc%C3%BC.bz2</Key><LastModified>2026-12-03T14:35:41.000Z</LastModified>"
      "<ETag>&quot;abc&quot;</ETag><Size>12345</Size><StorageClass>STANDARD</StorageClass></Contents>"
      "<Contents><Key>d/x%26y</Key><LastModified>2026-12-03T14:35:42.000Z</LastModified><ETag>\"def-2\"</ETag>"
      "<Size>0</Size></Contents>"
      "<CommonPrefixes><Prefix>d/sub%2F</Prefix></CommonPrefixes>"
      "<NextContinuationToken>tok/en==</NextContinuationToken></ListBucketResult>";
  S3Listing listing;
  std::string next;
  ASSERT_TRUE(parse_list_page(xml, listing, &next));
  ASSERT_EQ(listing.objects.size(), 2u);
  EXPECT_EQ(listing.objects[0].key, "d/a b+c\xc3\xbc.bz2");
  EXPECT_EQ(listing.objects[0].size, 12345u);
  EXPECT_EQ(listing.objects[0].etag, "\"abc\"");
  EXPECT_EQ(listing.objects[0].last_modified, "2026-12-03T14:35:41.000Z");
  EXPECT_EQ(listing.objects[1].key, "d/x&y");
  EXPECT_EQ(listing.prefixes, std::vector<std::string>{"d/sub/"});
  EXPECT_EQ(next, "tok/en==");
  // Truncated without a token, or no listing at all: refused (never a loop, never a guess).
  S3Listing other;
  EXPECT_FALSE(parse_list_page("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>", other, &next));
  EXPECT_FALSE(parse_list_page("<Error><Code>NoSuchBucket</Code></Error>", other, &next));
  EXPECT_TRUE(parse_list_page("<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>", other, &next));
  EXPECT_EQ(next, "");
}

// ---- which reads are sequential -----------------------------------------------------------------

TEST(RemotePartsSequential, AScanIsSequentialAndRandomReadsAreNot) {
  SequentialReads reads;
  EXPECT_FALSE(reads.note(0, 256 << 10).sequential);
  EXPECT_FALSE(reads.note((256 << 10) - 4, 512 << 10).sequential);  // continued, 512 KiB
  // Continued twice, 1.5 MiB covered: still what a random read of a few blocks covers.
  EXPECT_FALSE(reads.note((512 << 10) - 4, (1 << 20) + (512 << 10)).sequential);
  const SequentialReads::Seen fourth = reads.note((1 << 20) + (512 << 10), 3 << 20);
  EXPECT_TRUE(fourth.sequential);
  EXPECT_EQ(fourth.front, 3u << 20);
  EXPECT_EQ(fourth.covered, 3u << 20);
  // A decode behind the front keeps the stream (also after other streams started).
  EXPECT_FALSE(reads.note(500u << 20, (500u << 20) + 300000).sequential);
  EXPECT_FALSE(reads.note(200u << 20, (200u << 20) + 300000).sequential);
  EXPECT_FALSE(reads.note(300u << 20, (300u << 20) + 300000).sequential);
  EXPECT_TRUE(reads.note(100000, 400000).sequential);
  EXPECT_TRUE(reads.note(3 << 20, 4 << 20).sequential);

  SequentialReads random;
  test::Rng rng(7);
  for (int i = 0; i < 200; ++i) {
    const uint64_t at = static_cast<uint64_t>(rng.below(1u << 30)) * 16;
    EXPECT_FALSE(random.note(at, at + 300000).sequential) << i;
  }
}

TEST(RemotePartsSequential, BlocksReadSlightlyOutOfOrderAreOneStream) {
  SequentialReads reads;
  const uint64_t b = 300000;  // blocks of 300 kB read by parallel decoders: 0, 2, 1, 3, 5, 4, ...
  for (uint64_t i : {0, 2, 1, 3, 5, 4, 6, 8, 7, 9, 11, 10, 12, 14, 13}) reads.note(i * b, (i + 1) * b + 6);
  const SequentialReads::Seen seen = reads.note(15 * b, 16 * b + 6);
  EXPECT_TRUE(seen.sequential);
  EXPECT_EQ(seen.front, 16 * b + 6);
}

TEST(RemotePartsSequential, ReadsThatSkipBlocksAreNotSequential) {
  SequentialReads reads;
  const uint64_t b = 300000;  // every other block, as a sample of an index's blocks reads them
  for (uint64_t i = 0; i < 40; i += 2) EXPECT_FALSE(reads.note(i * b, (i + 1) * b + 6).sequential) << i;
}

// ---- the cache of extents -----------------------------------------------------------------------

TEST(RemotePartsRangeCache, CoversWithExtentsAndGapsAndEvictsTheLeastRecentlyUsed) {
  RangeCache cache(100);
  auto a = cache.add(10, 30, false);
  auto b = cache.add(50, 70, false);
  const std::vector<RangeCache::Piece> pieces = cache.cover(0, 100);
  ASSERT_EQ(pieces.size(), 5u);
  EXPECT_EQ(pieces[0].extent, nullptr);
  EXPECT_EQ(pieces[0].end, 10u);
  EXPECT_EQ(pieces[1].extent, a);
  EXPECT_EQ(pieces[2].begin, 30u);
  EXPECT_EQ(pieces[2].end, 50u);
  EXPECT_EQ(pieces[3].extent, b);
  EXPECT_EQ(pieces[4].begin, 70u);
  EXPECT_EQ(cache.room_around(35, 40), (std::pair<uint64_t, uint64_t>(30, 50)));
  EXPECT_EQ(cache.cover(15, 20).size(), 1u);
  cache.ready(a);
  cache.ready(b);
  EXPECT_EQ(cache.held_bytes(), 40u);
  cache.touch(*a);  // b is now the least recently used
  auto c = cache.add(80, 150, false);
  cache.ready(c);  // 110 > 100: b goes
  EXPECT_EQ(cache.held_bytes(), 90u);
  EXPECT_EQ(cache.cover(50, 70)[0].extent, nullptr);
  EXPECT_EQ(cache.cover(10, 30)[0].extent, a);
  EXPECT_EQ(b->state, Extent::State::kReady);  // its holders keep its bytes

  // Read-ahead nobody used yet goes last.
  RangeCache ra(100);
  auto unused = ra.add(0, 40, true);
  auto old = ra.add(40, 80, false);
  ra.ready(unused);
  ra.ready(old);
  auto fresh = ra.add(80, 120, false);
  ra.ready(fresh);
  EXPECT_EQ(ra.cover(40, 80)[0].extent, nullptr);
  EXPECT_EQ(ra.cover(0, 40)[0].extent, unused);
  EXPECT_FALSE(ra.make_room(1000));
  ra.clear_ready();
  EXPECT_EQ(ra.held_bytes(), 0u);
}

}  // namespace
}  // namespace mibz2::io
