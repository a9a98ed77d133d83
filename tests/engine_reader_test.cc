// Reader reads through the engine compared with the original bytes: 64 threads on several files at
// once, read-ahead on and off, a small cache that must never exceed its bound nor free a block in
// use, a cold block wanted by 16 readers at once decoded once, damaged blocks and changed sources
// refused with EIO while the rest of the file reads fine.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <latch>
#include <thread>

#include "engine_test_support.h"

namespace mibz2::test {
namespace {

using engine::BlockRef;
using engine::Engine;
using engine::Reader;

// A range to read: mostly what FUSE asks (4 kB .. 128 kB), sometimes a block or several.
struct Range {
  uint64_t offset;
  size_t length;
};
Range random_range(Rng& rng, const Source& s) {
  const uint64_t total = s.plain.size();
  const uint64_t block = std::max<uint64_t>(1, total / s.blocks());
  size_t len;
  switch (rng.below(10)) {
    case 0: case 1: case 2: case 3: len = 1 + rng.below(4096); break;
    case 4: case 5: case 6: len = 1 + rng.below(128 * 1024); break;
    case 7: case 8: len = 1 + rng.next() % block; break;
    default: len = 1 + rng.next() % (3 * block); break;
  }
  // Now and then a range that ends at or runs past the end of the file.
  const uint64_t off = rng.below(50) == 0 ? total - std::min<uint64_t>(total, len / 2) : rng.next() % total;
  return {off, len};
}

struct RunResult {
  uint64_t reads = 0;
  uint64_t bytes = 0;
  size_t failures = 0;
};

// `threads` threads, each doing `reads` random reads over all the corpus files (two Readers per
// file sharing its file id, as two opens of one file would). Optionally checks the cache bound all
// along from a sampler thread.
RunResult concurrent_random_reads(Engine& e, size_t threads, size_t reads, uint64_t seed) {
  const auto& files = engine_corpus().files;
  std::vector<std::shared_ptr<Reader>> readers;
  std::vector<const Source*> sources;
  for (size_t i = 0; i < files.size(); ++i)
    for (int copy = 0; copy < 2; ++copy) {
      readers.push_back(open_reader(e, 100 + i, files[i]));
      sources.push_back(&files[i]);
    }
  std::atomic<uint64_t> total_reads{0}, total_bytes{0};
  std::atomic<size_t> failures{0};
  std::latch start(static_cast<std::ptrdiff_t>(threads));
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      Rng rng(seed * 1000 + t);
      start.arrive_and_wait();
      for (size_t k = 0; k < reads && failures.load() < 5; ++k) {
        const size_t r = rng.below(static_cast<uint32_t>(readers.size()));
        const Range range = random_range(rng, *sources[r]);
        if (!read_and_check(*readers[r], *sources[r], range.offset, range.length)) ++failures;
        total_reads++;
        total_bytes += std::min<uint64_t>(range.length, sources[r]->plain.size() - std::min<uint64_t>(range.offset, sources[r]->plain.size()));
      }
    });
  }
  for (auto& t : pool) t.join();
  return {total_reads.load(), total_bytes.load(), failures.load()};
}

// Samples the cache's resident bytes until stopped; records the most seen.
class CacheSampler {
 public:
  explicit CacheSampler(Engine& e) : e_(e), thread_([this] { run(); }) {}
  ~CacheSampler() { stop(); }
  void stop() {
    if (thread_.joinable()) {
      stop_ = true;
      thread_.join();
    }
  }
  uint64_t max_seen() const { return max_seen_; }
  uint64_t samples() const { return samples_; }

 private:
  void run() {
    while (!stop_) {
      const uint64_t r = e_.cache().resident_bytes();
      const uint64_t s = e_.stats().cache_bytes.load(std::memory_order_relaxed);
      max_seen_ = std::max({max_seen_.load(), r, s});
      ++samples_;
      std::this_thread::yield();
    }
  }
  Engine& e_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> max_seen_{0};
  std::atomic<uint64_t> samples_{0};
  std::thread thread_;
};

// What one cached block of a level-1 text file costs the cache (its capacity plus the struct).
uint64_t cached_block_cost(uint64_t block_size) { return block_size + 4096 + sizeof(engine::DecodedBlock); }

TEST(EngineConcurrent, SixtyFourThreadsReadRandomRangesWithEvictions) {
  engine_corpus();
  const uint64_t cache = 12 * cached_block_cost(100000);
  Engine e(options(4, cache, true));
  CacheSampler sampler(e);
  const size_t reads = scaled(80, 10);
  const RunResult r = concurrent_random_reads(e, 64, reads, 1);
  sampler.stop();
  EXPECT_EQ(r.failures, 0u);
  EXPECT_EQ(r.reads, 64 * reads);
  EXPECT_EQ(stat(e.stats().reads), r.reads);
  EXPECT_EQ(stat(e.stats().bytes_read), r.bytes);
  EXPECT_GT(stat(e.stats().evictions), 0u);
  EXPECT_EQ(stat(e.stats().decode_errors), 0u);
  EXPECT_LE(sampler.max_seen(), e.cache().capacity());
  EXPECT_LE(stat(e.stats().cache_bytes_peak), e.cache().capacity());
}

