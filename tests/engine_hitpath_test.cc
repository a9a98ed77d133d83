// The cache-hit path takes no lock but a cache shard's (see ../shared/reading/
// futex-storm-lookup-under-lock.md): while another thread holds the Reader's in-flight mutex, or
// the cache's admission mutex (until the reads are done, or 30 s), 1000 reads of a cached range all
// complete while it is held. This is a correctness property of which locks the hit path takes, not a benchmark: a hit
// path that took either lock would finish its reads only after the release, and the test says so.
// Negative controls show the test can fail: a read of an uncached block does wait for the holder.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <ostream>
#include <thread>

#include "engine_test_support.h"

namespace mibz2::test {
namespace {

using engine::Engine;
using engine::Reader;
using Clock = std::chrono::steady_clock;

// The longest a lock is held: far longer than any run of cached reads takes, even under a
// sanitizer on a loaded machine, so that a hit path that waited for the lock is told apart from
// one that is merely slow (which is not what these tests are about).
constexpr auto kMaxHold = std::chrono::seconds(30);

// Holds a mutex on its own thread from construction until release() or kMaxHold; phase() is 1 while
// it is held and 2 from just before it is released.
class LockHolder {
 public:
  explicit LockHolder(std::mutex& m) : thread_([this, &m] {
    std::unique_lock lk(m);
    phase_ = 1;
    std::unique_lock wait(release_mu_);
    released_cv_.wait_for(wait, kMaxHold, [this] { return released_; });
    phase_ = 2;
  }) {
    while (phase_.load() == 0) std::this_thread::yield();
  }
  ~LockHolder() { join(); }
  void release() {
    {
      std::lock_guard lk(release_mu_);
      released_ = true;
    }
    released_cv_.notify_all();
  }
  void join() {
    release();
    if (thread_.joinable()) thread_.join();
  }
  int phase() const { return phase_.load(); }

 private:
  std::atomic<int> phase_{0};
  std::mutex release_mu_;
  std::condition_variable released_cv_;
  bool released_ = false;
  std::thread thread_;
};

enum class Lock { kInflight, kAdmission };
void PrintTo(Lock l, std::ostream* os) { *os << (l == Lock::kInflight ? "inflight_mu" : "admission_mu"); }
std::mutex& lock_of(Lock which, Engine& e, Reader& r) {
  return which == Lock::kInflight ? r.inflight_mutex_for_testing() : e.cache().admission_mutex_for_testing();
}
const char* name_of(Lock which) { return which == Lock::kInflight ? "Reader::inflight_mu_" : "BlockCache::admission_mu_"; }

// Reads [offset, offset + length) `count` times on `threads` threads while `which` is held;
// expects every read to finish (with the right bytes) before the holder lets go.
void expect_reads_finish_while_held(Engine& e, Reader& r, const Source& s, Lock which, uint64_t offset, size_t length,
                                    int threads = 1, int count = 1000) {
  LockHolder holder(lock_of(which, e, r));
  const auto t0 = Clock::now();
  std::atomic<int> wrong{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      std::vector<uint8_t> buf(length);
      for (int i = 0; i < count / threads; ++i) {
        if (r.read(offset, length, buf.data()) != static_cast<ssize_t>(length) ||
            std::memcmp(buf.data(), s.plain.data() + offset, length) != 0)
          ++wrong;
      }
    });
  for (auto& t : pool) t.join();
  const auto elapsed = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0);
  const int phase = holder.phase();
  holder.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(phase, 1) << count << " reads of a cached range took " << elapsed.count() / 1000.0
                      << " ms and finished only after " << name_of(which)
                      << " was released: the hit path waited for a lock it must not take";
}

