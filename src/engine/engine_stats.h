// Counters of what the engine did, readable at any time by any thread (relaxed atomics: each is
// exact, a snapshot of several is only approximately simultaneous).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace mibz2::engine {

struct EngineStats {
  std::atomic<uint64_t> reads{0};              // Reader::read calls
  std::atomic<uint64_t> bytes_read{0};         // bytes returned by them
  std::atomic<uint64_t> cache_hits{0};         // block lookups served from the cache
  std::atomic<uint64_t> cache_misses{0};       // block lookups that were not
  std::atomic<uint64_t> inflight_joins{0};     // misses that joined a decode already under way
  std::atomic<uint64_t> waits{0};              // demand lookups that had to wait for a decode
  std::atomic<uint64_t> decodes{0};            // blocks decoded
  std::atomic<uint64_t> bytes_decoded{0};      // their decoded bytes
  std::atomic<uint64_t> decode_errors{0};      // decodes that failed (damaged or changed file)
  std::atomic<uint64_t> damaged_reads{0};      // reads refused with EIO because of damage
  std::atomic<uint64_t> read_errors{0};        // decodes that could not read the source (EIO...):
                                               // not damage; the next read tries again
  std::atomic<uint64_t> readahead_issued{0};   // blocks queued ahead of a sequential reader
  std::atomic<uint64_t> readahead_used{0};     // of those, later read
  std::atomic<uint64_t> readahead_wasted{0};   // of those, evicted or dropped unread
  std::atomic<uint64_t> evictions{0};          // blocks evicted from the cache
  std::atomic<uint64_t> cache_declined{0};     // decoded blocks not kept: readers held the room
  std::atomic<uint64_t> cache_bytes{0};        // bytes resident in the cache now
  std::atomic<uint64_t> cache_bytes_peak{0};   // the most ever resident

  // "reads=... hits=... misses=..." on one line, for logs.
  std::string summary() const;
};

inline void add(std::atomic<uint64_t>& counter, uint64_t n = 1) { counter.fetch_add(n, std::memory_order_relaxed); }

}  // namespace mibz2::engine
