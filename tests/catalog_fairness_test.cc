// How builds share the decoders: a file of tiny streams that expand 900000:1
// (100 streams of 50 bytes, each 45 MB of zeros: 5 KB that take seconds of every decoder) must not
// hold up a file someone waits for, nor a small file queued in the background behind it. The
// orders of events and the big file's progress are asserted, never times.
//
// Also the BuildScheduler's policy on its own (which file gets a slot, when a build yields), and
// the mechanism under it: builds parked and resumed at every job end with exact indexes; a parked
// build whose source changed ends and is built again from the file as it is.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

#include "catalog/build_scheduler.h"
#include "catalog/source_access.h"
#include "catalog_test_support.h"

namespace mibz2::test {
namespace {

using catalog::BuildScheduler;
using catalog::Catalog;
using catalog::IndexState;
using Need = catalog::Catalog::Need;
using Verdict = catalog::BuildScheduler::Verdict;

constexpr uint64_t kZeros = 45000000;  // one level-9 block: a 50-byte stream

// `streams` copies of one bzip2 stream of 45 MB of zeros (the file with 100).
Bytes expanding_file(size_t streams) {
  static const Bytes one = libbz2_compress(Bytes(kZeros, 0), 9);
  Bytes file;
  for (size_t i = 0; i < streams; ++i) file.insert(file.end(), one.begin(), one.end());
  return file;
}

// The catalog rig, with the big file's progress and tiny files.
struct Rig : CatalogRig {
  using CatalogRig::CatalogRig;
  // 6 bytes of content (each tiny file its own, so that none is found in the store as a copy).
  catalog::FileRef tiny(const std::string& name, const char* text = "hello\n") {
    return add(name, to_bytes(text), 9);
  }
  // The big file under way, with some of it done (its builder has the decoders).
  ::testing::AssertionResult building_with_progress(const catalog::FileRef& big) {
    if (eventually(
            [&] {
              const catalog::IndexStatus st = catalog.status(big);
              return st.state == IndexState::kBuilding && st.build_done > 0;
            },
            kBuildTimeout))
      return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "the big file never made progress: " << catalog.status(big).describe();
  }
  // The big file is still being built, and less than half of it is done.
  ::testing::AssertionResult far_from_done(const catalog::FileRef& big) {
    const catalog::IndexStatus st = catalog.status(big);
    if (st.state == IndexState::kBuilding && st.build_done < st.build_total / 2) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "the big file is " << st.describe() << " (" << st.build_done << " of "
                                         << st.build_total << " bytes)";
  }
};

// The file indexes in the background; a tiny file someone waits for (stat, open) is ready
// while the big one is far from done, and again once someone waits for the big one too (its jobs
// then go at demand priority as well, side by side with the tiny file's).
TEST(CatalogFairnessConcurrent, AFileSomeoneWaitsForIsReadyWhileAnExpandingFileIsIndexed) {
  Rig s(2);
  const catalog::FileRef big = s.add_file("big.bz2", expanding_file(kSanitized ? 30 : 100));
  s.catalog.prepare(big, Need::kSoon);
  ASSERT_TRUE(s.building_with_progress(big));

  const catalog::FileRef tiny = s.tiny("tiny.bz2");
  ASSERT_TRUE(s.catalog.wait(tiny));
  EXPECT_EQ(s.catalog.status(tiny).index->decompressed_size, 6u);
  EXPECT_TRUE(s.far_from_done(big)) << "the tiny file waited for the big one";

  s.catalog.prepare(big, Need::kNow);  // someone waits for the big file too
  const catalog::FileRef tiny2 = s.tiny("tiny2.bz2", "world\n");
  ASSERT_TRUE(s.catalog.wait(tiny2));
  EXPECT_TRUE(s.far_from_done(big)) << "the tiny file waited for the big one, which someone waits for";
}

// With one decoder there is one background slot: a tiny file queued behind the expanding one
// waits for it to have had its quantum, not for its whole build, and is ready while it is far from
// done. (Three times the file: a quantum is a second, and a fast machine decodes such a
// block in tens of ms.)
TEST(CatalogFairnessConcurrent, ASmallFileQueuedBehindAnExpandingOneHasItsTurn) {
  Rig s(1);
  const catalog::FileRef big = s.add_file("big.bz2", expanding_file(kSanitized ? 30 : 300));
  s.catalog.prepare(big, Need::kSoon);
  ASSERT_TRUE(s.building_with_progress(big));

  const catalog::FileRef tiny = s.tiny("tiny.bz2");
  s.catalog.prepare(tiny, Need::kSoon);
  EXPECT_EQ(s.catalog.status(tiny).state, IndexState::kQueued) << "not behind the big file: the test tests nothing";
  settle_guarded(s.catalog, tiny);
  EXPECT_TRUE(s.catalog.status(tiny).ready()) << s.catalog.status(tiny).describe();
  EXPECT_TRUE(s.far_from_done(big)) << "the tiny file waited for the whole build of the big one";
}

// With no quantum, every build steps aside at each job while files wait that have not had a turn:
// many parks and resumes (the source closed and opened again each time), and in the middle a file
// someone waits for (promoted while parked, or before it started). Every index ends exactly as a
// build on its own makes it.
TEST(CatalogFairnessConcurrent, BuildsParkedAndResumedAtEveryJobEndWithExactIndexes) {
  for (const unsigned threads : {1u, 2u}) {
    SCOPED_TRACE(std::to_string(threads) + " decoders");
    Rig s(threads);
    s.catalog.set_build_quantum(std::chrono::nanoseconds(0));
    std::vector<catalog::FileRef> files;
    std::vector<Bytes> contents;
    for (int i = 0; i < 6; ++i) {
      // Several blocks each (level 1: 100 kB), and an expanding one.
      contents.push_back(i == 3 ? expanding_file(3)
                                : libbz2_compress(text_bytes(scaled(600000, 200000) + 1000 * i, 70 + i), 1));
      std::string name = "p";
      name += std::to_string(i);
      name += ".bz2";
      files.push_back(s.add_file(name, contents.back()));
    }
    for (const auto& f : files) s.catalog.prepare(f, Need::kSoon);
    ASSERT_TRUE(s.catalog.wait(files[0]));  // asked for: urgent, whether parked or still queued
    ASSERT_TRUE(s.catalog.wait(files[4]));
    for (const auto& f : files) settle_guarded(s.catalog, f);
    for (size_t i = 0; i < files.size(); ++i) {
      SCOPED_TRACE(files[i]->path());
      const catalog::IndexStatus got = s.catalog.status(files[i]);
      ASSERT_TRUE(got.ready()) << got.describe();
      index::IndexStore alone((s.dir.path() / ("alone" + std::to_string(i))).string());
      const catalog::IndexStatus want = obtain_guarded(files[i]->path(), alone, threads);
      ASSERT_TRUE(want.ready()) << want.describe();
      EXPECT_TRUE(same_index(*got.index, *want.index));
    }
    EXPECT_EQ(s.catalog.pending(), 0u);
    const catalog::CatalogSummary sum = s.catalog.summary();
    EXPECT_EQ(sum.ready, files.size());
    EXPECT_EQ(sum.built, files.size());
  }
}

// A parked build whose source is another file when it resumes (rewritten meanwhile) ends without
// an index (what it read belongs to the file before), and the file is built again from the file
// as it is when it is next asked for.
TEST(CatalogFairnessConcurrent, AParkedBuildWhoseSourceChangedIsBuiltAgainFromTheNewFile) {
  // Once armed, rewrites the big file just before the catalog next opens it: to resume its build
  // (prepare() opened it to look for a stored index and to start the build before it returned).
  struct RewritingAccess final : PlainAccess {
    std::string big;
    Bytes replacement;
    mutable std::mutex mu;
    bool armed = false;  // guarded by mu
    mutable bool rewritten = false;
    base::Result<io::UniqueFd> open(const catalog::CatalogFile& file, struct stat* st) const override {
      if (file.path() == big) {
        std::lock_guard lk(mu);
        if (armed && !rewritten) {
          write_file(big, replacement);
          rewritten = true;
        }
      }
      return PlainAccess::open(file, st);
    }
  } access;
  Rig s(1, &access);
  s.catalog.set_build_quantum(std::chrono::nanoseconds(0));
  const Bytes after = text_bytes(250000, 81);
  access.replacement = libbz2_compress(after, 1);
  const catalog::FileRef big = s.add_file("big.bz2", expanding_file(kSanitized ? 8 : 20));
  access.big = big->path();
  s.catalog.prepare(big, Need::kSoon);
  ASSERT_EQ(s.catalog.status(big).state, IndexState::kBuilding);
  {
    std::lock_guard lk(access.mu);
    access.armed = true;
  }
  const catalog::FileRef tiny = s.tiny("tiny.bz2");
  s.catalog.prepare(tiny, Need::kSoon);  // waits: the big file yields to it at its next job's end
  settle_guarded(s.catalog, tiny);
  ASSERT_TRUE(eventually([&] { return s.catalog.status(big).state == IndexState::kStale; }, kBuildTimeout))
      << s.catalog.status(big).describe();
  {
    std::lock_guard lk(access.mu);
    EXPECT_TRUE(access.rewritten) << "the big file was not parked and resumed";
  }
  ASSERT_TRUE(s.catalog.wait(big));
  const catalog::IndexStatus st = s.catalog.status(big);
  EXPECT_EQ(st.index->decompressed_size, after.size());
  EXPECT_EQ(st.index->source.size, access.replacement.size());
}

// ---- the policy alone ---------------------------------------------------------------------------

std::shared_ptr<catalog::CatalogFile> file_named(const char* name) {
  return std::make_shared<catalog::CatalogFile>(name);
}

// A free slot goes to the newest urgent file, then the newest background one; background builds
// take at most their share of the slots, so urgent files always find one.
TEST(BuildScheduler, UrgentFilesFirstNewestFirstAndBackgroundBuildsTakeTheirShare) {
  BuildScheduler sched(3, 1, std::chrono::seconds(1));
  const auto a = file_named("a"), b = file_named("b"), c = file_named("c"), d = file_named("d");
  ASSERT_TRUE(sched.queue(a, false));
  ASSERT_TRUE(sched.queue(b, false));
  ASSERT_TRUE(sched.queue(c, true));
  ASSERT_TRUE(sched.queue(a, true));  // asked for: moves to the urgent files, newest
  EXPECT_EQ(sched.waiting(), 3u);
  auto first = sched.next();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->file, a);
  EXPECT_TRUE(first->urgent);
  auto second = sched.next();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->file, c);
  auto third = sched.next();
  ASSERT_TRUE(third);
  EXPECT_EQ(third->file, b);
  EXPECT_FALSE(third->urgent);
  EXPECT_FALSE(sched.next()) << "three slots";
  // One background slot: with a slot free, a second background file still waits; an urgent one not.
  sched.give_back(true);
  ASSERT_TRUE(sched.queue(d, false));
  EXPECT_FALSE(sched.next()) << "a second background build";
  const auto e = file_named("e");
  ASSERT_TRUE(sched.queue(e, true));
  auto fourth = sched.next();
  ASSERT_TRUE(fourth);
  EXPECT_EQ(fourth->file, e);
  EXPECT_EQ(sched.stop(), std::vector<std::shared_ptr<catalog::CatalogFile>>{d});
  EXPECT_FALSE(sched.queue(a, false)) << "stopped";
  EXPECT_FALSE(sched.next());
}

