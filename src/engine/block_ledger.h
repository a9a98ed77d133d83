// The memory of decoded blocks that counts against the cache's capacity, whoever holds them: a
// block is charged when the cache admits it and stays charged until its last holder lets it go, in
// the cache or out of it (a reader still replying from a block evicted meanwhile, a read waiting
// for its other blocks). So the cache's bound is a bound on decoded bytes alive, not only on those
// it can find. Blocks never charged are those the cache declined: they live only while the decoder
// thread that made them hands them to their readers (reader.h), within that thread's own share of
// the memory rule (man mibz2fs, MEMORY).
//
// A counter and nothing else: charging and releasing are one atomic operation each, so the hit
// path (which may drop the last reference to an evicted block) never takes a lock for it.
#pragma once

#include <atomic>
#include <cstdint>

namespace mibz2::engine {

class BlockLedger {
 public:
  // Bytes charged now.
  uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
  // The most ever charged at once.
  uint64_t peak() const { return peak_.load(std::memory_order_relaxed); }

  void charge(uint64_t n) {
    const uint64_t now = bytes_.fetch_add(n, std::memory_order_relaxed) + n;
    uint64_t seen = peak_.load(std::memory_order_relaxed);
    while (now > seen && !peak_.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
    }
  }
  void release(uint64_t n) noexcept { bytes_.fetch_sub(n, std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> bytes_{0};
  std::atomic<uint64_t> peak_{0};
};

}  // namespace mibz2::engine
