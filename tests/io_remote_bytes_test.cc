// RemoteBytes over nginx (through the fault proxy where bytes or requests are counted): every byte
// right for random, sequential and concurrent readers; a random read fetches about what it reads;
// a sequential reader gets read-ahead in flight; an index build over HTTP matches the local one and
// fetches the object about once; a changed object fails every read after; a failure is not kept.
#include <gtest/gtest.h>

#include <thread>

#include "bz2/block_decoder.h"
#include "index/block_check.h"
#include "index_test_support.h"
#include "io/remote_bytes.h"
#include "remote_servers.h"

namespace mibz2::io {
namespace {

using std::chrono::milliseconds;
using test::Bytes;

class RemoteBytesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    nginx_ = test::NginxServer::shared(&why);
    MIBZ2_NEED_SERVER(nginx_, why);
  }
  Bytes serve(const std::string& name, size_t size, uint64_t seed) {
    Bytes data = test::random_bytes(size, seed);
    nginx_->put(name, data);
    return data;
  }
  // A proxy of the test's own in front of nginx (null and a skip when it cannot start).
  std::unique_ptr<test::FaultProxy> proxy(double latency_ms = 0) {
    std::string why;
    std::unique_ptr<test::FaultProxy> p = test::FaultProxy::start(nginx_->base(), &why, latency_ms);
    if (!p) ADD_FAILURE() << "the fault proxy did not start: " << why;
    return p;
  }
  static std::shared_ptr<HttpClient> fast_client() {
    HttpOptions o;
    o.first_backoff = milliseconds(10);
    o.max_backoff = milliseconds(40);
    return std::make_shared<HttpClient>(o);
  }
  static std::unique_ptr<RemoteBytes> open(const std::shared_ptr<HttpClient>& client, const std::string& url,
                                           RemoteBytesOptions options = {}) {
    base::Result<std::unique_ptr<RemoteBytes>> r = open_remote_bytes(client, url, {}, options);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? std::move(*r) : nullptr;
  }
  // Reads [at, at + len) and checks it against `data`.
  static ::testing::AssertionResult reads_right(const SourceBytes& source, const Bytes& data, uint64_t at, size_t len) {
    Bytes got(len, 0xEE);
    const SourceRead r = source.read(at, len, got.data());
    if (r.failed()) return ::testing::AssertionFailure() << r.describe();
    const size_t want = static_cast<size_t>(std::min<uint64_t>(len, data.size() - std::min<uint64_t>(at, data.size())));
    if (r.count != want) return ::testing::AssertionFailure() << "read " << r.count << " of " << want;
    got.resize(r.count);
    return test::same_bytes(got, Bytes(data.begin() + at, data.begin() + at + r.count));
  }
  test::NginxServer* nginx_ = nullptr;
};

using RemoteBytesRead = RemoteBytesTest;

