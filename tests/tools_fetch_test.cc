// mibz2 fetch against real servers on loopback (nginx, moto's S3, the fault proxy), as real
// processes: FILE holds the object's bytes exactly, its index is stored so that mibz2 info finds it
// current (no build, no sampled check), mibz2 cat of it is bzip2 -dc; a reset mid-body is retried
// and still exact; an object that changes mid-download, a missing one and one that is not bzip2
// fail with exit status 1 (2 for not bzip2) and leave no FILE, no temporary file and no index.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "mount_harness.h"
#include "remote_servers.h"
#include "test_support.h"

#ifndef MIBZ2_BINARY
#error "MIBZ2_BINARY must name the mibz2 program"
#endif

namespace mibz2::test {
namespace {

// About 30 blocks of 100k at level 1, several hundred kB compressed: the fetch splits it into
// requests of 64 KiB, a dozen and more, several in flight at once.
struct Dump {
  Bytes plain = text_bytes(3u << 20, 77);
  Bytes file = libbz2_compress(as_span(plain), 1);
};
const Dump& dump() {
  static const Dump* d = new Dump;
  return *d;
}

class FetchPrograms : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    nginx_ = NginxServer::shared(&why);
    MIBZ2_NEED_SERVER(nginx_, why);
    std::filesystem::create_directories(out_dir());
  }
  CommandResult mibz2(const std::string& args, const std::string& env = "") const {
    return run_command(env + "XDG_CACHE_HOME=" + shell_quote(dir_.file("cache").string()) + " " MIBZ2_BINARY " " + args,
                       dir_.file("stderr.txt"));
  }
  std::filesystem::path out_dir() const { return dir_.file("out"); }
  std::string local(const std::string& name) const { return (out_dir() / name).string(); }
  // Every file in the output directory (temporaries too) and in the index directory.
  size_t files_in(const std::filesystem::path& dir) const {
    if (!std::filesystem::exists(dir)) return 0;
    size_t n = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
      if (e.is_regular_file()) ++n;
    return n;
  }
  size_t index_files() const { return files_in(dir_.file("cache")); }
  // FILE is the dump, mibz2 info finds its index current, mibz2 cat of it is the plain text.
  void expect_fetched(const std::string& file) const {
    EXPECT_TRUE(same_bytes(read_file(file), dump().file));
    const CommandResult info = mibz2("info " + shell_quote(file));
    EXPECT_EQ(info.status, 0) << info.err;
    EXPECT_NE(info.out_text().find("(current)"), std::string::npos) << info.out_text();
    const CommandResult cat = mibz2("cat " + shell_quote(file));
    EXPECT_EQ(cat.status, 0) << cat.err;
    EXPECT_TRUE(same_bytes(cat.out, dump().plain));
  }

  NginxServer* nginx_ = nullptr;
  TempDir dir_;
};

TEST_F(FetchPrograms, FileIsTheObjectAndIndexedAtOnce) {
  nginx_->put("fetch.json.bz2", dump().file);
  const std::string file = local("fetch.json.bz2");
  const CommandResult r = mibz2("fetch -j 2 " + shell_quote(nginx_->url("fetch.json.bz2")) + " " + shell_quote(file));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out_text().find("indexed"), std::string::npos) << r.out_text();
  expect_fetched(file);
  EXPECT_EQ(files_in(out_dir()), 1u);  // no temporary file left beside it
  // The reference: what bzip2 -dc makes of the fetched file.
  const CommandResult bzip2 = run_command("bzip2 -dc < " + shell_quote(file));
  ASSERT_EQ(bzip2.status, 0);
  EXPECT_TRUE(same_bytes(bzip2.out, dump().plain));
}

// mibz2fs over FILE's directory takes the stored index as it finds it: loaded, nothing built.
TEST_F(FetchPrograms, AMountOfItsDirectoryUsesTheIndex) {
  if (!std::filesystem::exists("/dev/fuse")) GTEST_SKIP() << "no /dev/fuse";
  nginx_->put("mounted.json.bz2", dump().file);
  const std::string file = local("mounted.json.bz2");
  const CommandResult r = mibz2("fetch " + shell_quote(nginx_->url("mounted.json.bz2")) + " " + shell_quote(file));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::filesystem::path mnt = dir_.file("mnt");
  std::filesystem::create_directories(mnt);
  Mibz2fs fs({"-f", "-o", "index_dir=" + dir_.file("cache/mibz2fs").string(), out_dir().string(), mnt.string()}, mnt,
             dir_.file("mibz2fs.log"));
  ASSERT_EQ(fs.wait_mounted(), "");
  EXPECT_TRUE(same_bytes(read_file(mnt / "mounted.json"), dump().plain));
  const std::string stats = get_xattr(mnt, "user.mibz2fs.stats").value;
  EXPECT_NE(stats.find("indexes_built=0 "), std::string::npos) << stats;
  EXPECT_NE(stats.find("indexes_loaded=1 "), std::string::npos) << stats;
  EXPECT_TRUE(fs.stop());
}

TEST_F(FetchPrograms, SidecarWithOutputAndQuiet) {
  nginx_->put("sidecar.bz2", dump().file);
  const std::string file = local("sidecar.bz2");
  const CommandResult r = mibz2("fetch --quiet --connections 3 --output " + shell_quote(file + ".mibz2idx") + " " +
                                shell_quote(nginx_->url("sidecar.bz2")) + " " + shell_quote(file));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out_text();
  EXPECT_TRUE(std::filesystem::exists(file + ".mibz2idx"));
  expect_fetched(file);
}

