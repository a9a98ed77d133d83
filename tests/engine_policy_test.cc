// ReadAheadPolicy (pure logic): random reads earn nothing, a sequential stream's window grows to
// its limits in blocks and bytes, interleaved streams are told apart. DecoderPool: demand jobs run
// before queued read-ahead and background jobs, FIFO within a priority, on every worker.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <latch>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/sanitizers.h"
#include "engine/decoder_pool.h"
#include "engine/readahead.h"
#include "engine_test_support.h"

namespace mibz2::test {
namespace {

using engine::DecoderPool;
using engine::Priority;
using engine::ReadAheadLimits;
using engine::ReadAheadPlan;
using engine::ReadAheadPolicy;
using engine::WorkerContext;

// A synthetic file of `count` blocks with the given sizes (decompressed), for feeding the policy.
struct FakeFile {
  std::vector<uint64_t> starts, sizes;
  explicit FakeFile(std::vector<uint64_t> block_sizes) : sizes(std::move(block_sizes)) {
    uint64_t off = 0;
    for (uint64_t s : sizes) {
      starts.push_back(off);
      off += s;
    }
    starts.push_back(off);
  }
  static FakeFile uniform(uint64_t count, uint64_t size) { return FakeFile(std::vector<uint64_t>(count, size)); }
  uint64_t total() const { return starts.back(); }
  uint64_t block_at(uint64_t off) const {
    return static_cast<uint64_t>(std::upper_bound(starts.begin(), starts.end(), off) - starts.begin()) - 1;
  }
  ReadAheadPlan read(ReadAheadPolicy& p, uint64_t off, uint64_t len) const {
    const uint64_t end = std::min(off + len, total());
    return p.on_read(off, end - off, block_at(off), block_at(end - 1), sizes.size(),
                     [this](uint64_t b) { return sizes[b]; });
  }
  // The same read, with the blocks' ends given (the policy then says which blocks were passed).
  ReadAheadPlan read_passing(ReadAheadPolicy& p, uint64_t off, uint64_t len) const {
    const uint64_t end = std::min(off + len, total());
    return p.on_read(off, end - off, block_at(off), block_at(end - 1), sizes.size(),
                     [this](uint64_t b) { return sizes[b]; }, [this](uint64_t b) { return starts[b + 1]; });
  }
};

TEST(ReadAheadPolicy, ASequentialStreamPassesEachBlockOnceASlackBehindIt) {
  const FakeFile f = FakeFile::uniform(100, 900000);
  ReadAheadPolicy p(ReadAheadLimits{});
  const uint64_t chunk = 128 * 1024, slack = 1 << 20;  // the policy's slack for such reads
  std::vector<int> passed(100, 0);
  for (uint64_t off = 20 * 900000 + 12345; off < f.total(); off += chunk) {
    const ReadAheadPlan plan = f.read_passing(p, off, chunk);
    for (uint64_t b = plan.passed_first; b <= plan.passed_last && !plan.passed_empty(); ++b) {
      ++passed[b];
      EXPECT_LE(f.starts[b + 1] + slack, off) << "block " << b << " passed too early";
    }
  }
  // Never twice, none before the block the stream began in (read from its middle to its end), and
  // every block from there that ends a slack and a read before the stream's last read.
  const uint64_t first = 20 * 900000 + 12345;
  const uint64_t last_read = first + (f.total() - 1 - first) / chunk * chunk;
  for (uint64_t b = 0; b < 100; ++b) {
    EXPECT_LE(passed[b], 1) << "block " << b;
    if (b < 20) {
      EXPECT_EQ(passed[b], 0) << "block " << b;
    } else if (f.starts[b + 1] + slack + chunk <= last_read) {
      EXPECT_EQ(passed[b], 1) << "block " << b;
    }
  }
  // Without the blocks' ends, nothing is passed.
  ReadAheadPolicy q(ReadAheadLimits{});
  for (uint64_t off = 0; off < f.total(); off += chunk) EXPECT_TRUE(f.read(q, off, chunk).passed_empty());
}

TEST(ReadAheadPolicy, RandomReadsGetNoReadAhead) {
  // 100 GB in 900 kB blocks; offsets kept far from the last few reads (farther than any slack).
  const FakeFile f = FakeFile::uniform(111111, 900000);
  ReadAheadPolicy p(ReadAheadLimits{});
  Rng rng(3);
  std::vector<uint64_t> recent;
  for (int i = 0; i < 5000; ++i) {
    uint64_t off;
    bool near;
    do {
      off = rng.next() % (f.total() - 200000);
      near = false;
      for (uint64_t r : recent)
        if ((off > r ? off - r : r - off) < (uint64_t{16} << 20)) near = true;
    } while (near);
    const ReadAheadPlan plan = f.read(p, off, 4096 + rng.below(128 * 1024));
    ASSERT_TRUE(plan.empty()) << "read " << i << " at " << off << " got read-ahead " << plan.first << ".." << plan.last;
    recent.push_back(off);
    if (recent.size() > 16) recent.erase(recent.begin());
  }
}

TEST(ReadAheadPolicy, SequentialStreamGrowsItsWindowToTheBlockLimit) {
  const FakeFile f = FakeFile::uniform(400, 1 << 20);
  ReadAheadLimits limits;
  limits.max_blocks = 8;
  limits.initial_blocks = 2;
  limits.max_bytes = uint64_t{1} << 40;
  ReadAheadPolicy p(limits);
  const uint64_t chunk = 256 * 1024;
  std::vector<uint64_t> horizons;  // how far ahead of the block read each plan reaches
  uint64_t next_expected = 1;      // plans are contiguous and never repeat a block
  for (uint64_t off = 0; off < f.total(); off += chunk) {
    const ReadAheadPlan plan = f.read(p, off, chunk);
    if (off == 0) {
      EXPECT_TRUE(plan.empty()) << "the first read of a stream is not yet sequential";
      continue;
    }
    if (plan.empty()) continue;
    const uint64_t block = f.block_at(off + chunk - 1);
    ASSERT_EQ(plan.first, next_expected) << "at " << off;
    ASSERT_GT(plan.first, block);
    next_expected = plan.last + 1;
    horizons.push_back(plan.last - block);
    ASSERT_LE(plan.last - block, limits.max_blocks);
    ASSERT_LT(plan.last, f.sizes.size());
  }
  ASSERT_GE(horizons.size(), 4u);
  EXPECT_EQ(horizons[0], limits.initial_blocks);
  EXPECT_EQ(horizons[1], 2 * limits.initial_blocks);
  EXPECT_EQ(horizons[2], limits.max_blocks);
  EXPECT_EQ(*std::max_element(horizons.begin(), horizons.end()), limits.max_blocks);
  // Every block after the first was planned, once, by the end of the file.
  EXPECT_EQ(next_expected, f.sizes.size());
}

TEST(ReadAheadPolicy, ByteBoundLimitsTheWindow) {
  // Blocks of uneven sizes; at most 3.5 MB ahead (but always at least the next block).
  std::vector<uint64_t> sizes;
  Rng rng(9);
  for (int i = 0; i < 600; ++i) sizes.push_back(100000 + rng.below(2000000));
  const FakeFile f(sizes);
  ReadAheadLimits limits;
  limits.max_blocks = 64;
  limits.max_bytes = 3500000;
  ReadAheadPolicy p(limits);
  size_t plans = 0, bounded_by_bytes = 0;
  for (uint64_t off = 0; off < f.total(); off += 300000) {
    const ReadAheadPlan plan = f.read(p, off, 300000);
    if (plan.empty()) continue;
    ++plans;
    const uint64_t block = f.block_at(std::min(off + 300000, f.total()) - 1);
    uint64_t ahead = 0;
    for (uint64_t b = block + 1; b <= plan.last; ++b) ahead += f.sizes[b];
    if (plan.last > block + 1) {
      EXPECT_LE(ahead, limits.max_bytes) << "plan " << plan.first << ".." << plan.last << " after block " << block;
    }
    // Once the window has grown to max_blocks (after six plans: 2, 4, ..., 64), a plan that
    // stops short of it stopped because the next block would not fit.
    if (plans > 6 && plan.last + 1 < f.sizes.size() && plan.last - block < limits.max_blocks) {
      EXPECT_GT(ahead + f.sizes[plan.last + 1], limits.max_bytes);
      ++bounded_by_bytes;
    }
  }
  EXPECT_GT(plans, 100u);
  EXPECT_GT(bounded_by_bytes, 100u);
}

TEST(ReadAheadPolicy, TwoInterleavedStreamsAreBothDetected) {
  const FakeFile f = FakeFile::uniform(2000, 1 << 20);
  ReadAheadPolicy p(ReadAheadLimits{});
  const uint64_t chunk = 128 * 1024;
  uint64_t a = 0, b = uint64_t{1000} << 20;  // two readers, far apart
  size_t plans_a = 0, plans_b = 0;
  for (int i = 0; i < 200; ++i) {
    const ReadAheadPlan pa = f.read(p, a, chunk);
    if (!pa.empty()) {
      ++plans_a;
      EXPECT_GT(pa.first, f.block_at(a));
      EXPECT_LE(pa.last, f.block_at(a) + 8) << "stream A planned far outside its own region";
    }
    const ReadAheadPlan pb = f.read(p, b, chunk);
    if (!pb.empty()) {
      ++plans_b;
      EXPECT_GT(pb.first, f.block_at(b));
      EXPECT_LE(pb.last, f.block_at(b) + 8) << "stream B planned far outside its own region";
    }
    a += chunk;
    b += chunk;
  }
  // Each stream planned from its second read on, whenever it moved on to new blocks.
  EXPECT_GE(plans_a, 20u);
  EXPECT_GE(plans_b, 20u);
}

TEST(ReadAheadPolicy, SlightlyOutOfOrderReadsStillCount) {
  // FUSE serves a sequential reader's requests on several threads: they arrive a little shuffled.
  const FakeFile f = FakeFile::uniform(200, 1 << 20);
  ReadAheadPolicy p(ReadAheadLimits{});
  const uint64_t chunk = 128 * 1024;
  size_t plans = 0;
  for (uint64_t base = 0; base + 4 * chunk <= f.total(); base += 4 * chunk)
    for (uint64_t k : {1, 0, 3, 2})
      if (!f.read(p, base + k * chunk, chunk).empty()) ++plans;
  EXPECT_GT(plans, 50u);
}

// A plan the reader could not queue past some block (its slow path was busy) is planned again
// from that block by the stream's next read; a stream replaced meanwhile is not touched.
TEST(ReadAheadPolicy, BlocksNotQueuedArePlannedAgainByTheNextRead) {
  const FakeFile f = FakeFile::uniform(100, 1 << 20);
  ReadAheadLimits limits;
  limits.initial_blocks = 2;
  limits.max_blocks = 8;
  ReadAheadPolicy p(limits);
  const uint64_t chunk = 64 * 1024;
  ASSERT_TRUE(f.read(p, 0, chunk).empty());  // a new stream
  const ReadAheadPlan first = f.read(p, chunk, chunk);
  ASSERT_EQ(first.first, 1u);
  ASSERT_EQ(first.last, 2u);
  p.not_queued(first, 1);  // none of it was queued
  const ReadAheadPlan again = f.read(p, 2 * chunk, chunk);
  EXPECT_EQ(again.first, 1u) << "blocks 1 and 2 were never queued, and this stream will read them";
  EXPECT_EQ(again.last, 4u);
  // Nothing given back: the next plan goes on after what was queued.
  const ReadAheadPlan next = f.read(p, 3 * chunk, chunk);
  EXPECT_EQ(next.first, 5u);

  // Eight other streams replace this one; giving back its old plan then changes nothing for the
  // stream now in its place.
  ReadAheadPolicy q(limits);
  ASSERT_TRUE(f.read(q, 0, chunk).empty());
  const ReadAheadPlan old = f.read(q, chunk, chunk);
  ASSERT_FALSE(old.empty());
  for (int s = 1; s <= 8; ++s) {
    const uint64_t at = static_cast<uint64_t>(s) * 10 * (1 << 20);
    ASSERT_TRUE(f.read(q, at, chunk).empty());
    if (s == 8) continue;
    ASSERT_FALSE(f.read(q, at + chunk, chunk).empty());
  }
  const uint64_t last_at = 80 * (1 << 20);
  ASSERT_FALSE(f.read(q, last_at + chunk, chunk).empty());  // plans 81..82 for the newest stream
  q.not_queued(old, 1);
  const ReadAheadPlan newest = f.read(q, last_at + 2 * chunk, chunk);
  EXPECT_EQ(newest.first, 83u) << "a plan of a replaced stream moved another stream's read-ahead";
}

// ---- decoder pool -----------------------------------------------------------------------------

// A job that records its name in `order`.
struct Recorder {
  std::mutex mu;
  std::vector<std::string> order;
  DecoderPool::Job job(std::string name) {
    return [this, name](WorkerContext&) {
      std::lock_guard lk(mu);
      order.push_back(name);
    };
  }
};

TEST(DecoderPoolConcurrent, DemandRunsBeforeQueuedReadAheadAndBackground) {
  Recorder rec;
  {
    DecoderPool pool(1);
    ASSERT_EQ(pool.threads(), 1u);
    std::latch busy(1), release(1);
    pool.submit(Priority::kBackground, [&](WorkerContext&) {
      busy.count_down();
      release.wait();
    });
    busy.wait();  // the only worker is inside the first job: everything below queues
    pool.submit(Priority::kBackground, rec.job("b1"));
    pool.submit(Priority::kReadAhead, rec.job("r1"));
    pool.submit(Priority::kDemand, rec.job("d1"));
    pool.submit(Priority::kBackground, rec.job("b2"));
    pool.submit(Priority::kReadAhead, rec.job("r2"));
    pool.submit(Priority::kDemand, rec.job("d2"));
    pool.submit(Priority::kReadAhead, rec.job("r3"));
    EXPECT_EQ(pool.queued_at_or_above(Priority::kDemand), 2u);
    EXPECT_EQ(pool.queued_at_or_above(Priority::kReadAhead), 5u);
    EXPECT_EQ(pool.queued_at_or_above(Priority::kBackground), 7u);
    release.count_down();
    ASSERT_TRUE(eventually([&] {
      std::lock_guard lk(rec.mu);
      return rec.order.size() == 7;
    }));
    EXPECT_EQ(pool.queued_at_or_above(Priority::kBackground), 0u);
  }
  EXPECT_EQ(rec.order, (std::vector<std::string>{"d1", "d2", "r1", "r2", "r3", "b1", "b2"}));
}

TEST(DecoderPoolConcurrent, DemandArrivingWhileReadAheadIsQueuedJumpsAhead) {
  Recorder rec;
  DecoderPool pool(1);
  std::latch busy(1), release(1);
  // The first read-ahead job blocks the worker; more read-ahead waits behind it; then demand comes.
  pool.submit(Priority::kReadAhead, [&](WorkerContext&) {
    busy.count_down();
    release.wait();
  });
  busy.wait();
  for (int i = 0; i < 5; ++i) {
    std::string name = "r";  // (not "r" + to_string: a GCC 12 -Wrestrict false positive)
    name += std::to_string(i);
    pool.submit(Priority::kReadAhead, rec.job(name));
  }
  pool.submit(Priority::kBackground, rec.job("b"));
  pool.submit(Priority::kDemand, rec.job("d"));
  release.count_down();
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lk(rec.mu);
    return rec.order.size() == 7;
  }));
  EXPECT_EQ(rec.order.front(), "d");
  EXPECT_EQ(rec.order.back(), "b");
}

