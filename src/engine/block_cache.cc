#include "engine/block_cache.h"

#include <vector>

namespace mibz2::engine {

BlockCache::BlockCache(uint64_t capacity_bytes, EngineStats& stats) : capacity_(capacity_bytes), stats_(stats) {}

BlockCache::~BlockCache() {
  for (Shard& s : shards_)
    for (const Entry& e : s.lru)
      if (e.prefetched) add(stats_.readahead_wasted);
}

BlockRef BlockCache::lookup(const BlockKey& key, bool count) {
  Shard& s = shard_for(key);
  std::lock_guard lk(s.mu);
  auto it = s.map.find(key);
  if (it == s.map.end()) {
    if (count) add(stats_.cache_misses);
    return nullptr;
  }
  Entry& e = *it->second;
  e.last_used = tick_.fetch_add(1, std::memory_order_relaxed);
  if (e.prefetched) {
    e.prefetched = false;
    add(stats_.readahead_used);
  }
  s.lru.splice(s.lru.begin(), s.lru, it->second);
  if (count) add(stats_.cache_hits);
  return e.block;
}

bool BlockCache::contains(const BlockKey& key) const {
  const Shard& s = shard_for(key);
  std::lock_guard lk(s.mu);
  return s.map.count(key) != 0;
}

bool BlockCache::evict_one() {
  // The globally least recently used entry is the oldest of the shard tails.
  int victim = -1;
  uint64_t oldest = UINT64_MAX;
  for (int i = 0; i < kShards; ++i) {
    std::lock_guard lk(shards_[i].mu);
    if (!shards_[i].lru.empty() && shards_[i].lru.back().last_used < oldest) {
      oldest = shards_[i].lru.back().last_used;
      victim = i;
    }
  }
  if (victim < 0) return false;
  BlockRef dropped;  // released after the shard lock, so no free() runs under it
  {
    Shard& s = shards_[victim];
    std::lock_guard lk(s.mu);
    if (s.lru.empty()) return true;  // emptied meanwhile (erase_file); the caller re-checks
    Entry& e = s.lru.back();
    if (e.prefetched) add(stats_.readahead_wasted);
    resident_.fetch_sub(e.bytes, std::memory_order_relaxed);
    stats_.cache_bytes.store(resident_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    dropped = std::move(e.block);
    s.map.erase(e.key);
    s.lru.pop_back();
  }
  add(stats_.evictions);
  return true;
}

bool BlockCache::insert(const BlockKey& key, BlockRef block, bool prefetched, bool count_decline) {
  const uint64_t bytes = block->cost();
  auto decline = [&] {
    if (prefetched && count_decline) add(stats_.readahead_wasted);
    return false;
  };
  if (bytes > capacity_) return decline();
  std::lock_guard admission(admission_mu_);
  {
    Shard& s = shard_for(key);
    std::lock_guard lk(s.mu);
    if (s.map.count(key)) return decline();  // decoded twice (a dropped in-flight entry); keep the first
  }
  // An evicted block no reader holds is freed as evict_one() returns, giving its charge back; one
  // a reader holds stays charged until the reader lets go.
  while (ledger_->bytes() + bytes > capacity_)
    if (!evict_one()) break;
  if (ledger_->bytes() + bytes > capacity_) {
    // Readers hold what is left of the capacity: growing past it is what the bound is for.
    if (count_decline) add(stats_.cache_declined);
    return decline();
  }
  Shard& s = shard_for(key);
  std::lock_guard lk(s.mu);
  s.lru.push_front(Entry{key, block, bytes, tick_.fetch_add(1, std::memory_order_relaxed), prefetched});
  try {
    s.map.emplace(key, s.lru.begin());
  } catch (...) {
    s.lru.pop_front();  // out of memory: as if never inserted (an entry in one and not the other
    throw;              // would be evicted with bytes never counted in)
  }
  block->charge_to(ledger_);  // cannot fail; before the shard lock lets any lookup find the block
  const uint64_t now = resident_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  stats_.cache_bytes.store(now, std::memory_order_relaxed);
  if (now > stats_.cache_bytes_peak.load(std::memory_order_relaxed)) stats_.cache_bytes_peak.store(now, std::memory_order_relaxed);
  return true;
}

void BlockCache::erase_file(uint64_t file) {
  std::lock_guard admission(admission_mu_);
  std::vector<BlockRef> dropped;  // freed after the shard locks are released
  for (Shard& s : shards_) {
    std::lock_guard lk(s.mu);
    for (auto it = s.lru.begin(); it != s.lru.end();) {
      if (it->key.file != file) {
        ++it;
        continue;
      }
      if (it->prefetched) add(stats_.readahead_wasted);
      resident_.fetch_sub(it->bytes, std::memory_order_relaxed);
      dropped.push_back(std::move(it->block));
      s.map.erase(it->key);
      it = s.lru.erase(it);
    }
  }
  stats_.cache_bytes.store(resident_.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

void BlockCache::erase(const BlockKey& key) {
  BlockRef dropped;  // freed after the locks are released
  std::lock_guard admission(admission_mu_);
  Shard& s = shard_for(key);
  std::lock_guard lk(s.mu);
  auto it = s.map.find(key);
  if (it == s.map.end()) return;
  Entry& e = *it->second;
  if (e.prefetched) add(stats_.readahead_wasted);
  resident_.fetch_sub(e.bytes, std::memory_order_relaxed);
  stats_.cache_bytes.store(resident_.load(std::memory_order_relaxed), std::memory_order_relaxed);
  dropped = std::move(e.block);
  s.lru.erase(it->second);
  s.map.erase(it);
}

}  // namespace mibz2::engine
