// How io::RemoteBytes reads an object over a slow network, against one `curl` of the same URL:
// bytes transferred per random read (the goal: about what the read asked for), the time a random
// read takes, and the rate of a sequential read of the whole object in 8 MiB pieces (as mibz2
// cat -j 1 reads) with read-ahead in flight, against curl's single connection.
//
//   mibz2-bench-remote-bytes URL [--reads N] [--read-bytes B] [--no-curl]
//
// scripts/bench-remote-bytes serves a file with nginx behind testtools/fault_proxy.py (latency
// per request, bandwidth capped per connection) and runs this on the proxy's URL.
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "io/remote_bytes.h"

using namespace mibz2;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::unique_ptr<io::RemoteBytes> open(const std::shared_ptr<io::HttpClient>& client, const std::string& url) {
  base::Result<std::unique_ptr<io::RemoteBytes>> r = io::open_remote_bytes(client, url);
  if (!r.ok()) {
    std::fprintf(stderr, "bench-remote-bytes: %s\n", r.status().message().c_str());
    std::exit(1);
  }
  return std::move(*r);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: mibz2-bench-remote-bytes URL [--reads N] [--read-bytes B] [--no-curl]\n");
    return 2;
  }
  const std::string url = argv[1];
  int reads = 50;
  size_t read_bytes = 300'000;  // about one block's compressed bytes
  bool with_curl = true;
  for (int i = 2; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reads") && i + 1 < argc) reads = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--read-bytes") && i + 1 < argc) read_bytes = std::strtoull(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--no-curl")) with_curl = false;
    else {
      std::fprintf(stderr, "bench-remote-bytes: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  auto client = std::make_shared<io::HttpClient>();

  // Random reads on a fresh open: what each costs on the wire, and how long it takes.
  std::unique_ptr<io::RemoteBytes> random = open(client, url);
  const uint64_t size = random->size();
  if (size < read_bytes * 4) {
    std::fprintf(stderr, "bench-remote-bytes: the object is too small for reads of %zu bytes\n", read_bytes);
    return 1;
  }
  std::mt19937_64 rng(42);
  std::vector<uint8_t> buf(std::max<size_t>(read_bytes, 8 << 20));
  std::vector<double> times;
  for (int i = 0; i < reads; ++i) {
    const uint64_t at = rng() % (size - read_bytes);
    const Clock::time_point t = Clock::now();
    const io::SourceRead r = random->read(at, read_bytes, buf.data());
    times.push_back(seconds_since(t));
    if (r.failed()) {
      std::fprintf(stderr, "bench-remote-bytes: %s\n", random->last_failure().message().c_str());
      return 1;
    }
  }
  std::sort(times.begin(), times.end());
  const io::RemoteBytesStats rs = random->stats();
  std::printf("random reads: %d of %zu bytes; transferred per read %.0f bytes (%.3f of the read); "
              "median %.1f ms, p90 %.1f ms; read-ahead requests %llu\n",
              reads, read_bytes, double(rs.fetched_bytes) / reads, double(rs.fetched_bytes) / reads / read_bytes,
              times[times.size() / 2] * 1e3, times[times.size() * 9 / 10] * 1e3,
              static_cast<unsigned long long>(rs.readahead_fetches));

  // The whole object in order, in 8 MiB pieces.
  std::unique_ptr<io::RemoteBytes> seq = open(client, url);
  const Clock::time_point t = Clock::now();
  for (uint64_t at = 0; at < size; at += 8 << 20) {
    const io::SourceRead r = seq->read(at, 8 << 20, buf.data());
    if (r.failed()) {
      std::fprintf(stderr, "bench-remote-bytes: %s\n", seq->last_failure().message().c_str());
      return 1;
    }
  }
  const double seq_s = seconds_since(t);
  const io::RemoteBytesStats ss = seq->stats();
  std::printf("sequential: %.1f MB in %.2f s, %.1f MB/s; %llu requests (%llu read-ahead), %.3f of the object "
              "transferred\n",
              size / 1e6, seq_s, size / 1e6 / seq_s, static_cast<unsigned long long>(ss.fetches),
              static_cast<unsigned long long>(ss.readahead_fetches), double(ss.fetched_bytes) / size);

  if (with_curl) {
    const std::string command = "curl -s -f -o /dev/null '" + url + "'";
    const Clock::time_point c = Clock::now();
    const int status = std::system(command.c_str());
    const double curl_s = seconds_since(c);
    if (status != 0) {
      std::fprintf(stderr, "bench-remote-bytes: %s failed\n", command.c_str());
      return 1;
    }
    std::printf("one curl: %.1f MB/s; sequential / curl: %.2fx\n", size / 1e6 / curl_s, curl_s / seq_s);
  }
  return 0;
}