TEST(EngineConcurrent, SixtyFourThreadsReadRandomRangesFromALargeCache) {
  engine_corpus();
  Engine e(options(4, uint64_t{256} << 20, false));
  const size_t reads = scaled(60, 10);
  const RunResult r = concurrent_random_reads(e, 64, reads, 2);
  EXPECT_EQ(r.failures, 0u);
  // Every block decoded at most once per file id: nothing was evicted and the in-flight table
  // joins concurrent misses (two Readers of one file may each decode a block once).
  uint64_t blocks = 0;
  for (const Source& s : engine_corpus().files) blocks += s.blocks();
  EXPECT_EQ(stat(e.stats().evictions), 0u);
  EXPECT_LE(stat(e.stats().decodes), 2 * blocks);
  EXPECT_GT(stat(e.stats().cache_hits), 0u);
}

TEST(EngineConcurrent, ReadAheadOnAndOffGiveTheSameBytes) {
  const auto& files = engine_corpus().files;
  // Per file, every read in order (each file's reads are one thread's seeded sequence).
  std::vector<std::vector<Bytes>> outputs[2];
  for (int ra = 0; ra < 2; ++ra) {
    Engine e(options(3, 8 * cached_block_cost(100000), ra == 1));
    std::vector<std::vector<Bytes>>& out = outputs[ra];
    out.resize(files.size());
    std::vector<std::thread> threads;
    for (size_t f = 0; f < files.size(); ++f) {
      threads.emplace_back([&, f] {
        const Source& s = files[f];
        auto reader = open_reader(e, f + 1, s);
        Rng rng(77 + f);
        std::vector<Bytes> mine;
        // Sequential stretches (read-ahead kicks in) and random jumps between them.
        for (int stretch = 0; stretch < static_cast<int>(scaled(6, 2)); ++stretch) {
          uint64_t off = rng.next() % s.plain.size();
          const size_t chunk = 4096u << rng.below(6);
          for (int k = 0; k < 40 && off < s.plain.size(); ++k, off += chunk) {
            Bytes buf(chunk);
            const ssize_t n = reader->read(off, chunk, buf.data());
            ASSERT_GE(n, 0);
            buf.resize(static_cast<size_t>(n));
            EXPECT_TRUE(std::equal(buf.begin(), buf.end(), s.plain.begin() + static_cast<std::ptrdiff_t>(off)));
            mine.push_back(std::move(buf));
          }
        }
        out[f] = std::move(mine);
      });
    }
    for (auto& t : threads) t.join();
    if (ra == 1) EXPECT_GT(stat(e.stats().readahead_issued), 0u);
    else EXPECT_EQ(stat(e.stats().readahead_issued), 0u);
  }
  for (size_t f = 0; f < files.size(); ++f) {
    ASSERT_EQ(outputs[0][f].size(), outputs[1][f].size());
    for (size_t i = 0; i < outputs[0][f].size(); ++i)
      EXPECT_TRUE(same_bytes(outputs[1][f][i], outputs[0][f][i])) << files[f].name << " read " << i;
  }
}

TEST(EngineConcurrent, SequentialReadingIsServedByReadAhead) {
  const Source& s = text_source();
  Engine e(options(4, kTestCacheBytes, true));
  auto reader = open_reader(e, 1, s);
  const size_t chunk = 128 * 1024;
  for (uint64_t off = 0; off < s.plain.size(); off += chunk) ASSERT_TRUE(read_and_check(*reader, s, off, chunk));
  const engine::EngineStats& st = e.stats();
  EXPECT_GT(stat(st.readahead_issued), 0u);
  EXPECT_GT(stat(st.readahead_used), 0u);
  EXPECT_LE(stat(st.readahead_used), stat(st.readahead_issued));
  // Each block decoded once: read-ahead and demand never both decode one.
  EXPECT_EQ(stat(st.decodes), s.blocks()) << st.summary();
  // Most blocks were queued ahead rather than waited for cold.
  EXPECT_GE(stat(st.readahead_issued), s.blocks() / 2) << st.summary();
}