// Negative control: a read that must decode waits for `which`; it finishes only after release.
void expect_uncached_read_waits(Engine& e, Reader& r, const Source& s, Lock which, uint64_t offset) {
  ASSERT_FALSE(e.cache().contains({r.file_id(), s.index->block_at(offset)}));
  LockHolder holder(lock_of(which, e, r));
  std::atomic<int> phase_when_done{0};
  std::thread reader([&] {
    read_and_check(r, s, offset, 1000);
    phase_when_done = holder.phase();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(phase_when_done.load(), 0) << "a read of an uncached block finished while " << name_of(which)
                                       << " was held";
  holder.join();
  reader.join();
  EXPECT_EQ(phase_when_done.load(), 2) << "the read finished before the release";
}

// Waits until no decode is queued or running (read-ahead from warming reads has landed).
void settle(Engine& e) {
  uint64_t last = ~uint64_t{0};
  EXPECT_TRUE(eventually([&] {
    const uint64_t now = stat(e.stats().decodes) + stat(e.stats().decode_errors);
    const bool quiet = e.pool().queued_at_or_above(engine::Priority::kBackground) == 0 && now == last;
    last = now;
    if (!quiet) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return quiet;
  }));
}

class HitPathConcurrent : public ::testing::TestWithParam<Lock> {};

TEST_P(HitPathConcurrent, CachedReadsNeverWaitForTheLock) {
  const Source& s = text_source();
  Engine e(options(2, kTestCacheBytes, /*readahead=*/false));
  auto reader = open_reader(e, 1, s);
  const uint64_t off = s.block_start(2) + 12345;
  ASSERT_TRUE(read_and_check(*reader, s, off, 4096));  // warm: block 2 is cached
  ASSERT_TRUE(e.cache().contains({1, 2}));
  expect_reads_finish_while_held(e, *reader, s, GetParam(), off, 4096);
  // Many readers at once.
  expect_reads_finish_while_held(e, *reader, s, GetParam(), off, 4096, /*threads=*/8);
  // A read spanning two cached blocks.
  ASSERT_TRUE(read_and_check(*reader, s, s.block_start(3), 10));
  expect_reads_finish_while_held(e, *reader, s, GetParam(), s.block_start(3) - 2000, 4000, 1, 200);
  EXPECT_EQ(stat(e.stats().decodes), 2u);
  // The negative control: a cold block waits for the holder.
  expect_uncached_read_waits(e, *reader, s, GetParam(), s.block_start(5) + 100);
}

TEST_P(HitPathConcurrent, CachedReadsWithReadAheadOnNeverWaitForTheLock) {
  // Read-ahead on, every block the policy may plan already cached: the hit path feeds the policy
  // and finds nothing to queue.
  const Source& s = text_source();
  Engine e(options(2, kTestCacheBytes, /*readahead=*/true));
  auto reader = open_reader(e, 1, s);
  const size_t first = 1, warm = std::min<size_t>(s.blocks() - 2, first + 24);
  for (size_t b = first; b <= warm; ++b) ASSERT_TRUE(read_and_check(*reader, s, s.block_start(b), 1000));
  settle(e);
  const uint64_t off = s.block_start(first) + 5000;
  ASSERT_TRUE(read_and_check(*reader, s, off, 4096));
  settle(e);
  expect_reads_finish_while_held(e, *reader, s, GetParam(), off, 4096);
  expect_reads_finish_while_held(e, *reader, s, GetParam(), off, 4096, /*threads=*/8);
  // The negative control on a second Reader of the file (its own in-flight table, its own cache
  // keys): read-ahead has cached this Reader's blocks.
  auto other = open_reader(e, 2, s);
  expect_uncached_read_waits(e, *other, s, GetParam(), s.block_start(s.blocks() / 2) + 10);
}

INSTANTIATE_TEST_SUITE_P(Locks, HitPathConcurrent, ::testing::Values(Lock::kInflight, Lock::kAdmission),
                         [](const auto& info) { return info.param == Lock::kInflight ? "Inflight" : "Admission"; });

// A cached read whose sequential stream earns read-ahead of blocks that are NOT cached yet: it
// queues them, and queueing must not make the read wait behind the admission mutex (the decodes
// run on the pool; the insert there is what waits).
TEST(HitPathReadAheadConcurrent, QueueingReadAheadNeverWaitsForAdmission) {
  const Source& s = text_source();
  Engine e(options(2, kTestCacheBytes, /*readahead=*/true));
  auto reader = open_reader(e, 1, s);
  const uint64_t off = s.block_start(2) + 100;
  ASSERT_TRUE(read_and_check(*reader, s, off, 4096));
  settle(e);
  expect_reads_finish_while_held(e, *reader, s, Lock::kAdmission, off, 4096);
  EXPECT_GT(stat(e.stats().readahead_issued), 0u) << "the test meant to queue read-ahead";
}

// The same with the in-flight mutex held: queueing read-ahead for a block that is not cached needs
// Reader::inflight_mu_, and the hit path only tries it (a busy mutex skips this read's read-ahead;
// the next read queues it), so a cached read never waits for a decode being queued.
TEST(HitPathReadAheadConcurrent, QueueingReadAheadNeverWaitsForTheInflightMutex) {
  const Source& s = text_source();
  Engine e(options(2, kTestCacheBytes, /*readahead=*/true));
  auto reader = open_reader(e, 1, s);
  const uint64_t off = s.block_start(2) + 100;
  ASSERT_TRUE(read_and_check(*reader, s, off, 4096));
  settle(e);
  expect_reads_finish_while_held(e, *reader, s, Lock::kInflight, off, 4096);
}

// What the comment above promises: read-ahead a cached read skipped because the in-flight mutex
// was busy is queued by the stream's next read. (The policy had counted it as queued, so those
// blocks came cold to a sequential reader: CI's EngineConcurrent.SequentialReadingIsServedByReadAhead
// could see too little read-ahead when a decode's end held the mutex as a plan was queued.)
TEST(HitPathReadAheadConcurrent, ReadAheadSkippedForABusyInflightMutexIsQueuedByTheNextRead) {
  const Source& s = text_source();
  ASSERT_GE(s.blocks(), 6u);
  Engine e(options(2, kTestCacheBytes, /*readahead=*/true));
  auto reader = open_reader(e, 1, s);
  const uint64_t base = s.block_start(2);
  ASSERT_GT(s.block_size(2), 4000u);
  ASSERT_TRUE(read_and_check(*reader, s, base, 1000));  // cold; a new stream earns nothing yet
  settle(e);
  ASSERT_EQ(stat(e.stats().readahead_issued), 0u);
  {
    LockHolder holder(reader->inflight_mutex_for_testing());
    ASSERT_TRUE(read_and_check(*reader, s, base + 1000, 1000));  // a hit that plans blocks 3.. ahead
    EXPECT_EQ(holder.phase(), 1);
  }
  EXPECT_EQ(stat(e.stats().readahead_issued), 0u) << "read-ahead was queued while the mutex was held";
  ASSERT_TRUE(read_and_check(*reader, s, base + 2000, 1000));  // the stream's next read
  settle(e);
  EXPECT_TRUE(e.cache().contains({1, 3})) << "block 3 was planned, not queued, and never planned again; "
                                          << e.stats().summary();
  EXPECT_GT(stat(e.stats().readahead_issued), 0u);
}

}  // namespace
}  // namespace mibz2::test
