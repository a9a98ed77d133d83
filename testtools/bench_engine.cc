// mibz2-bench-engine: latency and throughput of random reads through the engine, for
// scripts/bench-engine. Not installed. Prints one "key value" line per figure, then a table.
//
//   mibz2-bench-engine FILE.bz2 [--index-dir DIR] [--threads N] [--samples N] [--seconds S]
//
// 1. S uniform random offsets in distinct blocks; those blocks decoded on one thread straight from
//    the file (pread + decode): the cost a cold random read cannot avoid.
// 2. cold 4 KiB reads at those offsets: a fresh engine (empty cache), one read at a time; then
//    warm: the same offsets again (now cached).
// 3. concurrent readers (1, 4, 64 threads) for a fixed time each, random 4 KiB reads, once with
//    the whole file cached (the hit path) and once with a cache of an eighth of the file (decodes):
//    aggregate MB/s, system time and context switches per GB read (getrusage of the process).
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/settings.h"
#include "bz2/block_decoder.h"
#include "catalog/front_door.h"
#include "catalog/read_handle.h"
#include "io/fd_io.h"
#include "programs/index_access.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5));
  return v[i];
}

struct Usage {
  double sys = 0;
  long ctx = 0;
};
Usage usage_now() {
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return {static_cast<double>(ru.ru_stime.tv_sec) + static_cast<double>(ru.ru_stime.tv_usec) / 1e6,
          ru.ru_nvcsw + ru.ru_nivcsw};
}