// Drop-behind (the mount's option): a sequential reader's blocks leave the cache once it is more
// than the policy's slack (1 MiB for these reads) past their end; without it they all stay.
TEST(EngineConcurrent, DropBehindEvictsTheBlocksASequentialReaderPassed) {
  // Not the corpus's text: a sanitized build makes that a quarter the size, shorter than the slack.
  TempDir dir;
  const Source s = make_source(dir, "long.bz2", text_bytes(3000000, 41), 1);
  const size_t chunk = 64 * 1024;
  const uint64_t slack = 1 << 20;
  ASSERT_GT(s.plain.size(), 2 * slack);
  for (const bool drop : {false, true}) {
    engine::EngineOptions o = options(2, kTestCacheBytes, true);
    o.drop_behind = drop;
    Engine e(o);
    auto reader = open_reader(e, 1, s);
    uint64_t last_offset = 0;
    for (uint64_t off = 0; off < s.plain.size(); off += chunk) {
      ASSERT_TRUE(read_and_check(*reader, s, off, chunk));
      last_offset = off;
    }
    size_t passed = 0, passed_cached = 0, cached = 0;
    for (size_t b = 0; b < s.blocks(); ++b) {
      const bool in = e.cache().contains({1, b});
      cached += in;
      if (s.block_start(b) + s.block_size(b) + slack <= last_offset) {
        ++passed;
        passed_cached += in;
      }
    }
    ASSERT_GT(passed, 2u);
    EXPECT_EQ(passed_cached, drop ? 0u : passed) << "drop_behind " << drop << ", " << e.stats().summary();
    if (drop) EXPECT_LE(cached, s.blocks() - passed);
    else EXPECT_EQ(cached, s.blocks());
    // Each block decoded once: nothing was dropped that the stream still wanted.
    EXPECT_EQ(stat(e.stats().decodes), s.blocks()) << e.stats().summary();
  }
}

// Random readers keep what they read, drop-behind or not.
TEST(EngineConcurrent, DropBehindKeepsTheBlocksOfARandomReader) {
  const Source& s = text_source();
  engine::EngineOptions o = options(2, kTestCacheBytes, true);
  o.drop_behind = true;
  Engine e(o);
  auto reader = open_reader(e, 1, s);
  // Far apart (more than the slack) and backwards: never one stream.
  const uint64_t stride = 3 << 20;
  std::vector<size_t> read;
  for (uint64_t off = s.plain.size() - 1;; off -= std::min(off, stride)) {
    ASSERT_TRUE(read_and_check(*reader, s, off, 1));
    read.push_back(s.index->block_at(off));
    if (off == 0) break;
  }
  ASSERT_GE(read.size(), 2u);
  for (const size_t b : read) EXPECT_TRUE(e.cache().contains({1, b})) << "block " << b;
}

