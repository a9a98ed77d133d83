// The mibz2 program reading URLs served by nginx on loopback (and through the fault proxy, for an
// object that is replaced while it is read): real processes, their output compared with bzip2 -dc
// of the same file; a missing object is an error naming the URL and the status.
#include <gtest/gtest.h>

#include <string>

#include "remote_servers.h"
#include "test_support.h"

#ifndef MIBZ2_BINARY
#error "MIBZ2_BINARY must name the mibz2 program"
#endif

namespace mibz2::test {
namespace {

// About 9 blocks of 100k: a few range requests, decoded in parallel.
struct Dump {
  Bytes plain = text_bytes(900u << 10, 51);
  Bytes file = libbz2_compress(as_span(plain), 1);
};
const Dump& dump() {
  static const Dump* d = new Dump;
  return *d;
}

class RemotePrograms : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    nginx_ = NginxServer::shared(&why);
    MIBZ2_NEED_SERVER(nginx_, why);
  }
  // `mibz2 ARGS` with an index directory of the test's own; standard error captured.
  CommandResult mibz2(const std::string& args) const { return mibz2_with("", args); }
  // The same with variables of the environment set first ("NAME=VALUE ").
  CommandResult mibz2_with(const std::string& env, const std::string& args) const {
    return run_command(env + "XDG_CACHE_HOME=" + shell_quote(dir_.file("cache").string()) + " " MIBZ2_BINARY " " + args,
                       dir_.file("stderr.txt"));
  }
  static Bytes slice(const Bytes& b, size_t at, size_t n) { return Bytes(b.begin() + at, b.begin() + at + n); }

  NginxServer* nginx_ = nullptr;
  TempDir dir_;
};

TEST_F(RemotePrograms, CatIsBzip2Dc) {
  nginx_->put("dump.json.bz2", dump().file);
  const std::string url = shell_quote(nginx_->url("dump.json.bz2"));
  const std::filesystem::path local = dir_.write("dump.json.bz2", dump().file);
  const CommandResult reference = run_command("bzip2 -dc < " + shell_quote(local.string()));
  ASSERT_EQ(reference.status, 0);
  // A whole object, first without an index (one pass that stores it), then with it, and -j 1.
  for (const char* how : {"", "", "-j 1 ", "-j 3 "}) {
    const CommandResult r = mibz2(std::string("cat ") + how + url);
    EXPECT_EQ(r.status, 0) << how << r.err;
    EXPECT_TRUE(same_bytes(r.out, reference.out)) << how;
  }
  const CommandResult range = mibz2("cat --offset 300000 --length 250000 " + url);
  EXPECT_EQ(range.status, 0) << range.err;
  EXPECT_TRUE(same_bytes(range.out, slice(reference.out, 300000, 250000)));
  const CommandResult lines = mibz2("cat --lines 100:120 " + url);
  EXPECT_EQ(lines.status, 0) << lines.err;
  const CommandResult sed = run_command("sed -n '100,120p' " + shell_quote(dir_.write("plain", dump().plain).string()));
  EXPECT_EQ(lines.out_text(), sed.out_text());
}

TEST_F(RemotePrograms, InfoIndexVerify) {
  nginx_->put("info.bz2", dump().file);
  const std::string url = nginx_->url("info.bz2");
  const CommandResult index = mibz2("index " + shell_quote(url));
  EXPECT_EQ(index.status, 0) << index.err;
  const CommandResult info = mibz2("info --json " + shell_quote(url));
  EXPECT_EQ(info.status, 0) << info.err;
  EXPECT_NE(info.out_text().find("\"decompressed_size\":" + std::to_string(dump().plain.size())), std::string::npos)
      << info.out_text();
  const CommandResult verify = mibz2("verify " + shell_quote(url));
  EXPECT_EQ(verify.status, 0) << verify.err;
  // An index to publish beside the object, and the object read with it (nothing else stored).
  const CommandResult output = mibz2("index --output " + shell_quote(dir_.file("info.bz2.mibz2idx").string()) + " " +
                                     shell_quote(url));
  EXPECT_EQ(output.status, 0) << output.err;
  nginx_->put("info.bz2.mibz2idx", read_file(dir_.file("info.bz2.mibz2idx")));
  const CommandResult fresh = run_command("XDG_CACHE_HOME=" + shell_quote(dir_.file("fresh").string()) +
                                          " " MIBZ2_BINARY " info " + shell_quote(url),
                                          dir_.file("stderr.txt"));
  EXPECT_EQ(fresh.status, 0) << fresh.err;
  EXPECT_NE(fresh.out_text().find(".mibz2idx"), std::string::npos) << fresh.out_text();
}