TEST_F(RemoteBytesRead, RandomReadsFetchAboutWhatTheyRead) {
  const Bytes data = serve("rb-random.bin", 32 << 20, 21);
  std::unique_ptr<test::FaultProxy> p = proxy();
  ASSERT_TRUE(p);
  auto client = fast_client();
  RemoteBytesOptions options;
  std::unique_ptr<RemoteBytes> source = open(client, p->url("rb-random.bin"), options);
  ASSERT_TRUE(source);
  EXPECT_EQ(source->size(), data.size());
  test::Rng rng(22);
  uint64_t asked = 0;
  const int reads = 30;
  for (int i = 0; i < reads; ++i) {
    const uint64_t at = rng.below(static_cast<uint32_t>(data.size() - 400'000));
    const size_t len = 100'000 + rng.below(200'000);  // a block's compressed bytes
    ASSERT_TRUE(reads_right(*source, data, at, len));
    asked += len;
  }
  const RemoteBytesStats st = source->stats();
  EXPECT_EQ(st.readahead_fetches, 0u);
  // Each read widened to whole pages at most: two pages more than it asked for.
  EXPECT_LE(st.fetched_bytes, asked + reads * 2 * options.page_bytes);
  EXPECT_GE(st.fetched_bytes, asked * 9 / 10);  // a few reads may overlap others
  EXPECT_EQ(p->body_bytes(), st.fetched_bytes);  // what went over the wire
}

TEST_F(RemoteBytesRead, ASequentialReaderGetsSeveralRequestsInFlightAndEachByteOnce) {
  const Bytes data = serve("rb-seq.bin", 24 << 20, 23);
  std::unique_ptr<test::FaultProxy> p = proxy(/*latency_ms=*/100);
  ASSERT_TRUE(p);
  auto client = fast_client();
  std::unique_ptr<RemoteBytes> source = open(client, p->url("rb-seq.bin"));
  ASSERT_TRUE(source);
  for (uint64_t at = 0; at < data.size(); at += 1 << 20) ASSERT_TRUE(reads_right(*source, data, at, 1 << 20));
  const RemoteBytesStats st = source->stats();
  EXPECT_GT(st.readahead_fetches, 0u);
  EXPECT_EQ(st.fetched_bytes, data.size());  // nothing fetched twice, nothing fetched past the end
  // 100 ms a request: requests made one after the other would never overlap.
  EXPECT_GE(std::stoi(test::json_field(p->stats(), "max_in_flight")), 2) << p->stats();
}

// A download (in_order) has all of its read-ahead in flight from its first read, where a reader
// not known to be sequential gets none until its reads look so.
TEST_F(RemoteBytesRead, AnInOrderReaderHasReadAheadFromItsFirstRead) {
  const Bytes data = serve("rb-in-order.bin", 8 << 20, 26);
  auto client = fast_client();
  for (const bool in_order : {false, true}) {
    RemoteBytesOptions options;
    options.request_bytes = 1 << 20;
    options.readahead_bytes = 4 << 20;
    options.readahead_requests = 4;
    options.in_order = in_order;
    std::unique_ptr<RemoteBytes> source = open(client, nginx_->url("rb-in-order.bin"), options);
    ASSERT_TRUE(source);
    ASSERT_TRUE(reads_right(*source, data, 0, 1 << 20));
    EXPECT_EQ(source->stats().readahead_fetches, in_order ? 4u : 0u) << in_order;
    for (uint64_t at = 1 << 20; at < data.size(); at += 1 << 20) ASSERT_TRUE(reads_right(*source, data, at, 1 << 20));
    EXPECT_EQ(source->stats().fetched_bytes, data.size()) << in_order;  // each byte once
  }
}

TEST_F(RemoteBytesRead, ALargeReadIsFetchedInPiecesSideBySide) {
  const Bytes data = serve("rb-large.bin", 12 << 20, 24);
  std::unique_ptr<test::FaultProxy> p = proxy(/*latency_ms=*/100);
  ASSERT_TRUE(p);
  auto client = fast_client();
  std::unique_ptr<RemoteBytes> source = open(client, p->url("rb-large.bin"));
  ASSERT_TRUE(source);
  ASSERT_TRUE(reads_right(*source, data, 1000, 8 << 20));  // as mibz2 cat -j 1 reads
  EXPECT_GE(source->stats().fetches, 4u);
  EXPECT_GE(std::stoi(test::json_field(p->stats(), "max_in_flight")), 2) << p->stats();
}

TEST_F(RemoteBytesRead, ConcurrentReadersAllGetTheRightBytes) {
  const Bytes data = serve("rb-concurrent.bin", 16 << 20, 25);
  auto client = fast_client();
  RemoteBytesOptions options;
  options.cache_bytes = 8 << 20;  // smaller than the object: extents come and go meanwhile
  options.readahead_bytes = 4 << 20;
  options.request_bytes = 1 << 20;
  std::unique_ptr<RemoteBytes> source = open(client, nginx_->url("rb-concurrent.bin"), options);
  ASSERT_TRUE(source);
  std::atomic<int> wrong{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 6; ++t) {
    readers.emplace_back([&, t] {
      test::Rng rng(100 + t);
      if (t % 2 == 0) {  // a scan from somewhere, in uneven pieces
        for (uint64_t at = rng.below(4 << 20); at < data.size();) {
          const size_t len = 1 + rng.below(700'000);
          if (!reads_right(*source, data, at, len)) ++wrong;
          at += len;
        }
      } else {
        for (int i = 0; i < 60; ++i) {
          const uint64_t at = rng.below(static_cast<uint32_t>(data.size()));
          if (!reads_right(*source, data, at, 1 + rng.below(400'000))) ++wrong;
        }
      }
    });
  }
  for (std::thread& r : readers) r.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(source->stats().failed_fetches, 0u);
}

TEST_F(RemoteBytesRead, AChangedObjectFailsEveryReadAfterAsChanged) {
  const Bytes data = serve("rb-changed.bin", 4 << 20, 26);
  auto client = fast_client();
  std::unique_ptr<RemoteBytes> source = open(client, nginx_->url("rb-changed.bin"));
  ASSERT_TRUE(source);
  ASSERT_TRUE(reads_right(*source, data, 0, 100'000));
  serve("rb-changed.bin", (4 << 20) + 1, 27);
  Bytes got(100'000);
  SourceRead r = source->read(2 << 20, got.size(), got.data());
  ASSERT_TRUE(r.failed());
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.error, ESTALE);
  EXPECT_NE(r.describe().find("changed"), std::string::npos) << r.describe();
  EXPECT_TRUE(source->changed());
  EXPECT_EQ(source->last_failure().code(), ESTALE);
  EXPECT_NE(source->last_failure().message().find("rb-changed.bin"), std::string::npos);
  // Bytes it fetched before are of the old content, and one open gives one content: refused too.
  r = source->read(0, 1000, got.data());
  EXPECT_TRUE(r.changed);
}

TEST_F(RemoteBytesRead, AFailedReadIsNotKeptTheNextOneAsksAgain) {
  const Bytes data = serve("rb-retry.bin", 2 << 20, 28);
  std::unique_ptr<test::FaultProxy> p = proxy();
  ASSERT_TRUE(p);
  auto client = fast_client();
  std::unique_ptr<RemoteBytes> source = open(client, p->url("rb-retry.bin"));
  ASSERT_TRUE(source);
  p->set_faults(R"([{"kind": "status", "status": 503, "times": -1}])");
  Bytes got(50'000);
  const SourceRead r = source->read(1000, got.size(), got.data());
  ASSERT_TRUE(r.failed());
  EXPECT_EQ(r.error, EIO);
  EXPECT_FALSE(r.changed);
  EXPECT_NE(source->last_failure().message().find("HTTP 503"), std::string::npos) << source->last_failure().message();
  p->reset();
  EXPECT_TRUE(reads_right(*source, data, 1000, got.size()));
}

TEST_F(RemoteBytesRead, ClosingWithReadAheadInFlightDoesNotWaitForIt) {
  serve("rb-close.bin", 16 << 20, 29);
  std::unique_ptr<test::FaultProxy> p = proxy(/*latency_ms=*/200);
  ASSERT_TRUE(p);
  auto client = fast_client();
  {
    std::unique_ptr<RemoteBytes> source = open(client, p->url("rb-close.bin"));
    ASSERT_TRUE(source);
    Bytes got(1 << 20);
    for (int i = 0; i < 3; ++i) ASSERT_FALSE(source->read(i * got.size(), got.size(), got.data()).failed());
    EXPECT_GT(source->stats().readahead_fetches, 0u);
  }  // closed with read-ahead in flight: its requests end on their own threads
  client.reset();  // the pool's threads joined once they have
}

TEST_F(RemoteBytesRead, OpeningNamesWhatIsWrong) {
  auto client = fast_client();
  base::Result<std::unique_ptr<RemoteBytes>> r = open_remote_bytes(client, nginx_->url("rb-none.bz2"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ENOENT);
  r = open_remote_bytes(client, "http://");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), EINVAL);
  r = open_remote_bytes(client, "s3://bucket/prefix/");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), EISDIR);
}

// ---- the index's reads over HTTP ----------------------------------------------------------------

using RemoteBytesIndex = RemoteBytesTest;

TEST_F(RemoteBytesIndex, ABuildOverHttpMatchesTheLocalOneAndFetchesTheObjectAboutOnce) {
  const Bytes plain = test::mixed_bytes(12 << 20, 31);
  const Bytes file = test::libbz2_compress(plain, 9);
  nginx_->put("rb-build.bz2", file);
  const index::BuildResult local = test::build_guarded(file, 2);
  ASSERT_TRUE(local.ok()) << local.error.message();
  ASSERT_GT(local.index.blocks.size(), 4u);

  auto client = fast_client();
  RemoteBytesOptions options;
  options.cache_bytes = 16 << 20;
  std::unique_ptr<RemoteBytes> source = open(client, nginx_->url("rb-build.bz2"), options);
  ASSERT_TRUE(source);
  const index::BuildResult remote = test::build_guarded(*source, 2);
  ASSERT_TRUE(remote.ok()) << remote.error.message();
  ASSERT_EQ(remote.index.blocks.size(), local.index.blocks.size());
  for (size_t i = 0; i < local.index.blocks.size(); ++i) {
    EXPECT_EQ(remote.index.blocks[i].start_bit(), local.index.blocks[i].start_bit()) << i;
    EXPECT_EQ(remote.index.blocks[i].crc, local.index.blocks[i].crc) << i;
  }
  EXPECT_EQ(remote.index.decompressed_size, plain.size());
  // The decodes of the blocks the scan had just fetched were served from the cache.
  EXPECT_LE(source->stats().fetched_bytes, file.size() + file.size() / 10) << source->stats().fetches << " fetches";

  // A Reader's block reads on a fresh open: each checked against the index, each costing about
  // its compressed bytes.
  std::unique_ptr<RemoteBytes> fresh = open(client, nginx_->url("rb-build.bz2"), options);
  ASSERT_TRUE(fresh);
  bz2::BlockDecoder decoder;
  base::ByteBuffer compressed, out;
  for (size_t b : index::sample_blocks(local.index, 5)) {
    const uint64_t before = fresh->stats().fetched_bytes;
    const index::BlockCheck c = index::check_block(local.index, b, *fresh, decoder, compressed, out);
    ASSERT_EQ(c.kind, index::BlockCheck::kOk) << index::describe_check(local.index, b, c);
    const uint64_t block_bytes = local.index.blocks[b].bit_length / 8 + 16;
    const uint64_t fetched = fresh->stats().fetched_bytes - before;
    EXPECT_LE(fetched, block_bytes + 2 * options.page_bytes) << "block " << b;
  }
}

}  // namespace
}  // namespace mibz2::io
