// The Catalog's state machine without a mount: where a file's index comes from (the store, a build
// on the pool), what a status shows on the way, who waits and how a wait ends (ready, failed,
// stopped), what a change of the source does, the order of queued builds, Readers shared per
// content, rebuilds, and shutdown settling everything.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <condition_variable>
#include <filesystem>
#include <stop_token>
#include <thread>

#include "catalog/source_access.h"
#include "catalog_test_support.h"
#include "engine/reader.h"
#include "index/bzip2_head.h"

namespace mibz2::test {
namespace {

namespace fs = std::filesystem;
using catalog::Catalog;
using catalog::IndexState;
using Need = catalog::Catalog::Need;

TEST(CatalogConcurrent, FirstBuildThenLoadFromTheStore) {
  CatalogRig s;
  const Bytes plain = text_bytes(400000, 1);
  const catalog::FileRef f = s.add("a.bz2", plain);
  EXPECT_EQ(s.catalog.status(f).state, IndexState::kUnknown);
  EXPECT_FALSE(s.catalog.load_if_current(f));  // nothing stored yet: left as it was
  EXPECT_EQ(s.catalog.status(f).state, IndexState::kUnknown);
  ASSERT_TRUE(s.catalog.wait(f));
  const catalog::IndexStatus built = s.catalog.status(f);
  EXPECT_EQ(built.state, IndexState::kReady);
  EXPECT_EQ(built.describe(), "ready");
  EXPECT_TRUE(built.origin.built);
  EXPECT_TRUE(built.origin.saved) << built.origin.save_error;
  EXPECT_EQ(built.index->decompressed_size, plain.size());
  EXPECT_TRUE(fs::exists(built.origin.index_path));

  // A second catalog (the next mount) loads it: no build.
  CatalogOn next(s.store, 1);
  Catalog& again = next.catalog;
  const catalog::FileRef g = again.add(f->path());
  EXPECT_TRUE(again.load_if_current(g));
  const catalog::IndexStatus loaded = again.status(g);
  EXPECT_EQ(loaded.state, IndexState::kReady);
  EXPECT_FALSE(loaded.origin.built);
  EXPECT_TRUE(same_index(*loaded.index, *built.index));
}

TEST(CatalogConcurrent, StatusShowsTheBuildWithoutWaiting) {
  CatalogRig s(1);
  const catalog::FileRef f = s.add("big.bz2", text_bytes(scaled(12000000, 4000000), 2));
  s.catalog.prepare(f, Need::kSoon);
  // Seen building, with a total, before it settles; status() itself never waits.
  bool saw_building = false;
  ASSERT_TRUE(eventually([&] {
    const catalog::IndexStatus st = s.catalog.status(f);
    if (st.state == IndexState::kBuilding) {
      saw_building = true;
      EXPECT_EQ(st.build_total, fs::file_size(f->path()));
      EXPECT_LE(st.build_done, st.build_total);
      EXPECT_EQ(st.describe().rfind("building ", 0), 0u) << st.describe();
    }
    return st.settled();
  }));
  EXPECT_TRUE(saw_building);
  EXPECT_TRUE(s.catalog.status(f).ready());
}

TEST(CatalogConcurrent, NotBzip2FailsAndEveryWaiterLearnsIt) {
  CatalogRig s;
  const catalog::FileRef f = s.catalog.add(s.dir.write("fake.bz2", to_bytes("not bzip2 at all\n")).string());
  EXPECT_FALSE(s.catalog.wait(f));
  const catalog::IndexStatus st = s.catalog.status(f);
  EXPECT_EQ(st.state, IndexState::kFailed);
  EXPECT_NE(st.error.message().find("not a bzip2"), std::string::npos) << st.error;
  EXPECT_EQ(st.describe(), "failed: " + st.error.message());
  EXPECT_FALSE(s.catalog.wait(f));  // settled: answered at once
  const base::Result<std::shared_ptr<engine::Reader>> none = s.catalog.open(f);
  EXPECT_FALSE(none.ok());
  EXPECT_FALSE(none.status().message().empty());

  // The file becomes bzip2 (new size): refresh() notices, and the next wait indexes it.
  const Bytes plain = text_bytes(50000, 3);
  write_file(f->path(), libbz2_compress(plain, 9));
  EXPECT_TRUE(s.catalog.refresh(f));
  EXPECT_EQ(s.catalog.status(f).state, IndexState::kStale);
  ASSERT_TRUE(s.catalog.wait(f));
  EXPECT_EQ(s.catalog.status(f).index->decompressed_size, plain.size());
}

// wait() on a ready file while another thread finds the file changed (refresh marks it stale):
// wait() must end with the file indexed again, never wait on a stale file that nobody indexes. The
// race is between wait()'s look at the state and its sleep, a few instructions wide, so the test
// runs it many times; each wait has a watchdog that stops it (a stopped wait returns false).
TEST(CatalogConcurrent, AWaitRacingAChangeOfTheFileEndsWithItIndexedAgain) {
  CatalogRig s(2);
  const Bytes plain = text_bytes(20000, 11);
  const catalog::FileRef f = s.add("changing.bz2", plain);
  ASSERT_TRUE(s.catalog.wait(f));
  const int rounds = kSanitized ? 150 : 500;
  int stale_seen = 0;
  for (int i = 0; i < rounds; ++i) {
    ASSERT_TRUE(s.catalog.wait(f)) << "round " << i;  // ready before each round
    std::atomic<int> ready{0};
    std::stop_source watchdog;
    bool waited = false;
    std::thread waiter([&] {
      ++ready;
      while (ready.load() < 2) {
      }
      // refresh() stats the file first: start the wait a little later each round, so that some
      // rounds put refresh()'s change inside wait()'s window.
      for (int k = 0; k < (i % 64) * 64; ++k) std::atomic_signal_fence(std::memory_order_seq_cst);
      waited = s.catalog.wait(f, watchdog.get_token());
    });
    // A new mtime, as a rewrite with the same bytes would leave.
    const struct timespec times[2] = {{0, UTIME_OMIT}, {1'000'000'000 + i, 0}};
    ASSERT_EQ(utimensat(AT_FDCWD, f->path().c_str(), times, 0), 0);
    ++ready;
    while (ready.load() < 2) {
    }
    if (s.catalog.refresh(f)) ++stale_seen;
    std::thread dog([&] {
      for (int ms = 0; ms < 20000 && !watchdog.stop_requested(); ms += 10)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      watchdog.request_stop();
    });
    waiter.join();
    const bool stopped = watchdog.stop_requested();
    watchdog.request_stop();
    dog.join();
    ASSERT_FALSE(stopped) << "round " << i << ": wait() slept on a stale file for 20 s";
    ASSERT_TRUE(waited) << "round " << i << ": " << s.catalog.status(f).describe();
  }
  EXPECT_GT(stale_seen, 0);
  const std::shared_ptr<engine::Reader> r = reader_of(s.catalog, f);
  ASSERT_TRUE(r);
  Bytes got(plain.size());
  ASSERT_EQ(r->read(0, got.size(), got.data()), static_cast<ssize_t>(plain.size()));
  EXPECT_TRUE(same_bytes(got, plain));
}

TEST(CatalogConcurrent, MissingSourceFails) {
  CatalogRig s;
  const catalog::FileRef f = s.catalog.add((s.dir.path() / "missing.bz2").string());
  EXPECT_FALSE(s.catalog.wait(f));
  EXPECT_NE(s.catalog.status(f).error.message().find("No such file"), std::string::npos) << s.catalog.status(f).error;
}

TEST(CatalogConcurrent, ASourceChangeMakesTheIndexStaleAndANewReader) {
  CatalogRig s;
  const Bytes one = text_bytes(300000, 4), two = text_bytes(200000, 5);
  const catalog::FileRef f = s.add("c.bz2", one);
  const std::shared_ptr<engine::Reader> r1 = reader_of(s.catalog, f);
  ASSERT_TRUE(r1);
  // Opens of the same content share one Reader.
  EXPECT_EQ(reader_of(s.catalog, f), r1);
  EXPECT_FALSE(s.catalog.refresh(f));  // unchanged

  write_file(f->path(), libbz2_compress(two, 5));
  EXPECT_TRUE(s.catalog.refresh(f));
  EXPECT_EQ(s.catalog.status(f).state, IndexState::kStale);
  EXPECT_EQ(s.catalog.status(f).describe(), "queued");
  const std::shared_ptr<engine::Reader> r2 = reader_of(s.catalog, f);
  ASSERT_TRUE(r2);
  EXPECT_NE(r2, r1);
  EXPECT_EQ(r2->size(), two.size());
  Bytes got(two.size());
  ASSERT_EQ(r2->read(0, got.size(), got.data()), static_cast<ssize_t>(two.size()));
  EXPECT_TRUE(same_bytes(got, two));
}

TEST(CatalogConcurrent, AStoppedWaitEndsAtOnceAndTheBuildGoesOn) {
  CatalogRig s(1);
  const catalog::FileRef f = s.add("slow.bz2", text_bytes(scaled(12000000, 4000000), 6));
  std::stop_source stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    stop.request_stop();
  });
  const auto t0 = std::chrono::steady_clock::now();
  const bool ready = s.catalog.wait(f, stop.get_token());
  const auto waited = std::chrono::steady_clock::now() - t0;
  stopper.join();
  if (!ready) {
    // Stopped: not settled, and the build still runs to its end.
    EXPECT_FALSE(s.catalog.status(f).settled());
    EXPECT_LT(waited, std::chrono::seconds(kSanitized ? 30 : 5));
  }
  settle_guarded(s.catalog, f);
  EXPECT_TRUE(s.catalog.status(f).ready());
  // An already stopped token does not keep a settled file from answering.
  EXPECT_TRUE(s.catalog.wait(f, stop.get_token()));
}

TEST(CatalogConcurrent, AFileSomeoneWaitsForIsBuiltNext) {
  CatalogRig s(1);
  // f0 builds first (the queue was empty); f1, f2 queue behind it; f1 is then asked for. The
  // builds are held at their start until then: f0 must still be building when f1 is asked for
  // (on a slow machine the test's thread could otherwise lose the core for longer than f0's build).
  std::atomic<bool> held{true};
  s.catalog.hold_builds_while([&] { return held.load(); });
  const catalog::FileRef f0 = s.add("f0.bz2", text_bytes(3000000, 7));
  const catalog::FileRef f1 = s.add("f1.bz2", text_bytes(3000000, 8));
  const catalog::FileRef f2 = s.add("f2.bz2", text_bytes(3000000, 9));
  s.catalog.prepare(f0, Need::kSoon);
  s.catalog.prepare(f1, Need::kSoon);
  s.catalog.prepare(f2, Need::kSoon);  // newest first: f2 would be next
  EXPECT_EQ(s.catalog.status(f0).state, IndexState::kBuilding);
  EXPECT_EQ(s.catalog.status(f2).state, IndexState::kQueued);
  s.catalog.prepare(f1, Need::kNow);  // ... but f1 is asked for (wait() begins with this)
  held = false;
  ASSERT_TRUE(s.catalog.wait(f1));
  EXPECT_FALSE(s.catalog.status(f2).ready()) << "f2 was built before the file someone waited for";
  settle_guarded(s.catalog, f2);
  settle_guarded(s.catalog, f0);  // (it may have stepped aside for f2 after its quantum)
  EXPECT_TRUE(s.catalog.status(f0).ready());
  EXPECT_TRUE(s.catalog.status(f2).ready());
}

TEST(CatalogConcurrent, RebuildBuildsACurrentIndexAgain) {
  CatalogRig s;
  const catalog::FileRef f = s.add("r.bz2", text_bytes(200000, 10));
  ASSERT_TRUE(s.catalog.wait(f));
  const auto first = s.catalog.status(f).index;
  s.catalog.prepare(f, Need::kSoon);  // settled: nothing to do
  EXPECT_EQ(s.catalog.status(f).index, first);
  s.catalog.prepare(f, Need::kRebuild);
  settle_guarded(s.catalog, f);
  const catalog::IndexStatus st = s.catalog.status(f);
  ASSERT_TRUE(st.ready());
  EXPECT_TRUE(st.origin.built);
  EXPECT_NE(st.index, first);
  EXPECT_TRUE(same_index(*st.index, *first));
}

TEST(CatalogConcurrent, ShutdownSettlesEveryWaitingFile) {
  CatalogRig s(1);
  std::vector<catalog::FileRef> files;
  for (int i = 0; i < 4; ++i) {
    std::string name = std::to_string(i);  // (not "s" + to_string: a GCC 12 -Wrestrict false positive)
    name += ".bz2";
    files.push_back(s.add(name, text_bytes(scaled(6000000, 2000000), 20 + i)));
  }
  for (const auto& f : files) s.catalog.prepare(f, Need::kSoon);
  std::vector<std::thread> waiters;
  std::atomic<int> returned{0};
  for (const auto& f : files)
    waiters.emplace_back([&, f] {
      s.catalog.wait(f);
      ++returned;
    });
  s.catalog.shutdown();
  for (auto& t : waiters) t.join();
  EXPECT_EQ(returned.load(), 4);
  for (const auto& f : files) {
    const catalog::IndexStatus st = s.catalog.status(f);
    EXPECT_TRUE(st.settled());
    if (!st.ready()) {
      EXPECT_EQ(st.error.message(), "unmounting");
    }
  }
  // After shutdown nothing new is built: a new file fails at once.
  const catalog::FileRef late = s.add("late.bz2", text_bytes(1000, 1));
  EXPECT_FALSE(s.catalog.wait(late));
  EXPECT_EQ(s.catalog.status(late).error.message(), "unmounting");
}

TEST(CatalogConcurrent, ManyThreadsWaitForOneBuild) {
  CatalogRig s;
  const Bytes plain = text_bytes(scaled(3000000, 1000000), 11);
  const catalog::FileRef f = s.add("many.bz2", plain);
  std::vector<std::thread> ts;
  std::vector<std::shared_ptr<engine::Reader>> readers(8);
  for (int i = 0; i < 8; ++i)
    ts.emplace_back([&, i] { readers[i] = reader_of(s.catalog, f); });
  for (auto& t : ts) t.join();
  for (const auto& r : readers) {
    ASSERT_TRUE(r);
    EXPECT_EQ(r->size(), plain.size());
  }
  // The build leaves the catalog's books just after it settles the file.
  EXPECT_TRUE(eventually([&] { return s.catalog.pending() == 0; }));
}

// Opens racing for a file whose index is ready but that has no Reader yet each make one; they must
// all end up with the same Reader, so that its readers share one in-flight table and a block is
// decoded once for all of them (seen through a mount: 32 readers of one cold block, 2 decodes).
// The source access holds every open of the source until all the racers have reached it, so each
// of them has found no Reader and makes its own.
TEST(CatalogConcurrent, OpensRacingForAFileShareOneReader) {
  constexpr int kThreads = 8;
  struct GatedAccess final : PlainAccess {
    mutable std::mutex mu;
    mutable std::condition_variable cv;
    mutable int arrived = 0;
    bool gated = false;
    base::Result<io::UniqueFd> open(const catalog::CatalogFile& file, struct stat* st) const override {
      if (gated) {
        std::unique_lock lk(mu);
        ++arrived;
        cv.notify_all();
        cv.wait_for(lk, std::chrono::seconds(10), [&] { return arrived >= kThreads; });
      }
      return PlainAccess::open(file, st);
    }
  } access;
  CatalogRig s(2, &access);
  Catalog& catalog = s.catalog;
  const catalog::FileRef f = s.add("raced.bz2", text_bytes(200000, 12));
  ASSERT_TRUE(catalog.wait(f));  // indexed, and no Reader yet
  access.gated = true;
  std::vector<std::shared_ptr<engine::Reader>> readers(kThreads);
  std::vector<std::thread> ts;
  for (int i = 0; i < kThreads; ++i)
    ts.emplace_back([&, i] { readers[i] = reader_of(catalog, f); });
  for (auto& t : ts) t.join();
  EXPECT_GE(access.arrived, kThreads) << "the racers did not all reach the source: the test tests nothing";
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_TRUE(readers[i]);
    EXPECT_EQ(readers[i].get(), readers[0].get()) << "opener " << i << " has a Reader of its own";
  }
}

TEST(Catalog, StartsLikeBzip2LooksAtTheHeader) {
  TempDir dir;
  auto probe = [&](const Bytes& content) {
    const int fd = ::open(dir.write("probe", content).c_str(), O_RDONLY);
    const int yes = index::starts_like_bzip2(fd);
    ::close(fd);
    return yes;
  };
  EXPECT_EQ(probe(libbz2_compress(to_bytes("x"), 9)), 1);
  EXPECT_EQ(probe(to_bytes("BZh1")), 1);
  EXPECT_EQ(probe(to_bytes("BZh0")), 0);
  EXPECT_EQ(probe(to_bytes("BZh")), 0);
  EXPECT_EQ(probe(to_bytes("")), 0);
  EXPECT_EQ(probe(to_bytes("PK\x03\x04")), 0);
  // A head that cannot be read is neither: its errno (a directory's read fails with EISDIR).
  const int dfd = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY);
  EXPECT_EQ(index::starts_like_bzip2(dfd), -EISDIR);
  ::close(dfd);
}

}  // namespace
}  // namespace mibz2::test