// Read-ahead never takes the last worker, so a demand job (a reader waiting) never waits
// for a read-ahead decode to end. Two workers, two read-ahead jobs that hold their worker: one
// runs, the other stays queued, and a demand job submitted then runs on the free worker.
// Jobs wait on it until it opens, once; OpenAtExit opens it also when an assertion returns early
// (the pool joins its workers).
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  void release() {
    {
      std::lock_guard lk(mu);
      open = true;
    }
    cv.notify_all();
  }
  void wait() {
    std::unique_lock lk(mu);
    cv.wait(lk, [this] { return open; });
  }
};
struct OpenAtExit {
  Gate& g;
  ~OpenAtExit() { g.release(); }
};

TEST(DecoderPoolConcurrent, ReadAheadNeverTakesTheLastWorker) {
  Gate gate;
  std::atomic<int> readahead_started{0};
  std::atomic<bool> demand_ran{false};
  DecoderPool pool(2, 2);
  OpenAtExit open_at_exit{gate};
  EXPECT_EQ(pool.readahead_workers(), 1u);
  for (int i = 0; i < 2; ++i)
    pool.submit(Priority::kReadAhead, [&](WorkerContext&) {
      readahead_started.fetch_add(1);
      gate.wait();
    });
  ASSERT_TRUE(eventually([&] { return readahead_started.load() >= 1; }));
  pool.submit(Priority::kDemand, [&](WorkerContext&) { demand_ran = true; });
  EXPECT_TRUE(eventually([&] { return demand_ran.load(); })) << "a demand job waited behind read-ahead";
  EXPECT_EQ(readahead_started.load(), 1) << "read-ahead took the last worker";
  gate.release();
  EXPECT_TRUE(eventually([&] { return readahead_started.load() == 2; })) << "held-back read-ahead never ran";
}