// --index names the index, a path or a URL, instead of the sidecar: used once it is checked,
// said (and the file indexed) when it is missing or another file's.
TEST_F(RemotePrograms, AnIndexNamedByPathOrUrl) {
  nginx_->put("named/dump.json.bz2", dump().file);
  const std::string url = nginx_->url("named/dump.json.bz2");
  const std::filesystem::path local = dir_.write("copy.json.bz2", dump().file);
  const std::string made = dir_.file("made.idx").string();
  ASSERT_EQ(mibz2("index --output " + shell_quote(made) + " " + shell_quote(local.string())).status, 0);
  nginx_->put("elsewhere/dump.idx", read_file(made));
  const Bytes other = libbz2_compress(as_span(text_bytes(300000, 52)), 1);
  const std::string other_made = dir_.file("other.idx").string();
  ASSERT_EQ(mibz2("index --output " + shell_quote(other_made) + " " + shell_quote(dir_.write("other.bz2", other).string())).status, 0);
  int fresh = 0;
  // Each in an index directory of its own, so that nothing but the named index can serve it.
  auto info = [&](const std::string& index) {
    return run_command("XDG_CACHE_HOME=" + shell_quote(dir_.file("fresh" + std::to_string(++fresh)).string()) +
                           " " MIBZ2_BINARY " info --index " + shell_quote(index) + " " + shell_quote(url),
                       dir_.file("stderr.txt"));
  };
  for (const std::string& index : {made, nginx_->url("elsewhere/dump.idx")}) {
    const CommandResult r = info(index);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out_text().find("index:              " + index + " (sidecar, validated for this file)"), std::string::npos)
        << r.out_text();
  }
  for (const std::string& index : {other_made, nginx_->url("elsewhere/none.idx")}) {
    const CommandResult r = info(index);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out_text().find("(built now)"), std::string::npos) << r.out_text();
    EXPECT_NE(r.err.find("not used"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(index), std::string::npos) << r.err;
  }
  const CommandResult cat = mibz2("cat --index " + shell_quote(made) + " " + shell_quote(url));
  EXPECT_EQ(cat.status, 0) << cat.err;
  EXPECT_TRUE(same_bytes(cat.out, dump().plain));
  const CommandResult two = mibz2("cat --index " + shell_quote(made) + " " + shell_quote(url) + " " + shell_quote(url));
  EXPECT_EQ(two.status, 1);
  EXPECT_NE(two.err.find("--index takes one FILE"), std::string::npos) << two.err;
}

TEST_F(RemotePrograms, ObjectReplacedWhileReadFailsWithoutMixing) {
  nginx_->put("moving.bz2", dump().file);
  std::string why;
  const std::unique_ptr<FaultProxy> proxy = FaultProxy::start(nginx_->base(), &why);
  ASSERT_TRUE(proxy) << why;
  const std::string url = shell_quote(proxy->url("moving.bz2"));
  ASSERT_EQ(mibz2("index " + url).status, 0);
  // From the third GET on, the object is another (its ETag changes, If-Match gets 412), though
  // HEADs still show the old one: what a reader sees when the object is replaced mid-read.
  proxy->set_faults(R"([{"kind": "etag", "skip": 2, "times": -1, "methods": ["GET"]}])");
  const CommandResult r = mibz2("cat " + url);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("changed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ESTALE"), std::string::npos) << r.err;
  ASSERT_LE(r.out.size(), dump().plain.size());
  EXPECT_TRUE(same_bytes(r.out, slice(dump().plain, 0, r.out.size())));
}

TEST_F(RemotePrograms, MissingObjectNamesUrlAndStatus) {
  const std::string url = nginx_->url("nowhere.bz2");
  for (const char* command : {"cat ", "info ", "cat --offset 5 "}) {
    const CommandResult r = mibz2(command + shell_quote(url));
    EXPECT_EQ(r.status, 1) << command;
    EXPECT_NE(r.err.find(url), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("404"), std::string::npos) << r.err;
  }
}

// s3:// through moto, signed with the key the environment gives, as the AWS tools take it.
TEST_F(RemotePrograms, CatOfAnS3Object) {
  std::string why;
  S3Server* s3 = S3Server::shared(&why);
  MIBZ2_NEED_SERVER(s3, why);
  s3->make_bucket("mibz2-programs");
  s3->put("mibz2-programs", "dumps/dump.json.bz2", dump().file);
  s3->require_signatures(true);
  const std::string env = s3->signing_environment(dir_.path());
  const CommandResult r = mibz2_with(env, "cat --offset 100000 --length 400000 s3://mibz2-programs/dumps/dump.json.bz2");
  s3->require_signatures(false);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(same_bytes(r.out, slice(dump().plain, 100000, 400000)));
}

}  // namespace
}  // namespace mibz2::test
