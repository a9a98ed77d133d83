// Remote objects through the front door, against nginx on loopback: a URL is a file like a path
// (the same index rules, the same content key), its stamp names the object and its ETag, and an
// object replaced on its server while it is read is a file rewritten in place: ESTALE, never the
// new content's bytes. The programs' and Python's remote tests read through these same steps.
#include <gtest/gtest.h>

#include <cstring>

#include "catalog/front_door.h"
#include "catalog/read_handle.h"
#include "catalog/remote_source_access.h"
#include "catalog_test_support.h"
#include "index/index_format.h"
#include "index/index_store.h"
#include "io/remote_source.h"
#include "io/source_url.h"
#include "remote_servers.h"

namespace mibz2::catalog {
namespace {

using test::Bytes;

// A text of about 8 blocks of 100k (level 1): small enough to serve at once, with blocks to read
// apart. Made once.
struct Dump {
  Bytes plain = test::text_bytes(900u << 10, 33);
  Bytes file = test::libbz2_compress(test::as_span(plain), 1);
};
const Dump& dump() {
  static const Dump* d = new Dump;
  return *d;
}

class RemoteSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    nginx_ = test::NginxServer::shared(&why);
    MIBZ2_NEED_SERVER(nginx_, why);
  }
  // A front door on an index directory of the test's own, reading by name (URLs and paths).
  std::unique_ptr<FrontDoor> door(bool readahead = true) const {
    return std::make_unique<FrontDoor>(
        FrontDoorOptions{.threads = 2, .cache_size = test::kTestCacheBytes, .readahead = readahead,
                         .index_dir = dir_.file("indexes").string()});
  }
  // The whole decompressed content through a handle.
  static Bytes read_all(ReadHandle& h) {
    Bytes out(h.size());
    size_t done = 0;
    while (done < out.size()) {
      const ReadResult r = h.read(done, out.size() - done, out.data() + done);
      EXPECT_TRUE(r.ok()) << r.why;
      if (!r.ok() || r.bytes == 0) break;
      done += r.bytes;
    }
    out.resize(done);
    return out;
  }

  test::NginxServer* nginx_ = nullptr;
  test::TempDir dir_;
};