// A build yields after its quantum, and only to a file that has not had a turn (an urgent build
// only to an urgent file); parked, it has its turn again when a slot frees, urgent ones first.
TEST(BuildScheduler, ABuildYieldsAfterItsQuantumToFilesThatHaveNotHadATurn) {
  BuildScheduler sched(2, 1, std::chrono::milliseconds(10));
  const auto a = file_named("a"), b = file_named("b"), c = file_named("c");
  auto big = std::make_shared<catalog::BuildTurn>(a);
  ASSERT_TRUE(sched.queue(a, false));
  ASSERT_TRUE(sched.next());
  sched.started(*big, false);
  EXPECT_EQ(sched.job_done(*big, false), Verdict::kGoOn) << "nothing waits";
  big->served_ns += 20'000'000;
  EXPECT_EQ(sched.job_done(*big, false), Verdict::kGoOn) << "its quantum is up, but nothing waits";
  ASSERT_TRUE(sched.queue(b, false));
  EXPECT_FALSE(sched.next()) << "the one background slot is taken";
  EXPECT_EQ(sched.job_done(*big, false), Verdict::kYield);
  EXPECT_EQ(sched.job_done(*big, false), Verdict::kGoOn) << "yielded once";
  auto small = sched.next();
  ASSERT_TRUE(small);
  EXPECT_EQ(small->file, b);
  auto small_turn = std::make_shared<catalog::BuildTurn>(b);
  sched.started(*small_turn, false);
  ASSERT_TRUE(sched.park(big, false));
  EXPECT_FALSE(sched.next()) << "the parked build waits for the background slot";
  // The small build becomes urgent (someone asked for it): it leaves the background slot, and
  // the parked build has its turn again, its quantum anew.
  EXPECT_EQ(sched.job_done(*small_turn, true), Verdict::kSlotFreed);
  auto again = sched.next();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->parked, big);
  EXPECT_EQ(big->served_ns.load(), 0);
  // An urgent build does not yield to a background file, only to an urgent one.
  small_turn->served_ns += 20'000'000;
  ASSERT_TRUE(sched.queue(c, false));
  EXPECT_EQ(sched.job_done(*small_turn, true), Verdict::kGoOn);
  ASSERT_TRUE(sched.queue(c, true));
  EXPECT_EQ(sched.job_done(*small_turn, true), Verdict::kYield);
  auto urgent = sched.next();
  ASSERT_TRUE(urgent);
  EXPECT_EQ(urgent->file, c);
}

