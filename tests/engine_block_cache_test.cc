// BlockCache alone (single-threaded): hits and misses, least recently used out first, the bound in
// bytes over everything charged (blocks resident and blocks readers hold past their eviction), a
// block with no room declined, a file's blocks dropped, and the read-ahead counts (block_cache.h).
#include "engine/block_cache.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/engine_stats.h"

namespace mibz2::test {
namespace {

using engine::BlockCache;
using engine::BlockKey;
using engine::BlockRef;
using engine::DecodedBlock;

constexpr size_t kBlockBytes = 100000;

// A decoded block of `n` bytes, its buffer allocated at that size (so that every block of one size
// costs the same).
std::shared_ptr<DecodedBlock> block_of(size_t n = kBlockBytes, uint8_t fill = 0) {
  auto b = std::make_shared<DecodedBlock>();
  b->bytes.reserve_exact(n);
  b->bytes.resize_uninitialized(n);
  for (size_t i = 0; i < n; ++i) b->bytes.data()[i] = fill;
  return b;
}

// What one block of kBlockBytes costs in the cache.
uint64_t block_cost() { return block_of()->cost(); }

uint64_t count(const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); }

BlockKey key(uint64_t block, uint64_t file = 1) { return {file, block}; }

// A cache with room for exactly `blocks` blocks of kBlockBytes.
struct CacheRig {
  engine::EngineStats stats;
  BlockCache cache;
  explicit CacheRig(uint64_t blocks) : cache(blocks * block_cost(), stats) {}
  bool insert(uint64_t block, bool prefetched = false) {
    return cache.insert(key(block), block_of(kBlockBytes, static_cast<uint8_t>(block)), prefetched);
  }
};

TEST(BlockCache, AMissThenAHitOfTheSameBytes) {
  CacheRig r(4);
  EXPECT_EQ(r.cache.lookup(key(7)), nullptr);
  EXPECT_EQ(count(r.stats.cache_misses), 1u);
  EXPECT_EQ(count(r.stats.cache_hits), 0u);

  const auto b = block_of(kBlockBytes, 0x5a);
  ASSERT_TRUE(r.cache.insert(key(7), b, false));
  EXPECT_TRUE(r.cache.contains(key(7)));
  const BlockRef got = r.cache.lookup(key(7));
  EXPECT_EQ(got.get(), b.get());
  EXPECT_EQ(count(r.stats.cache_hits), 1u);
  EXPECT_EQ(count(r.stats.cache_misses), 1u);
  // Another file's block of the same number is another block.
  EXPECT_EQ(r.cache.lookup(key(7, 2)), nullptr);
  EXPECT_EQ(count(r.stats.cache_misses), 2u);
}

TEST(BlockCache, AnUncountedLookupAndContainsCountNothing) {
  CacheRig r(4);
  ASSERT_TRUE(r.insert(1));
  EXPECT_NE(r.cache.lookup(key(1), false), nullptr);
  EXPECT_EQ(r.cache.lookup(key(2), false), nullptr);
  EXPECT_TRUE(r.cache.contains(key(1)));
  EXPECT_FALSE(r.cache.contains(key(2)));
  EXPECT_EQ(count(r.stats.cache_hits), 0u);
  EXPECT_EQ(count(r.stats.cache_misses), 0u);
}

TEST(BlockCache, TheLeastRecentlyUsedBlockGoesFirst) {
  CacheRig r(3);
  ASSERT_TRUE(r.insert(0));
  ASSERT_TRUE(r.insert(1));
  ASSERT_TRUE(r.insert(2));
  ASSERT_NE(r.cache.lookup(key(0)), nullptr);  // 0 is now the most recent; 1 the least
  ASSERT_TRUE(r.insert(3));
  EXPECT_FALSE(r.cache.contains(key(1)));
  EXPECT_TRUE(r.cache.contains(key(0)));
  EXPECT_TRUE(r.cache.contains(key(2)));
  EXPECT_TRUE(r.cache.contains(key(3)));
  EXPECT_EQ(count(r.stats.evictions), 1u);

  ASSERT_TRUE(r.insert(4));  // then 2 (inserted before 0 was touched, and never looked up)
  EXPECT_FALSE(r.cache.contains(key(2)));
  EXPECT_TRUE(r.cache.contains(key(0)));
  ASSERT_TRUE(r.insert(5));  // then 0
  EXPECT_FALSE(r.cache.contains(key(0)));
  EXPECT_TRUE(r.cache.contains(key(3)));
  EXPECT_TRUE(r.cache.contains(key(4)));
  EXPECT_TRUE(r.cache.contains(key(5)));
  EXPECT_EQ(count(r.stats.evictions), 3u);
}

TEST(BlockCache, AnUncountedLookupStillMarksTheBlockUsed) {
  CacheRig r(2);
  ASSERT_TRUE(r.insert(0));
  ASSERT_TRUE(r.insert(1));
  ASSERT_NE(r.cache.lookup(key(0), false), nullptr);
  ASSERT_TRUE(r.insert(2));
  EXPECT_TRUE(r.cache.contains(key(0)));
  EXPECT_FALSE(r.cache.contains(key(1)));
}

// Blocks of many sizes and files: the bytes charged never pass the capacity, and the bytes
// resident are those of the blocks the cache still finds.
TEST(BlockCache, TheBytesChargedNeverPassTheCapacity) {
  engine::EngineStats stats;
  const uint64_t capacity = 10 * block_cost();
  BlockCache cache(capacity, stats);
  std::vector<std::pair<BlockKey, uint64_t>> inserted;
  for (uint64_t i = 0; i < 200; ++i) {
    const size_t n = 1000 + (i * 7919) % (3 * kBlockBytes);
    const auto b = block_of(n);
    const uint64_t cost = b->cost();
    const BlockKey k = key(i, i % 3);
    ASSERT_TRUE(cache.insert(k, b, false)) << i;
    inserted.emplace_back(k, cost);
    EXPECT_LE(cache.ledger()->bytes(), capacity) << i;
    EXPECT_LE(cache.resident_bytes(), capacity) << i;
    if (i % 5 == 0) (void)cache.lookup(inserted[i / 2].first);
  }
  uint64_t found = 0;
  for (const auto& [k, cost] : inserted) found += cache.contains(k) ? cost : 0;
  EXPECT_EQ(cache.resident_bytes(), found);
  EXPECT_EQ(cache.ledger()->bytes(), found);  // nothing held outside
  EXPECT_LE(cache.ledger()->peak(), capacity);
  EXPECT_EQ(count(stats.cache_bytes), found);
  EXPECT_LE(count(stats.cache_bytes_peak), capacity);
  EXPECT_GT(count(stats.evictions), 0u);
  EXPECT_EQ(count(stats.cache_declined), 0u);
}

TEST(BlockCache, ABlockLargerThanTheCapacityIsNotKept) {
  CacheRig r(2);
  EXPECT_FALSE(r.cache.insert(key(0), block_of(3 * kBlockBytes), false));
  EXPECT_FALSE(r.cache.contains(key(0)));
  EXPECT_EQ(r.cache.ledger()->bytes(), 0u);
  EXPECT_EQ(r.cache.resident_bytes(), 0u);
}

TEST(BlockCache, ABlockDecodedTwiceKeepsTheFirst) {
  CacheRig r(4);
  const auto first = block_of(kBlockBytes, 1);
  ASSERT_TRUE(r.cache.insert(key(0), first, false));
  EXPECT_FALSE(r.cache.insert(key(0), block_of(kBlockBytes, 2), false));
  EXPECT_EQ(r.cache.lookup(key(0)).get(), first.get());
  EXPECT_EQ(r.cache.resident_bytes(), block_cost());
  EXPECT_EQ(r.cache.ledger()->bytes(), block_cost());
}

// A reader copying from a block when it is evicted: the block is gone from the cache but its bytes
// are alive, so they stay charged until the reader lets go.
TEST(BlockCache, ABlockHeldPastItsEvictionStaysChargedUntilFreed) {
  CacheRig r(2);
  const uint64_t c = block_cost();
  BlockRef held;
  {
    const auto a = block_of();
    ASSERT_TRUE(r.cache.insert(key(0), a, false));
    held = r.cache.lookup(key(0));
  }
  ASSERT_TRUE(r.insert(1));
  // Room for 2: the third evicts 0 (held: still charged), then 1 (freed), and fits.
  ASSERT_TRUE(r.insert(2));
  EXPECT_FALSE(r.cache.contains(key(0)));
  EXPECT_FALSE(r.cache.contains(key(1)));
  EXPECT_TRUE(r.cache.contains(key(2)));
  EXPECT_EQ(r.cache.resident_bytes(), c);
  EXPECT_EQ(r.cache.ledger()->bytes(), 2 * c);
  EXPECT_EQ(count(r.stats.evictions), 2u);
  held.reset();
  EXPECT_EQ(r.cache.ledger()->bytes(), c);
  EXPECT_EQ(r.cache.resident_bytes(), c);
}

// Readers hold the whole capacity: a new block is declined rather than the bound passed, counted
// once, and never charged; once a reader lets go the cache takes blocks again.
TEST(BlockCache, ABlockWithNoRoomIsDeclinedAndNotCharged) {
  CacheRig r(2);
  const uint64_t c = block_cost();
  auto a = block_of();  // held by readers
  const auto b = block_of();
  ASSERT_TRUE(r.cache.insert(key(0), a, false));
  ASSERT_TRUE(r.cache.insert(key(1), b, false));

  const auto refused = block_of();
  EXPECT_FALSE(r.cache.insert(key(2), refused, false));
  EXPECT_FALSE(r.cache.contains(key(2)));
  EXPECT_EQ(count(r.stats.cache_declined), 1u);
  EXPECT_EQ(r.cache.ledger()->bytes(), 2 * c);  // a and b, evicted trying to make room, held here
  EXPECT_LE(r.cache.ledger()->peak(), 2 * c);
  EXPECT_EQ(r.cache.resident_bytes(), 0u);

  // An attempt that another follows is not counted; a prefetched block declined is wasted once.
  EXPECT_FALSE(r.cache.insert(key(2), refused, true, /*count_decline=*/false));
  EXPECT_EQ(count(r.stats.cache_declined), 1u);
  EXPECT_EQ(count(r.stats.readahead_wasted), 0u);
  EXPECT_FALSE(r.cache.insert(key(3), block_of(), true));
  EXPECT_EQ(count(r.stats.cache_declined), 2u);
  EXPECT_EQ(count(r.stats.readahead_wasted), 1u);
  EXPECT_EQ(r.cache.ledger()->bytes(), 2 * c);  // the declined blocks were never charged

  a.reset();  // the reader of block 0 lets go
  EXPECT_EQ(r.cache.ledger()->bytes(), c);
  EXPECT_TRUE(r.cache.insert(key(2), refused, false));
  EXPECT_TRUE(r.cache.contains(key(2)));
  EXPECT_EQ(r.cache.ledger()->bytes(), 2 * c);
}

TEST(BlockCache, EraseFileDropsThatFileOnly) {
  engine::EngineStats stats;
  BlockCache cache(8 * block_cost(), stats);
  for (uint64_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(cache.insert(key(i, 1), block_of(), false));
    ASSERT_TRUE(cache.insert(key(i, 2), block_of(), false));
  }
  cache.erase_file(1);
  for (uint64_t i = 0; i < 3; ++i) {
    EXPECT_FALSE(cache.contains(key(i, 1))) << i;
    EXPECT_TRUE(cache.contains(key(i, 2))) << i;
  }
  EXPECT_EQ(cache.resident_bytes(), 3 * block_cost());
  EXPECT_EQ(cache.ledger()->bytes(), 3 * block_cost());
  EXPECT_EQ(count(stats.cache_bytes), 3 * block_cost());
  EXPECT_EQ(count(stats.evictions), 0u);  // dropped, not evicted
}

// A block decoded ahead of its reader is used when first looked up, wasted when it goes unread
// (evicted, dropped with its file, or still unread when the cache goes).
TEST(BlockCache, ReadAheadIsCountedUsedOrWasted) {
  engine::EngineStats stats;
  {
    BlockCache cache(2 * block_cost(), stats);
    ASSERT_TRUE(cache.insert(key(0), block_of(), true));
    ASSERT_NE(cache.lookup(key(0)), nullptr);
    ASSERT_NE(cache.lookup(key(0)), nullptr);
    EXPECT_EQ(count(stats.readahead_used), 1u);  // once, at its first reading

    ASSERT_TRUE(cache.insert(key(1), block_of(), true));
    ASSERT_TRUE(cache.insert(key(2), block_of(), false));  // evicts 0 (read), not 1
    ASSERT_TRUE(cache.insert(key(3), block_of(), false));  // evicts 1, never read
    EXPECT_FALSE(cache.contains(key(1)));
    EXPECT_EQ(count(stats.readahead_wasted), 1u);

    ASSERT_TRUE(cache.insert(key(0, 9), block_of(), true));  // evicts 2
    cache.erase_file(9);
    EXPECT_EQ(count(stats.readahead_wasted), 2u);

    ASSERT_TRUE(cache.insert(key(5), block_of(), true));
  }
  EXPECT_EQ(count(stats.readahead_wasted), 3u);  // block 5, unread when the cache went
  EXPECT_EQ(count(stats.readahead_used), 1u);
}

}  // namespace
}  // namespace mibz2::test