TEST_F(RemoteSourceTest, StampNamesTheObjectAndItsEtag) {
  nginx_->put("stamp.bz2", dump().file);
  RemoteSourceAccess access;
  const FileRef file = std::make_shared<CatalogFile>(nginx_->url("stamp.bz2"));
  base::Result<std::unique_ptr<io::Source>> source = access.open_source(*file);
  ASSERT_TRUE(source.ok()) << source.status().message();
  const io::SourceStamp opened = (*source)->stamp();
  EXPECT_EQ(opened.device, 0u);
  EXPECT_NE(opened.inode, 0u);
  EXPECT_EQ(opened.size, dump().file.size());
  // nginx's Last-Modified is the file's mtime, to the second.
  struct stat st;
  ASSERT_EQ(::stat((nginx_->root() / "stamp.bz2").c_str(), &st), 0);
  EXPECT_EQ(opened.mtime_ns, static_cast<uint64_t>(st.st_mtim.tv_sec) * 1'000'000'000ull);
  EXPECT_TRUE((*source)->unchanged());
  base::Result<io::SourceStamp> looked = access.stamp(*file);
  ASSERT_TRUE(looked.ok()) << looked.status().message();
  EXPECT_EQ(*looked, opened);

  // Replaced (another size, so nginx's ETag differs even within the same second): the access's
  // stamp is another file's; the opened source finds it at its next request and says so.
  Bytes other = dump().file;
  other.push_back(0);
  nginx_->put("stamp.bz2", other);
  looked = access.stamp(*file);
  ASSERT_TRUE(looked.ok()) << looked.status().message();
  EXPECT_NE(looked->inode, opened.inode);
  uint8_t byte;
  const io::SourceRead r = (*source)->read(dump().file.size() - 1, 1, &byte);
  EXPECT_TRUE(r.changed) << r.describe();
  EXPECT_FALSE((*source)->unchanged());
}

TEST_F(RemoteSourceTest, UrlIsKeptAsNamedAndReadsLikeTheFile) {
  nginx_->put("whole.json.bz2", dump().file);
  const std::string url = nginx_->url("whole.json.bz2");
  std::unique_ptr<FrontDoor> d = door();
  const FileRef file = d->file(url);
  EXPECT_EQ(file->path(), url);
  const IndexStatus got = d->obtain(file, false);
  ASSERT_TRUE(got.ready()) << got.error.message();
  EXPECT_TRUE(got.origin.built);
  base::Result<std::unique_ptr<ReadHandle>> h = d->open(file);
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_TRUE(test::same_bytes(read_all(**h), dump().plain));

  // The next front door finds the index this one stored: current (same URL, ETag, size and
  // Last-Modified), no block checked.
  std::unique_ptr<FrontDoor> next = door();
  const IndexStatus again = next->obtain(next->file(url), false);
  ASSERT_TRUE(again.ready()) << again.error.message();
  EXPECT_FALSE(again.origin.built);
  EXPECT_FALSE(again.origin.validated);
}

TEST_F(RemoteSourceTest, IndexOfALocalCopyServesTheObject) {
  const std::filesystem::path local = dir_.write("copy.bz2", dump().file);
  nginx_->put("copy.bz2", dump().file);
  std::unique_ptr<FrontDoor> d = door();
  ASSERT_TRUE(d->obtain(d->file(local.string()), false).origin.built);
  const IndexStatus got = d->obtain(d->file(nginx_->url("copy.bz2")), false);
  ASSERT_TRUE(got.ready()) << got.error.message();
  EXPECT_FALSE(got.origin.built);
  EXPECT_TRUE(got.origin.validated);  // the same content, another "file": a sample checked
}

TEST_F(RemoteSourceTest, SidecarBesideTheObjectIsUsed) {
  nginx_->put("side.bz2", dump().file);
  // Its index, made from a local copy in a store of its own, published beside the object.
  const std::filesystem::path local = dir_.write("side.bz2", dump().file);
  index::IndexStore elsewhere(dir_.file("elsewhere").string());
  const IndexStatus made = test::obtain_guarded(local.string(), elsewhere, 2);
  ASSERT_TRUE(made.ready());
  const std::vector<uint8_t> bytes = index::serialize(*made.index);
  nginx_->put("side.bz2.mibz2idx", bytes);
  std::unique_ptr<FrontDoor> d = door();
  const IndexStatus got = d->obtain(d->file(nginx_->url("side.bz2") + "?v=1"), false);
  ASSERT_TRUE(got.ready()) << got.error.message();
  EXPECT_FALSE(got.origin.built);
  EXPECT_TRUE(got.origin.sidecar);
  EXPECT_TRUE(got.origin.validated);
}

TEST_F(RemoteSourceTest, SidecarUrlKeepsTheQueryAfterIt) {
  base::Result<io::SourceUrl> u = io::parse_source_url("https://h/d/x.bz2?sig=1");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(sidecar_url(*u), "https://h/d/x.bz2.mibz2idx?sig=1");
  u = io::parse_source_url("s3://b/d/x.bz2");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(sidecar_url(*u), "s3://b/d/x.bz2.mibz2idx");
}

TEST_F(RemoteSourceTest, ObjectReplacedWhileReadIsStale) {
  nginx_->put("moving.bz2", dump().file);
  std::unique_ptr<FrontDoor> d = door(/*readahead=*/false);
  const FileRef file = d->file(nginx_->url("moving.bz2"));
  ASSERT_TRUE(d->obtain(file, false).ready());
  base::Result<std::unique_ptr<ReadHandle>> h = d->open(file);
  ASSERT_TRUE(h.ok()) << h.status().message();
  Bytes head(1000);
  ASSERT_TRUE((*h)->read(0, head.size(), head.data()).ok());
  // Another content of another size: the next block's request finds another ETag.
  Bytes other_plain = test::text_bytes(dump().plain.size(), 34);
  nginx_->put("moving.bz2", test::libbz2_compress(test::as_span(other_plain), 1));
  // The middle: outside the 64 KiB ends the open read for the fingerprint, so it must be asked for.
  Bytes middle(1000);
  const ReadResult r = (*h)->read(dump().plain.size() / 2, middle.size(), middle.data());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status("x").code(), ESTALE) << r.why;
}

// Words as a missing local file's are ("cannot open: ..."): the status, and no URL, which
// whoever reports it puts in front (tools_remote_test.cc, the programs' messages).
TEST_F(RemoteSourceTest, MissingObjectSaysTheStatus) {
  std::unique_ptr<FrontDoor> d = door();
  const std::string url = nginx_->url("nowhere.bz2");
  const IndexStatus got = d->obtain(d->file(url), false);
  ASSERT_FALSE(got.ready());
  EXPECT_EQ(got.error.code(), ENOENT);
  EXPECT_EQ(got.error.message(), "HTTP 404: no such object");
}

}  // namespace
}  // namespace mibz2::catalog