// Voluntary context switches of this process's pool workers (threads named mibz2-dec-N): each
// time a worker waits, whether for a job or after a wake-up that found none it may run.
uint64_t pool_worker_waits() {
  uint64_t total = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    if (!std::getline(comm, name) || name.rfind("mibz2-dec-", 0) != 0) continue;
    std::ifstream status(task.path() / "status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) total += std::stoull(line.substr(24));
  }
  return total;
}

// With two places, read-ahead runs on one (the other is kept for demand): the other worker,
// woken for queued read-ahead, finds it may not run it and waits again, a context switch pair
// for nothing. It was woken by the second of a burst of submissions, and then after every
// read-ahead job that finished with more queued.
TEST(DecoderPoolConcurrent, NoWorkerIsWokenForReadAheadItMayNotRun) {
  // It counts the workers' waits, and ThreadSanitizer's runtime makes them wait on its own: 6
  // against the bound of 3 in one CI run of the TSan stage (three TSan runs before passed it).
  // The Release and ASan+UBSan builds run it.
  if (base::kThreadSanitizer) GTEST_SKIP() << "ThreadSanitizer's runtime adds waits of its own to the count";
  constexpr int kJobs = 80;
  std::atomic<int> done{0};
  {
    // The first job waits (once) until every job is queued, so that no submission contends with
    // the running worker for the pool's lock (a wait too).
    Gate queued;
    DecoderPool pool(2, 2);
    OpenAtExit open_at_exit{queued};
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // both workers waiting
    const uint64_t before = pool_worker_waits();
    pool.submit(Priority::kReadAhead, [&](WorkerContext&) {
      queued.wait();
      done.fetch_add(1);
    });
    for (int i = 1; i < kJobs; ++i)
      pool.submit(Priority::kReadAhead, [&](WorkerContext&) {
        // Busy, not asleep: the worker running the jobs never waits while it has them.
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(300);
        while (std::chrono::steady_clock::now() < until) {
        }
        done.fetch_add(1);
      });
    queued.release();
    ASSERT_TRUE(eventually([&] { return done.load() == kJobs; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // every worker waiting again
    const uint64_t waits = pool_worker_waits() - before;
    // The worker that ran them waits at the end (and at the gate, if it comes first): one or
    // two, and one of slack.
    EXPECT_LE(waits, 3u) << "the pool's workers waited " << waits << " times for " << kJobs << " read-ahead jobs";
  }
  EXPECT_EQ(done.load(), kJobs);
}

TEST(DecoderPoolConcurrent, EveryWorkerRunsJobsAtOnceWithItsOwnContext) {
  const unsigned n = 4;
  DecoderPool pool(n, n);  // as on a machine of n CPUs or more
  ASSERT_EQ(pool.threads(), n);
  // n jobs that each wait until all n are running: completes only if n workers run in parallel.
  std::mutex mu;
  std::condition_variable cv;
  unsigned running = 0;
  std::set<unsigned> ids;
  std::set<const WorkerContext*> contexts;
  bool all_met = true;
  for (unsigned i = 0; i < n; ++i) {
    pool.submit(Priority::kDemand, [&](WorkerContext& ctx) {
      std::unique_lock lk(mu);
      ++running;
      ids.insert(ctx.worker_id);
      contexts.insert(&ctx);
      cv.notify_all();
      if (!cv.wait_for(lk, std::chrono::seconds(20), [&] { return running >= n; })) all_met = false;
    });
  }
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lk(mu);
    return running == n;
  }));
  std::lock_guard lk(mu);
  EXPECT_TRUE(all_met);
  EXPECT_EQ(ids.size(), n);
  EXPECT_EQ(contexts.size(), n);
}