int fail(const std::string& msg) {
  std::fprintf(stderr, "mibz2-bench-engine: %s\n", msg.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path, index_dir;
  unsigned threads = 0;
  int samples = 200;
  double seconds = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--index-dir") index_dir = next();
    else if (a == "--threads") {
      const std::string n = next();
      const auto t = mibz2::base::parse_threads(n);
      if (!t) return fail("--threads: " + mibz2::base::not_a_thread_count(n));
      threads = *t;
    }
    else if (a == "--samples") samples = std::max(10, std::atoi(next().c_str()));
    else if (a == "--seconds") seconds = std::max(0.5, std::atof(next().c_str()));
    else if (path.empty()) path = a;
    else return fail("unexpected argument " + a);
  }
  if (path.empty()) return fail("usage: mibz2-bench-engine FILE.bz2 [--index-dir DIR] [--threads N] [--samples N] [--seconds S]");

  const mibz2::catalog::IndexStatus got = [&] {
    mibz2::programs::IndexAccess access("mibz2-bench-engine", {.threads = threads, .index_dir = index_dir});
    return access.obtain(access.file(path), path, false, true);
  }();
  if (!got.ready()) return 1;  // obtain() said why
  const auto& idx = *got.index;
  const uint64_t size = idx.decompressed_size;
  if (size < 4096 || idx.blocks.empty()) return fail("file too small to benchmark");
  std::mt19937_64 rng(42);

  // Offsets at uniform random positions (so blocks are hit in proportion to their size, as a
  // reader's would be), at most one per block so that every cold read is a miss.
  std::vector<uint64_t> offsets;
  {
    std::vector<bool> used(idx.blocks.size(), false);
    for (int tries = 0; offsets.size() < static_cast<size_t>(samples) && tries < 100 * samples; ++tries) {
      const uint64_t o = rng() % (size - 4096);
      const size_t b = idx.block_at(o);
      if (used[b] || idx.blocks[b].damaged() || o + 4096 > idx.blocks[b].out_offset + idx.block_size(b)) continue;
      used[b] = true;
      offsets.push_back(o);
    }
  }

  // 1. The same blocks decoded on one thread straight from the file: what a cold read cannot avoid.
  std::vector<double> block_ms;
  {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    mibz2::bz2::BlockDecoder dec;
    mibz2::base::ByteBuffer in, out;
    for (const uint64_t o : offsets) {
      const size_t b = idx.block_at(o);
      const auto& r = idx.blocks[b];
      const auto t0 = Clock::now();
      const uint64_t b0 = r.start_bit() / 8, b1 = (r.end_bit() + 7) / 8;
      in.resize_uninitialized(b1 - b0);
      mibz2::io::pread_full(fd, in.data(), b1 - b0, b0);
      out.clear();
      mibz2::bz2::BlockResult res;
      const mibz2::bz2::Error e = dec.decode({in.data(), in.size()}, r.start_bit() % 8, r.level(), out, res);
      if (e) return fail("decoding " + mibz2::index::describe_block(idx, b) + ": " + mibz2::bz2::to_string(e));
      block_ms.push_back(seconds_since(t0) * 1e3);
    }
    close(fd);
  }

  // 2. Cold then warm random 4 KiB reads, one at a time, through a fresh engine.
  std::vector<double> cold_us, warm_us;
  {
    mibz2::catalog::FrontDoor door({.threads = threads, .index_dir = index_dir});
    auto opened = door.open(door.file(path));
    if (!opened.ok()) return fail(opened.status().message());
    mibz2::catalog::ReadHandle& reader = **opened;
    std::vector<uint8_t> buf(4096);
    for (uint64_t o : offsets) {
      const auto t0 = Clock::now();
      if (reader.read(o, 4096, buf.data()).bytes != 4096) return fail("short read");
      cold_us.push_back(seconds_since(t0) * 1e6);
    }
    for (uint64_t o : offsets) {
      const auto t0 = Clock::now();
      if (reader.read(o, 4096, buf.data()).bytes != 4096) return fail("short read");
      warm_us.push_back(seconds_since(t0) * 1e6);
    }
  }
  const double block_median_ms = percentile(block_ms, 0.5);
  std::printf("block_decode_median_ms %.3f\n", block_median_ms);
  std::printf("cold_4k_median_ms %.3f\ncold_4k_p99_ms %.3f\n", percentile(cold_us, 0.5) / 1e3, percentile(cold_us, 0.99) / 1e3);
  std::printf("cold_over_block_decode %.2f\n", percentile(cold_us, 0.5) / 1e3 / block_median_ms);
  std::printf("warm_4k_median_us %.2f\nwarm_4k_p99_us %.2f\n", percentile(warm_us, 0.5), percentile(warm_us, 0.99));

  // 3. Concurrent random readers.
  std::printf("\n%-22s %8s %10s %10s %12s %14s\n", "readers (cache)", "threads", "reads/s", "MB/s", "sys s/GB", "ctx sw/GB");
  for (const bool whole : {true, false}) {
    const uint64_t cache_size = whole ? size + (size / 8) + (64u << 20) : std::max<uint64_t>(size / 8, 16u << 20);
    mibz2::catalog::FrontDoor door({.threads = threads, .cache_size = cache_size, .index_dir = index_dir});
    auto opened = door.open(door.file(path));
    if (!opened.ok()) return fail(opened.status().message());
    mibz2::catalog::ReadHandle& reader = **opened;
    if (whole) {  // warm everything first
      std::vector<uint8_t> buf(4 << 20);
      for (uint64_t o = 0; o < size; o += buf.size()) (void)reader.read(o, buf.size(), buf.data());
    }
    for (const int n : {1, 4, 64}) {
      std::atomic<uint64_t> bytes{0};
      std::atomic<bool> stop{false};
      const Usage u0 = usage_now();
      const auto t0 = Clock::now();
      std::vector<std::thread> ts;
      for (int t = 0; t < n; ++t) {
        ts.emplace_back([&, t] {
          std::mt19937_64 r(1000 + static_cast<uint64_t>(t));
          std::vector<uint8_t> buf(4096);
          uint64_t local = 0;
          while (!stop.load(std::memory_order_relaxed)) {
            local += reader.read(r() % (size - 4096), 4096, buf.data()).bytes;
          }
          bytes += local;
        });
      }
      std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
      stop = true;
      for (auto& th : ts) th.join();
      const double secs = seconds_since(t0);
      const Usage u1 = usage_now();
      const double gb = static_cast<double>(bytes.load()) / 1e9;
      const char* label = whole ? "random 4K (all cached)" : "random 4K (cache 1/8)";
      std::printf("%-22s %8d %10.0f %10.1f %12.3f %14.0f\n", label, n, static_cast<double>(bytes.load()) / 4096 / secs,
                  static_cast<double>(bytes.load()) / 1e6 / secs,
                  gb > 0 ? (u1.sys - u0.sys) / gb : 0.0, gb > 0 ? static_cast<double>(u1.ctx - u0.ctx) / gb : 0.0);
      std::printf("#%s_%d_mbps %.1f\n", whole ? "hit" : "miss", n, static_cast<double>(bytes.load()) / 1e6 / secs);
    }
  }
  return 0;
}