TEST(EngineConcurrent, CacheOfThreeBlocksNeverExceedsItsBound) {
  const auto& files = engine_corpus().files;
  uint64_t biggest = 0;
  for (size_t b = 0; b < files[0].blocks(); ++b) biggest = std::max(biggest, files[0].block_size(b));
  const uint64_t capacity = 3 * cached_block_cost(biggest);
  Engine e(options(4, capacity, true));
  ASSERT_EQ(e.cache().capacity(), capacity);
  std::vector<std::shared_ptr<Reader>> readers;
  for (size_t i = 0; i < files.size(); ++i) readers.push_back(open_reader(e, i + 1, files[i]));
  CacheSampler sampler(e);
  std::atomic<size_t> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      Rng rng(500 + t);
      for (size_t k = 0; k < scaled(150, 30) && failures.load() < 5; ++k) {
        const size_t f = rng.below(static_cast<uint32_t>(files.size()));
        const Range r = random_range(rng, files[f]);
        if (!read_and_check(*readers[f], files[f], r.offset, r.length)) ++failures;
        // Hold a block from the cache across later reads (which evict it): its bytes stay intact.
        if (k % 7 == 0) {
          const size_t b = rng.below(static_cast<uint32_t>(files[f].blocks()));
          if (BlockRef ref = e.cache().lookup({f + 1, b})) {
            const uint64_t start = files[f].block_start(b);
            for (int more = 0; more < 3; ++more) {
              const Range r2 = random_range(rng, files[f]);
              read_and_check(*readers[f], files[f], r2.offset, r2.length);
            }
            if (ref->bytes.size() != files[f].block_size(b) ||
                std::memcmp(ref->bytes.data(), files[f].plain.data() + start, ref->bytes.size()) != 0) {
              ADD_FAILURE() << "a held block changed under its holder";
              ++failures;
            }
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  sampler.stop();
  EXPECT_EQ(failures.load(), 0u);
  EXPECT_GT(sampler.samples(), 0u);
  EXPECT_LE(sampler.max_seen(), capacity);
  EXPECT_LE(e.cache().resident_bytes(), capacity);
  EXPECT_LE(stat(e.stats().cache_bytes_peak), capacity);
  EXPECT_GT(stat(e.stats().evictions), 0u);
}

TEST(EngineConcurrent, ABlockHeldByAReaderSurvivesItsEviction) {
  const Source& s = text_source();
  Engine e(options(2, 3 * cached_block_cost(100000), false));
  auto reader = open_reader(e, 9, s);
  ASSERT_TRUE(read_and_check(*reader, s, s.block_start(0), 100));
  BlockRef held = e.cache().lookup({9, 0});
  ASSERT_TRUE(held);
  const uint8_t* data = held->bytes.data();
  // Up to ten other blocks through a cache of three: block 0 is evicted.
  const size_t others = std::min<size_t>(10, s.blocks() - 1);
  ASSERT_GE(others, 4u);
  for (size_t b = 1; b <= others; ++b) ASSERT_TRUE(read_and_check(*reader, s, s.block_start(b), 1000));
  EXPECT_FALSE(e.cache().contains({9, 0}));
  EXPECT_GE(stat(e.stats().evictions), others + 1 - 3);
  // Still the same memory, still the block's bytes (ASan would report a use after free).
  EXPECT_EQ(held->bytes.data(), data);
  ASSERT_EQ(held->bytes.size(), s.block_size(0));
  EXPECT_EQ(std::memcmp(held->bytes.data(), s.plain.data(), held->bytes.size()), 0);
  // Reading it again decodes it again.
  const uint64_t decodes = stat(e.stats().decodes);
  ASSERT_TRUE(read_and_check(*reader, s, 5, 5000));
  EXPECT_EQ(stat(e.stats().decodes), decodes + 1);
}

// What the blocks a test holds cost the cache: their buffers and structs.
uint64_t held_cost(const std::vector<BlockRef>& held) {
  uint64_t n = 0;
  for (const BlockRef& b : held) n += b->bytes.capacity() + sizeof(engine::DecodedBlock);
  return n;
}

// Readers that hold blocks after their eviction (a FUSE reply from a block, a thread preempted
// while it copies) hold memory the cache cannot free. When they hold all of its capacity, a block
// decoded now is handed to its reader and not kept: before, the cache took it anyway, and in a
// memory cgroup at the documented bound 16 readers of 45 MB blocks held enough to get mibz2fs
// OOM-killed.
TEST(EngineConcurrent, BlocksHeldPastTheirEvictionLeaveNoRoomToGrowPastTheCapacity) {
  const Source& s = text_source();
  ASSERT_GE(s.blocks(), 6u);
  const uint64_t capacity = cached_block_cost(s.block_size(0)) + cached_block_cost(s.block_size(1)) +
                            cached_block_cost(s.block_size(2));
  Engine e(options(1, capacity, false));
  auto reader = open_reader(e, 9, s);
  std::vector<BlockRef> held;
  for (size_t b = 0; b < 3; ++b) {
    ASSERT_TRUE(read_and_check(*reader, s, s.block_start(b), 100));
    held.push_back(e.cache().lookup({9, b}));
    ASSERT_TRUE(held.back()) << "block " << b << " was not cached";
  }
  ASSERT_EQ(held_cost(held), capacity);
  // Block 3 evicts the three held blocks, which stay in memory: there is no room for it. (Its
  // decoder offers it again once its reader is served: the count comes a moment after the read.)
  ASSERT_TRUE(read_and_check(*reader, s, s.block_start(3) + 10, 1000));
  EXPECT_TRUE(eventually([&] { return stat(e.stats().cache_declined) == 1; })) << e.stats().summary();
  EXPECT_LE(held_cost(held) + e.cache().resident_bytes(), capacity) << e.stats().summary();
  EXPECT_FALSE(e.cache().contains({9, 3}));
  EXPECT_LE(e.cache().ledger()->bytes(), capacity);
  // A read over two blocks, both declined: the part of the first is copied while the read waits
  // for the other (never the whole block held uncounted), and the bytes are right.
  ASSERT_TRUE(read_and_check(*reader, s, s.block_start(5) - 5000, 10000));
  EXPECT_TRUE(eventually([&] { return stat(e.stats().cache_declined) == 3; })) << e.stats().summary();
  EXPECT_LE(e.cache().ledger()->bytes(), capacity);
  // Once the readers let go, the room is the cache's again.
  held.clear();
  EXPECT_EQ(e.cache().ledger()->bytes(), 0u);
  ASSERT_TRUE(read_and_check(*reader, s, s.block_start(3), 1000));
  EXPECT_TRUE(e.cache().contains({9, 3}));
  EXPECT_EQ(e.cache().ledger()->bytes(), e.cache().resident_bytes());
}

// A read over a cached block and one still to decode waits for the second with a copy of its part
// of the first, not the first block itself: held while the read waits behind a queue of decodes
// (hundreds of ms with blocks of 45 MB), a whole block kept its room in the cache from every
// block decoded meanwhile, and those were not kept.
TEST(EngineConcurrent, AReadWaitingForOneBlockHoldsNoOtherWholeBlock) {
  const Source& s = text_source();
  Engine e(options(1, kTestCacheBytes, false));
  auto reader = open_reader(e, 1, s);
  ASSERT_TRUE(read_and_check(*reader, s, s.block_start(0), 100));
  std::latch worker_busy(1), release(1);
  e.pool().submit(engine::Priority::kDemand, [&](engine::WorkerContext&) {
    worker_busy.count_down();
    release.wait();
  });
  worker_busy.wait();
  const uint64_t waits = stat(e.stats().waits);
  std::thread read([&] { EXPECT_TRUE(read_and_check(*reader, s, s.block_start(1) - 3000, 6000)); });
  const bool waiting = eventually([&] { return stat(e.stats().waits) > waits; });
  EXPECT_TRUE(waiting) << e.stats().summary();
  {
    BlockRef first = e.cache().lookup({1, 0});
    ASSERT_TRUE(first);
    EXPECT_EQ(first.use_count(), 2) << "the waiting read holds block 0 (the cache and this test hold one reference each)";
  }
  release.count_down();
  read.join();
  EXPECT_EQ(stat(e.stats().cache_declined), 0u);
}

// 16 readers want one cold block at the same moment: it is decoded once.
TEST(EngineConcurrent, SixteenReadersOfAColdBlockDecodeItOnce) {
  const Source& s = text_source();
  for (size_t block : {size_t{0}, s.blocks() / 2, s.blocks() - 1}) {
    SCOPED_TRACE("block " + std::to_string(block));
    // One decoder thread, kept busy until every reader has asked: all 16 requests meet in the
    // in-flight table before any decode can start.
    Engine e(options(1, kTestCacheBytes, false));
    auto reader = open_reader(e, 1, s);
    std::latch worker_busy(1), release(1);
    e.pool().submit(engine::Priority::kDemand, [&](engine::WorkerContext&) {
      worker_busy.count_down();
      release.wait();
    });
    worker_busy.wait();
    const uint64_t start = s.block_start(block), size = s.block_size(block);
    std::vector<std::thread> readers;
    std::atomic<int> ok{0};
    for (uint64_t i = 0; i < 16; ++i)
      readers.emplace_back([&, i] {
        if (read_and_check(*reader, s, start + i * (size / 16), static_cast<size_t>(size / 16))) ++ok;
      });
    const bool all_asked = eventually([&] {
      return stat(e.stats().cache_misses) >= 16 && stat(e.stats().inflight_joins) >= 15;
    });
    EXPECT_TRUE(all_asked) << e.stats().summary();
    EXPECT_EQ(stat(e.stats().decodes), 0u);
    release.count_down();
    for (auto& t : readers) t.join();
    EXPECT_EQ(ok.load(), 16);
    EXPECT_EQ(stat(e.stats().decodes), 1u) << e.stats().summary();
    EXPECT_EQ(stat(e.stats().inflight_joins), 15u);
    EXPECT_EQ(stat(e.stats().waits), 16u);
    // One read of one block is one lookup: 16 misses, no hits.
    EXPECT_EQ(stat(e.stats().cache_misses), 16u) << e.stats().summary();
    EXPECT_EQ(stat(e.stats().cache_hits), 0u);
  }
}

TEST(EngineConcurrent, SixteenReadersRacingForColdBlocksDecodeEachOnce) {
  const Source& s = text_source();
  Engine e(options(4, kTestCacheBytes, false));
  auto reader = open_reader(e, 1, s);
  const size_t rounds = std::min<size_t>(s.blocks(), scaled(12, 4));
  for (size_t block = 0; block < rounds; ++block) {
    const uint64_t before = stat(e.stats().decodes);
    std::latch go(16);
    std::vector<std::thread> readers;
    for (uint64_t i = 0; i < 16; ++i)
      readers.emplace_back([&, i] {
        go.arrive_and_wait();
        read_and_check(*reader, s, s.block_start(block) + i * 1000, 3000);
      });
    for (auto& t : readers) t.join();
    EXPECT_EQ(stat(e.stats().decodes), before + 1) << "block " << block;
  }
}

// A read waiting for a decode holds no thread: read_async returns at once, a cached
// read on the same thread meanwhile is answered before it returns, and the waiting read is
// answered, with its bytes, by the decoder thread when the decode ends. One decoder, kept busy.
TEST(EngineConcurrent, AReadWaitingForADecodeHoldsNoThread) {
  const Source& s = text_source();
  ASSERT_GE(s.blocks(), 3u);
  Engine e(options(1, kTestCacheBytes, false));
  auto reader = open_reader(e, 1, s);
  ASSERT_TRUE(read_and_check(*reader, s, s.block_start(0), 1000));  // block 0 is now cached
  std::latch worker_busy(1), release(1);
  e.pool().submit(engine::Priority::kDemand, [&](engine::WorkerContext&) {
    worker_busy.count_down();
    release.wait();
  });
  worker_busy.wait();

  struct Answer {
    std::atomic<bool> done{false};
    ssize_t n = 0;
    Bytes bytes;
    std::thread::id thread;
  };
  auto collect = [](Answer& a) {
    return [&a](ssize_t n, std::vector<engine::Slice>& slices, const engine::ReadFailure*) {
      a.n = n;
      for (const engine::Slice& sl : slices) a.bytes.insert(a.bytes.end(), sl.data, sl.data + sl.size);
      a.thread = std::this_thread::get_id();
      a.done = true;
    };
  };
  // Across the end of block 1 into block 2: two cold blocks, one answer.
  const uint64_t cold_at = s.block_start(2) - 500;
  Answer cold, hit;
  reader->read_async(cold_at, 1000, collect(cold));
  EXPECT_FALSE(cold.done) << "answered although its blocks cannot have been decoded yet";
  reader->read_async(s.block_start(0) + 10, 100, collect(hit));
  ASSERT_TRUE(hit.done) << "a cached read waited behind a cold one";
  EXPECT_EQ(hit.n, 100);
  EXPECT_EQ(hit.thread, std::this_thread::get_id());
  EXPECT_TRUE(hit.bytes == Bytes(s.plain.begin() + 10 + static_cast<long>(s.block_start(0)),
                                 s.plain.begin() + 110 + static_cast<long>(s.block_start(0))));

  release.count_down();
  ASSERT_TRUE(eventually([&] { return cold.done.load(); })) << e.stats().summary();
  EXPECT_EQ(cold.n, 1000);
  EXPECT_NE(cold.thread, std::this_thread::get_id());
  EXPECT_TRUE(cold.bytes == Bytes(s.plain.begin() + static_cast<long>(cold_at),
                                  s.plain.begin() + static_cast<long>(cold_at) + 1000));
  EXPECT_EQ(stat(e.stats().decodes), 3u) << e.stats().summary();
}

// A reader that wants a block only queued as read-ahead gets it queued again at demand priority
// (ahead of the other read-ahead), and it is still decoded once.
TEST(EngineConcurrent, DemandForAQueuedReadAheadBlockIsUpgraded) {
  const Source& s = text_source();
  Engine e(options(1, kTestCacheBytes, true));
  auto reader = open_reader(e, 1, s);
  ASSERT_TRUE(read_and_check(*reader, s, 0, 1000));  // block 0 decoded; a stream starts
  std::latch worker_busy(1), release(1);
  e.pool().submit(engine::Priority::kDemand, [&](engine::WorkerContext&) {
    worker_busy.count_down();
    release.wait();
  });
  worker_busy.wait();
  // Continues the stream (a hit): blocks 1 and 2 are queued ahead.
  ASSERT_TRUE(read_and_check(*reader, s, 1000, 1000));
  EXPECT_EQ(stat(e.stats().readahead_issued), 2u);
  EXPECT_EQ(e.pool().queued_at_or_above(engine::Priority::kDemand), 0u);
  EXPECT_EQ(e.pool().queued_at_or_above(engine::Priority::kReadAhead), 2u);
  std::thread demand([&] { read_and_check(*reader, s, s.block_start(1), 1000); });
  EXPECT_TRUE(eventually([&] { return stat(e.stats().inflight_joins) >= 1; }));
  EXPECT_TRUE(eventually([&] { return e.pool().queued_at_or_above(engine::Priority::kDemand) == 1; }))
      << "the demand for block 1 was not queued at demand priority";
  release.count_down();
  demand.join();
  // Every block asked for (0, and those queued ahead) decoded exactly once.
  EXPECT_TRUE(eventually([&] {
    return e.pool().queued_at_or_above(engine::Priority::kBackground) == 0 &&
           stat(e.stats().decodes) == 1 + stat(e.stats().readahead_issued);
  })) << e.stats().summary();
  EXPECT_GE(stat(e.stats().readahead_used), 1u);
}

// ---- damage -----------------------------------------------------------------------------------

struct DamagedSource {
  TempDir dir;
  Source original;  // the bytes as they were
  Source damaged;   // the damaged file and its index
  size_t block = 0;
};

// text, ten level-1 blocks; block `k` damaged by a flip found with `finder`.
std::unique_ptr<DamagedSource> make_damaged(size_t k,
                                            std::optional<uint64_t> (*finder)(const Bytes&, const BlockSpan&)) {
  auto d = std::make_unique<DamagedSource>();
  d->block = k;
  d->original = make_source(d->dir, "good.bz2", text_bytes(scaled(1000000, 600000), 41), 1);
  FileLayout layout;
  EXPECT_TRUE(walk_file(d->original.file, &layout));
  const std::optional<uint64_t> bit = finder(d->original.file, layout.blocks.at(k));
  EXPECT_TRUE(bit.has_value());
  Bytes bad = d->original.file;
  if (bit) flip_bit(bad, *bit);
  d->damaged = write_source(d->dir, "damaged.bz2", d->original.plain, bad);
  return d;
}

TEST(EngineConcurrent, CrcDamagedBlockGivesEioWhileOtherBlocksReadFine) {
  auto d = make_damaged(4, find_crc_only_flip);
  const Source& s = d->damaged;
  ASSERT_TRUE(s.index);
  ASSERT_TRUE(s.index->blocks[4].crc_mismatch());
  Engine e(options(4, 6 * cached_block_cost(100000), true));
  auto reader = open_reader(e, 1, s);
  const uint64_t k_start = s.block_start(4), k_end = k_start + s.block_size(4);
  std::atomic<size_t> eio{0}, good{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 12; ++t) {
    threads.emplace_back([&, t] {
      Rng rng(900 + t);
      for (size_t k = 0; k < scaled(60, 15); ++k) {
        if (t < 3) {
          // Inside the damaged block: EIO.
          const uint64_t off = k_start + rng.next() % s.block_size(4);
          std::vector<uint8_t> buf(1000);
          const ssize_t n = reader->read(off, buf.size(), buf.data());
          if (n == -EIO) ++eio;
          else {
            ADD_FAILURE() << "read(" << off << ") of the damaged block returned " << n;
            ++failures;
          }
        } else if (t == 3) {
          // Running into it: the 10 verified bytes before it, a short read.
          std::vector<uint8_t> buf(100);
          const ssize_t n = reader->read(k_start - 10, buf.size(), buf.data());
          if (n == 10 && std::memcmp(buf.data(), s.plain.data() + k_start - 10, 10) == 0) ++good;
          else {
            ADD_FAILURE() << "read(" << k_start - 10 << ") into the damaged block returned " << n;
            ++failures;
          }
        } else {
          const Range r = random_range(rng, s);
          if (r.offset < k_end && r.offset + r.length > k_start) continue;  // touches the damaged block
          if (read_and_check(*reader, s, r.offset, r.length)) ++good;
          else ++failures;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0u);
  EXPECT_EQ(eio.load(), 3 * scaled(60, 15));
  EXPECT_GT(good.load(), 0u);
  EXPECT_GE(stat(e.stats().damaged_reads), eio.load());
  EXPECT_FALSE(e.cache().contains({1, 4})) << "a damaged block was cached";
}

TEST(EngineConcurrent, UndecodableBlockGivesEioAndLaterBlocksReadAtShiftedOffsets) {
  auto d = make_damaged(3, find_early_failure_flip);
  const Source& s = d->damaged;
  ASSERT_TRUE(s.index);
  ASSERT_TRUE(s.index->blocks[3].undecodable());
  ASSERT_EQ(s.blocks(), d->original.blocks());
  Engine e(options(4, kTestCacheBytes, true));
  auto reader = open_reader(e, 1, s);
  std::vector<uint8_t> buf(5000);
  EXPECT_EQ(reader->read(s.block_start(3) + 7, 100, buf.data()), -EIO);
  // A read running into it stops short of it.
  EXPECT_EQ(reader->read(s.block_start(2) + s.block_size(2) - 50, 100, buf.data()), 50);
  std::vector<std::thread> threads;
  for (size_t b = 0; b < s.blocks(); ++b) {
    if (b == 3) continue;
    threads.emplace_back([&, b] {
      // The block's bytes are the original block's, wherever the index now puts them.
      const uint64_t orig = d->original.block_start(b);
      const uint64_t size = d->original.block_size(b);
      ASSERT_EQ(s.block_size(b), size);
      std::vector<uint8_t> got(size);
      ASSERT_EQ(reader->read(s.block_start(b), size, got.data()), static_cast<ssize_t>(size)) << "block " << b;
      EXPECT_EQ(std::memcmp(got.data(), d->original.plain.data() + orig, size), 0) << "block " << b;
    });
  }
  for (auto& t : threads) t.join();
}

// The source changes under an open Reader: reads of blocks not cached yet fail with EIO rather
// than serve wrong bytes, and once a block was found not to match, so does every read (cached
// blocks served what was read until then).
TEST(EngineConcurrent, SourceChangedUnderAnOpenReaderGivesEio) {
  TempDir dir;
  const Source s = make_source(dir, "changing.bz2", text_bytes(scaled(800000, 600000), 51), 1);
  ASSERT_GE(s.blocks(), 6u);
  FileLayout layout;
  ASSERT_TRUE(walk_file(s.file, &layout));
  Engine e(options(2, kTestCacheBytes, false));
  auto reader = open_reader(e, 1, s);
  ASSERT_TRUE(read_and_check(*reader, s, s.block_start(0), 1000));

  auto write_byte = [&](uint64_t at, uint8_t value) {
    const int fd = ::open(s.path.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(pwrite(fd, &value, 1, static_cast<off_t>(at)), 1);
    close(fd);
  };
  // A flip that keeps the block's structure: its CRC fails.
  const std::optional<uint64_t> crc_bit = find_crc_only_flip(s.file, layout.blocks[2]);
  ASSERT_TRUE(crc_bit);
  write_byte(*crc_bit / 8, static_cast<uint8_t>(s.file[*crc_bit / 8] ^ (0x80u >> (*crc_bit % 8))));
  std::vector<uint8_t> buf(1000);
  EXPECT_EQ(reader->read(s.block_start(2), 1000, buf.data()), -EIO);
  EXPECT_GE(stat(e.stats().decode_errors), 1u);
  // The index no longer describes the source: from now on nothing is served through this Reader,
  // neither what is cached nor blocks whose bytes did not change (an index found wrong in one place
  // may be wrong anywhere).
  EXPECT_TRUE(reader->distrusted());
  EXPECT_EQ(reader->read(s.block_start(0) + 500, 1000, buf.data()), -EIO) << "a cached block";
  EXPECT_EQ(reader->read(s.block_start(1), 1000, buf.data()), -EIO) << "a block that did not change";
  // A flip that breaks the tables, and the file cut short: the same.
  const std::optional<uint64_t> table_bit = find_early_failure_flip(s.file, layout.blocks[3]);
  ASSERT_TRUE(table_bit);
  write_byte(*table_bit / 8, static_cast<uint8_t>(s.file[*table_bit / 8] ^ (0x80u >> (*table_bit % 8))));
  EXPECT_EQ(reader->read(s.block_start(3) + 10, 1000, buf.data()), -EIO);
  ASSERT_EQ(truncate(s.path.c_str(), static_cast<off_t>(s.file.size() / 2)), 0);
  EXPECT_EQ(reader->read(s.block_start(s.blocks() - 1), 1000, buf.data()), -EIO);
  EXPECT_EQ(reader->read(s.block_start(2), 1000, buf.data()), -EIO);
  // And the changed file cannot be opened with its old index.
  const base::Status refused = try_open(e, 2, s.path, s.index).status();
  EXPECT_FALSE(refused.ok());
  EXPECT_FALSE(refused.message().empty());
}

TEST(EngineConcurrent, OpenChecksTheFile) {
  const Source& s = text_source();
  Engine e(options(1, uint64_t{16} << 20, true));
  const base::Status missing = try_open(e, 1, s.path + ".missing", s.index).status();
  EXPECT_EQ(missing.code(), ENOENT) << missing;
  EXPECT_FALSE(missing.message().empty());
  // Another file's index.
  const base::Status other = try_open(e, 1, engine_corpus().files[1].path, s.index).status();
  EXPECT_FALSE(other.ok());
  EXPECT_FALSE(other.message().empty());
}

TEST(EngineConcurrent, ReadsAtTheEdges) {
  const Source& s = engine_corpus().files[3];  // two streams
  Engine e(options(2, kTestCacheBytes, true));
  auto reader = open_reader(e, 1, s);
  const uint64_t total = s.plain.size();
  std::vector<uint8_t> buf(10);
  EXPECT_EQ(reader->read(total, 10, buf.data()), 0);
  EXPECT_EQ(reader->read(total + 12345, 10, buf.data()), 0);
  EXPECT_EQ(reader->read(0, 0, buf.data()), 0);
  EXPECT_EQ(reader->size(), total);
  EXPECT_TRUE(read_and_check(*reader, s, total - 3, 10));
  EXPECT_TRUE(read_and_check(*reader, s, 0, 1));
  // Across every block boundary, including the one between the streams.
  for (size_t b = 1; b < s.blocks(); ++b) EXPECT_TRUE(read_and_check(*reader, s, s.block_start(b) - 2, 4)) << b;
  // The whole file at once.
  EXPECT_TRUE(read_and_check(*reader, s, 0, static_cast<size_t>(total)));
}

TEST(EngineConcurrent, ForgetDropsAFilesBlocks) {
  const Source& s = text_source();
  Engine e(options(2, kTestCacheBytes, false));
  auto reader = open_reader(e, 7, s);
  for (size_t b = 0; b < 4; ++b) ASSERT_TRUE(read_and_check(*reader, s, s.block_start(b), 100));
  EXPECT_TRUE(e.cache().contains({7, 2}));
  const uint64_t resident = e.cache().resident_bytes();
  EXPECT_GT(resident, 0u);
  e.forget(7);
  EXPECT_FALSE(e.cache().contains({7, 2}));
  EXPECT_EQ(e.cache().resident_bytes(), 0u);
  const uint64_t decodes = stat(e.stats().decodes);
  ASSERT_TRUE(read_and_check(*reader, s, s.block_start(2), 100));
  EXPECT_EQ(stat(e.stats().decodes), decodes + 1);
}

}  // namespace
}  // namespace mibz2::test