// More workers than CPUs (mibz2 cat -j 32 on 2 cores): no more jobs run at once than there are
// CPUs, every job runs, and read-ahead keeps one of those places for demand.
TEST(DecoderPoolConcurrent, AnOversubscribedPoolRunsNoMoreJobsAtOnceThanItHasCpus) {
  std::atomic<unsigned> running{0}, most{0};
  std::atomic<int> done{0};
  {
    DecoderPool pool(8, 2);
    EXPECT_EQ(pool.threads(), 8u);
    EXPECT_EQ(pool.running_limit(), 2u);
    EXPECT_EQ(pool.readahead_workers(), 1u);
    for (int i = 0; i < 120; ++i)
      pool.submit(static_cast<Priority>(i % 3), [&](WorkerContext&) {
        const unsigned now = running.fetch_add(1) + 1;
        unsigned seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        // Long enough that eight workers free to run would overlap (they did: 8 at once).
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        running.fetch_sub(1);
        done.fetch_add(1);
      });
  }
  EXPECT_EQ(done.load(), 120);
  EXPECT_LE(most.load(), 2u);
  EXPECT_EQ(most.load(), 2u) << "two places, never both used";
}

// An oversubscribed pool wakes the worker that went idle last, so its jobs stay on the workers
// that ran the last ones (warm, and where the scheduler put them) instead of going round all of
// them: woken in turn, -j 32 on 2 CPUs spread its jobs over 32 threads and left the CPUs idle a
// tenth of the time (scripts/bench-threads).
TEST(DecoderPoolConcurrent, AnOversubscribedPoolKeepsItsJobsOnTheWorkersLastIdle) {
  std::mutex mu;
  std::set<std::thread::id> workers;
  {
    DecoderPool pool(8, 2);
    for (int i = 0; i < 64; ++i) {
      std::latch done(1);
      pool.submit(Priority::kDemand, [&](WorkerContext&) {
        {
          std::lock_guard lk(mu);
          workers.insert(std::this_thread::get_id());
        }
        done.count_down();
      });
      done.wait();
      // Time for the worker to go back to waiting, so that each job finds the pool idle (one
      // that did not, now and then on a busy machine, draws in one more worker).
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  EXPECT_LE(workers.size(), 3u) << "one job at a time, taken by " << workers.size() << " of 8 workers";
}

TEST(DecoderPoolConcurrent, DestructionFinishesQueuedJobs) {
  std::atomic<int> done{0};
  {
    DecoderPool pool(4, 2);  // workers waiting for a place must end too
    for (int i = 0; i < 300; ++i)
      pool.submit(static_cast<Priority>(i % 3), [&](WorkerContext&) { done.fetch_add(1); });
  }
  EXPECT_EQ(done.load(), 300);
}

TEST(DecoderPoolConcurrent, ManySubmittersAtOnce) {
  std::atomic<int> done{0};
  {
    DecoderPool pool(3);
    std::vector<std::thread> submitters;
    for (int t = 0; t < 16; ++t)
      submitters.emplace_back([&, t] {
        for (int i = 0; i < 200; ++i)
          pool.submit(static_cast<Priority>((t + i) % 3), [&](WorkerContext&) { done.fetch_add(1); });
      });
    for (auto& s : submitters) s.join();
  }
  EXPECT_EQ(done.load(), 16 * 200);
}

}  // namespace
}  // namespace mibz2::test