TEST_F(FetchPrograms, ExistingFileRefusedUnlessForced) {
  nginx_->put("exists.bz2", dump().file);
  const std::string file = local("exists.bz2");
  const std::string args = shell_quote(nginx_->url("exists.bz2")) + " " + shell_quote(file);
  write_file(file, as_span(Bytes{'o', 'l', 'd'}));
  const CommandResult refused = mibz2("fetch " + args);
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("exists"), std::string::npos) << refused.err;
  EXPECT_EQ(read_file(file), (Bytes{'o', 'l', 'd'}));
  EXPECT_EQ(index_files(), 0u);
  const CommandResult forced = mibz2("fetch --force " + args);
  ASSERT_EQ(forced.status, 0) << forced.err;
  expect_fetched(file);
}

TEST_F(FetchPrograms, ResetMidBodyIsRetriedAndExact) {
  nginx_->put("reset.bz2", dump().file);
  std::string why;
  const std::unique_ptr<FaultProxy> proxy = FaultProxy::start(nginx_->base(), &why);
  ASSERT_TRUE(proxy) << why;
  proxy->set_faults(R"([{"kind": "reset", "after_bytes": 20000, "skip": 1, "times": 3, "methods": ["GET"]}])");
  const std::string file = local("reset.bz2");
  const CommandResult r = mibz2("fetch " + shell_quote(proxy->url("reset.bz2")) + " " + shell_quote(file));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(proxy->stats().find("\"faults_applied\": 3"), std::string::npos) << proxy->stats();
  expect_fetched(file);
}

TEST_F(FetchPrograms, ObjectChangedMidDownloadLeavesNothing) {
  nginx_->put("moving.bz2", dump().file);
  std::string why;
  const std::unique_ptr<FaultProxy> proxy = FaultProxy::start(nginx_->base(), &why);
  ASSERT_TRUE(proxy) << why;
  // From the fourth GET on, the object is another (its ETag changes, If-Match gets 412).
  proxy->set_faults(R"([{"kind": "etag", "skip": 3, "times": -1, "methods": ["GET"]}])");
  const std::string url = proxy->url("moving.bz2");
  const CommandResult r = mibz2("fetch " + shell_quote(url) + " " + shell_quote(local("moving.bz2")));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find(url), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("changed"), std::string::npos) << r.err;
  EXPECT_EQ(files_in(out_dir()), 0u);
  EXPECT_EQ(index_files(), 0u);
}

// Stopped by a signal mid-download (as ^C or a kill stops it): no FILE, no temporary file.
TEST_F(FetchPrograms, KilledMidDownloadLeavesNothing) {
  nginx_->put("killed.bz2", dump().file);
  std::string why;
  // 20 kB/s a connection: the download takes seconds, and is killed once its file exists.
  const std::unique_ptr<FaultProxy> proxy = FaultProxy::start(nginx_->base(), &why, 0, 20000);
  ASSERT_TRUE(proxy) << why;
  const std::string temporaries = shell_quote(out_dir().string()) + "/.killed.bz2.part-*";
  const CommandResult r = run_command(
      "XDG_CACHE_HOME=" + shell_quote(dir_.file("cache").string()) + " " MIBZ2_BINARY " fetch " +
      shell_quote(proxy->url("killed.bz2")) + " " + shell_quote(local("killed.bz2")) +
      " & pid=$!; until ls " + temporaries + " >/dev/null 2>&1; do sleep 0.02; done; kill -TERM $pid; wait $pid; echo $?");
  EXPECT_EQ(r.out_text(), "143\n");  // 128 + SIGTERM: it died of the signal, as it should
  EXPECT_EQ(files_in(out_dir()), 0u);
  EXPECT_EQ(index_files(), 0u);
}

TEST_F(FetchPrograms, MissingObjectOrNotBzip2LeavesNothing) {
  const std::string missing = nginx_->url("nowhere.bz2");
  const CommandResult r = mibz2("fetch " + shell_quote(missing) + " " + shell_quote(local("nowhere.bz2")));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("404"), std::string::npos) << r.err;
  nginx_->put("plain.txt", dump().plain);
  const CommandResult plain = mibz2("fetch " + shell_quote(nginx_->url("plain.txt")) + " " + shell_quote(local("plain.txt")));
  EXPECT_EQ(plain.status, 2) << plain.err;
  EXPECT_EQ(files_in(out_dir()), 0u);
  EXPECT_EQ(index_files(), 0u);
}

// s3:// through moto, signed with the key the environment gives; the secret never in a message.
TEST_F(FetchPrograms, FetchOfAnS3Object) {
  std::string why;
  S3Server* s3 = S3Server::shared(&why);
  MIBZ2_NEED_SERVER(s3, why);
  s3->make_bucket("mibz2-fetch");
  s3->put("mibz2-fetch", "dumps/dump.json.bz2", dump().file);
  s3->require_signatures(true);
  const std::string env = s3->signing_environment(dir_.path());
  const std::string file = local("dump.json.bz2");
  const CommandResult r = mibz2("fetch s3://mibz2-fetch/dumps/dump.json.bz2 " + shell_quote(file), env);
  const CommandResult missing = mibz2("fetch s3://mibz2-fetch/dumps/none.bz2 " + shell_quote(local("none.bz2")), env);
  s3->require_signatures(false);
  ASSERT_EQ(r.status, 0) << r.err;
  expect_fetched(file);
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("s3://mibz2-fetch/dumps/none.bz2"), std::string::npos) << missing.err;
  EXPECT_EQ(missing.err.find(s3->secret()), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace mibz2::test
