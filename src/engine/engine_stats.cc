#include "engine/engine_stats.h"

#include <cstdio>

namespace mibz2::engine {

std::string EngineStats::summary() const {
  auto v = [](const std::atomic<uint64_t>& a) { return static_cast<unsigned long long>(a.load(std::memory_order_relaxed)); };
  char buf[768];
  std::snprintf(buf, sizeof buf,
                "reads=%llu bytes_read=%llu cache_hits=%llu cache_misses=%llu inflight_joins=%llu waits=%llu "
                "decodes=%llu bytes_decoded=%llu decode_errors=%llu damaged_reads=%llu readahead_issued=%llu "
                "readahead_used=%llu readahead_wasted=%llu evictions=%llu cache_declined=%llu cache_bytes=%llu "
                "cache_bytes_peak=%llu read_errors=%llu",
                v(reads), v(bytes_read), v(cache_hits), v(cache_misses), v(inflight_joins), v(waits), v(decodes),
                v(bytes_decoded), v(decode_errors), v(damaged_reads), v(readahead_issued), v(readahead_used),
                v(readahead_wasted), v(evictions), v(cache_declined), v(cache_bytes), v(cache_bytes_peak), v(read_errors));
  return buf;
}

}  // namespace mibz2::engine
