// What counting the newlines of the index costs (index/newline_count.h): FILE (a decompressed
// document) is taken in pieces of a level-9 block's 900 kB, each copied into a buffer as a decoder
// writes a block and then counted, as an index build counts it; the time of the counting alone is
// summed. Prints bytes per second of count_newlines, and of std::count and a memchr loop for scale.
//
//   mibz2-bench-newlines FILE [PASSES]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include "index/newline_count.h"

namespace {

constexpr size_t kPiece = 900000;

uint64_t memchr_count(const uint8_t* p, size_t n) {
  uint64_t c = 0;
  const uint8_t* end = p + n;
  while (const void* hit = std::memchr(p, '\n', static_cast<size_t>(end - p))) {
    ++c;
    p = static_cast<const uint8_t*>(hit) + 1;
  }
  return c;
}

template <class Count>
double gb_per_s(const std::vector<uint8_t>& doc, int passes, Count count, uint64_t* total) {
  std::vector<uint8_t> block(kPiece);
  double seconds = 0;
  *total = 0;
  for (int p = 0; p < passes; ++p)
    for (size_t at = 0; at < doc.size(); at += kPiece) {
      const size_t n = std::min(kPiece, doc.size() - at);
      std::memcpy(block.data(), doc.data() + at, n);  // the block as the decoder leaves it
      const auto t0 = std::chrono::steady_clock::now();
      *total += count(block.data(), n);
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
  return static_cast<double>(doc.size()) * passes / seconds / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: mibz2-bench-newlines FILE [PASSES]\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary | std::ios::ate);
  std::vector<uint8_t> doc(in ? static_cast<size_t>(in.tellg()) : 0);
  in.seekg(0);
  if (!in || doc.empty() || !in.read(reinterpret_cast<char*>(doc.data()), static_cast<std::streamsize>(doc.size()))) {
    std::fprintf(stderr, "mibz2-bench-newlines: cannot read %s\n", argv[1]);
    return 1;
  }
  const int passes = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
  uint64_t ours = 0, std_count = 0, memchr_total = 0;
  const double a = gb_per_s(doc, passes, mibz2::index::count_newlines, &ours);
  const double b = gb_per_s(doc, passes, [](const uint8_t* p, size_t n) {
    return static_cast<uint64_t>(std::count(p, p + n, uint8_t{'\n'}));
  }, &std_count);
  const double c = gb_per_s(doc, passes, memchr_count, &memchr_total);
  if (ours != std_count || ours != memchr_total) {
    std::fprintf(stderr, "mibz2-bench-newlines: counts differ: %llu, %llu, %llu\n",
                 static_cast<unsigned long long>(ours), static_cast<unsigned long long>(std_count),
                 static_cast<unsigned long long>(memchr_total));
    return 1;
  }
  std::printf("newlines: %llu in %zu bytes (%d passes of 900 kB pieces)\n",
              static_cast<unsigned long long>(ours / passes), doc.size(), passes);
  std::printf("count_newlines %6.2f GB/s   std::count %6.2f GB/s   memchr loop %6.2f GB/s\n", a, b, c);
  return 0;
}
