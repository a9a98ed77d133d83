// Decoded blocks of all open files, least-recently-used first out, bounded in bytes.
//
// The hit path is the common path and must never queue behind a miss: a lookup takes only the
// mutex of one of 16 shards, for a hash lookup and an LRU touch, and never any lock that is held
// while decoding or reading files (those belong to the readers' in-flight tables). Admission and
// eviction are serialised by their own mutex; eviction picks the least recently used entry across
// all shards by comparing the shards' tails, so the bound is global and exact in bytes.
// A block handed out is a shared_ptr: eviction never frees bytes under a reader. A block evicted
// while a reader still copies from it still takes memory, so it still counts against the capacity
// until the last reader lets go (block_ledger.h): the bound is on decoded bytes alive, not only on
// those the cache can find. When what readers hold leaves no room for a new block even with every
// other block evicted, the cache declines it (insert returns false) rather than grow past its
// bound: its readers still get it, from the decoder thread that made it (which offers it once
// more when they have it: reader.cc), and it is gone after.
#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/byte_buffer.h"
#include "engine/block_ledger.h"
#include "engine/engine_stats.h"

namespace mibz2::engine {

// A block's decoded bytes (or the part of one a waiting read copied out: reader.cc). Charged to a
// ledger once (by the cache as it admits it, before a lookup can find it), it gives its charge
// back when it is freed, whichever holder lets it go last.
struct DecodedBlock {
  base::ByteBuffer bytes;
  // Where the bytes lie in the decompressed file, as the decode's check vouched for them
  // (index/block_check.h): a read places them by this, never by a record read again (a mapped
  // index can change meanwhile). 0 for the copied part of a block.
  uint64_t out_offset = 0;

  DecodedBlock() = default;
  DecodedBlock(const DecodedBlock&) = delete;
  DecodedBlock& operator=(const DecodedBlock&) = delete;
  ~DecodedBlock() {
    if (ledger_) ledger_->release(charge_);
  }

  // What the block costs in memory: its buffer's capacity and this struct.
  uint64_t cost() const { return bytes.capacity() + sizeof(DecodedBlock); }
  // Counts cost() in `ledger` until the block is freed. Once, by a thread that holds it (so the
  // destructor cannot run meanwhile), before a lookup can find it; other holders read only bytes.
  void charge_to(std::shared_ptr<BlockLedger> ledger) const {
    charge_ = cost();
    ledger->charge(charge_);
    ledger_ = std::move(ledger);
  }

 private:
  // Set once, by charge_to (a const block may be charged: BlockRef is const).
  mutable std::shared_ptr<BlockLedger> ledger_;
  mutable uint64_t charge_ = 0;
};
using BlockRef = std::shared_ptr<const DecodedBlock>;

struct BlockKey {
  uint64_t file;
  uint64_t block;
  bool operator==(const BlockKey&) const = default;
};

struct BlockKeyHash {
  size_t operator()(const BlockKey& k) const {
    uint64_t h = k.file * 0x9E3779B97F4A7C15ull ^ (k.block + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

class BlockCache {
 public:
  BlockCache(uint64_t capacity_bytes, EngineStats& stats);
  ~BlockCache();

  // The block if resident (and marks it most recently used), else null. Counts a hit or a miss
  // unless `count` is false (a re-check on the slow path is not a second lookup).
  BlockRef lookup(const BlockKey& key, bool count = true);
  // Like lookup but counts nothing and does not touch the LRU order.
  bool contains(const BlockKey& key) const;
  // Admits a decoded block (not charged yet), evicting least recently used blocks first so that
  // the decoded bytes charged (block_ledger.h: these, and evicted ones readers still hold) never
  // exceed the capacity. False when it is not kept: already cached (decoded twice), larger than
  // the capacity, or no room with every other block evicted (readers hold the rest: counted as
  // cache_declined). `prefetched`: it was decoded ahead of any reader (counted as wasted if evicted
  // before it is read, or not kept). `count_decline`: false for an attempt that another follows
  // if it fails, so that a block is counted declined (and wasted) once. Out of memory, throws with
  // the block not inserted (blocks evicted to make room stay evicted).
  bool insert(const BlockKey& key, BlockRef block, bool prefetched, bool count_decline = true);
  // Drops every block of a file (it changed or was closed for good).
  void erase_file(uint64_t file);
  // Drops one block if resident (a sequential reader is done with it: reader.h, drop-behind).
  void erase(const BlockKey& key);

  uint64_t capacity() const { return capacity_; }
  uint64_t resident_bytes() const { return resident_.load(std::memory_order_relaxed); }
  // Decoded bytes charged against the capacity: resident, and held by readers after eviction.
  const std::shared_ptr<BlockLedger>& ledger() const { return ledger_; }

  // For tests of the hit path: the lock that admission and eviction take.
  std::mutex& admission_mutex_for_testing() { return admission_mu_; }

 private:
  static constexpr int kShards = 16;
  struct Entry {
    BlockKey key;
    BlockRef block;
    uint64_t bytes;
    uint64_t last_used;  // global tick of the last hit
    bool prefetched;     // not read since it was decoded ahead
  };
  struct Shard {
    mutable std::mutex mu;
    std::list<Entry> lru;  // front: most recent
    std::unordered_map<BlockKey, std::list<Entry>::iterator, BlockKeyHash> map;
  };

  Shard& shard_for(const BlockKey& key) { return shards_[BlockKeyHash{}(key) % kShards]; }
  const Shard& shard_for(const BlockKey& key) const { return shards_[BlockKeyHash{}(key) % kShards]; }
  bool evict_one();  // requires admission_mu_

  const uint64_t capacity_;
  EngineStats& stats_;
  Shard shards_[kShards];
  std::atomic<uint64_t> tick_{0};
  std::atomic<uint64_t> resident_{0};
  const std::shared_ptr<BlockLedger> ledger_ = std::make_shared<BlockLedger>();  // outlives blocks held past the cache
  // Lock order: admission_mu_ -> one shard's mu at a time (eviction looks at the shards one by
  // one). Lookups take a shard's mu alone. No block is freed under a shard lock.
  std::mutex admission_mu_;  // serialises insert/evict; never held by lookups
};

}  // namespace mibz2::engine