// A parked background build someone asks for waits among the urgent builds: its turn comes before
// that of a background file that has not had one.
TEST(BuildScheduler, AParkedBuildSomeoneAsksForHasItsTurnFirst) {
  BuildScheduler sched(1, 1, std::chrono::milliseconds(10));
  const auto a = file_named("a"), b = file_named("b"), d = file_named("d");
  auto ta = std::make_shared<catalog::BuildTurn>(a);
  ASSERT_TRUE(sched.queue(a, false));
  ASSERT_TRUE(sched.next());
  sched.started(*ta, false);
  ta->served_ns += 20'000'000;
  ASSERT_TRUE(sched.queue(b, false));
  ASSERT_EQ(sched.job_done(*ta, false), Verdict::kYield);
  auto nb = sched.next();
  ASSERT_TRUE(nb);
  ASSERT_EQ(nb->file, b);
  auto tb = std::make_shared<catalog::BuildTurn>(b);
  sched.started(*tb, false);
  ASSERT_TRUE(sched.park(ta, false));
  ASSERT_TRUE(sched.queue(d, false));
  sched.promote(a);
  sched.ended(*tb);
  auto next = sched.next();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->parked, ta);
  EXPECT_TRUE(next->urgent);
  EXPECT_EQ(sched.waiting(), 1u);  // d
}

}  // namespace
}  // namespace mibz2::test
