// buffer_memory: every large buffer is a mapping of its own, made without changing glibc's policy;
// large buffers freed are reused for the next of about their size, within a bound in bytes;
// ByteBuffer keeps its bytes across the moves growth makes.
#include "base/buffer_memory.h"

#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "base/byte_buffer.h"

namespace mibz2::test {
namespace {

namespace bm = base::buffer_memory;
constexpr size_t kMiB = size_t{1} << 20;

// Whether [p, p + bytes) is mapped (mincore fails with ENOMEM on a page that is not).
bool mapped(const void* p, size_t bytes) {
  std::vector<unsigned char> pages((bytes + 4095) / 4096 + 1);
  return mincore(const_cast<void*>(p), bytes, pages.data()) == 0;
}

// Decoded blocks leave nothing resident behind them when freed, since each is a mapping of its
// own (unmapped when not kept), and the process's malloc is not told to map every large
// allocation for that: the host's policy (a Python interpreter's, with numpy in it) stays its own.
TEST(BufferMemory, ALargeBufferIsAMappingOfItsOwnAndGlibcsPolicyIsLeftAlone) {
  if (!bm::keeps_buffers()) GTEST_SKIP() << "AddressSanitizer build: every buffer is the sanitizer's allocation";
  const long page = sysconf(_SC_PAGESIZE);
  for (size_t size : {bm::kMinKept, 3 * kMiB + 17, 2 * bm::kMaxKept + 5}) {
    SCOPED_TRACE(size);
    const struct mallinfo2 before = mallinfo2();
    size_t cap = 0;
    void* p = bm::allocate(size, &cap);
    const struct mallinfo2 after = mallinfo2();
    // Neither from a heap nor a mapping of glibc's (whose chunks start past a header).
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % page, 0u);
    EXPECT_EQ(after.hblkhd, before.hblkhd) << "mapped by malloc";
    EXPECT_LT(after.uordblks, before.uordblks + size) << "from malloc's heap";
    std::memset(p, 0x33, cap);
    bm::release(p, cap);
    if (size > bm::kMaxKept) {
      EXPECT_FALSE(mapped(p, cap)) << "a huge buffer is unmapped when freed";
    }
  }
  // glibc's own threshold still moves as glibc decides: a 1 MiB malloc after one was freed comes
  // from the heap (a fixed M_MMAP_THRESHOLD, as the programs once set, mapped every one).
  std::free(std::malloc(kMiB));
  const size_t mapped_before = mallinfo2().hblkhd;
  void* q = std::malloc(kMiB);
  EXPECT_LT(mallinfo2().hblkhd, mapped_before + kMiB) << "glibc's mmap threshold is not its default";
  std::free(q);
}

TEST(BufferMemory, ALargeBufferFreedServesTheNextOfAboutItsSize) {
  if (!bm::keeps_buffers()) GTEST_SKIP() << "AddressSanitizer build: buffers are not kept";
  // A size no other test uses, so that the buffer found is this one.
  const size_t size = kMiB + 3 * bm::kGranule + 5;
  size_t cap = 0;
  void* p = bm::allocate(size, &cap);
  EXPECT_GE(cap, size);
  EXPECT_EQ(cap % bm::kGranule, 0u);  // rounded up, so that the next block of about its size fits
  std::memset(p, 0x5A, cap);
  bm::release(p, cap);
  size_t cap2 = 0;
  void* q = bm::allocate(size - 1000, &cap2);
  EXPECT_EQ(q, p);
  EXPECT_EQ(cap2, cap);
  EXPECT_EQ(static_cast<uint8_t*>(q)[cap2 - 1], 0x5A);  // the same memory, already written
  bm::release(q, cap2);
}

TEST(BufferMemory, OfEqualKeptBuffersTheNewestIsHandedOut) {
  if (!bm::keeps_buffers()) GTEST_SKIP() << "AddressSanitizer build: buffers are not kept";
  // The newest was written last, so its bytes are likeliest still in the caches: handing out the
  // oldest made every block of `mibz2 cat -j 2` write into cold memory (8% of its wall time).
  const size_t size = kMiB + 5 * bm::kGranule + 3;  // a size no other test uses
  void* p[3];
  size_t cap[3];
  for (int i = 0; i < 3; ++i) p[i] = bm::allocate(size, &cap[i]);
  for (int i = 0; i < 3; ++i) bm::release(p[i], cap[i]);
  for (int i = 2; i >= 0; --i) {
    size_t c = 0;
    void* q = bm::allocate(size, &c);
    EXPECT_EQ(q, p[i]) << "expected the buffer released " << (2 - i) << " releases before the last";
    p[i] = q;
    cap[i] = c;
  }
  for (int i = 0; i < 3; ++i) bm::release(p[i], cap[i]);
}

TEST(BufferMemory, ABufferFarLargerThanTheRequestIsNotHandedOut) {
  if (!bm::keeps_buffers()) GTEST_SKIP() << "AddressSanitizer build: buffers are not kept";
  size_t big_cap = 0;
  void* big = bm::allocate(6 * kMiB + bm::kGranule, &big_cap);
  bm::release(big, big_cap);
  size_t cap = 0;
  void* small = bm::allocate(kMiB + 7 * bm::kGranule, &cap);
  EXPECT_NE(small, big);
  EXPECT_LT(cap, big_cap);
  bm::release(small, cap);
}

TEST(BufferMemory, KeptMemoryStaysWithinItsBound) {
  if (!bm::keeps_buffers()) GTEST_SKIP() << "AddressSanitizer build: buffers are not kept";
  std::vector<std::pair<void*, size_t>> bufs;
  for (int i = 0; i < 40; ++i) {
    size_t cap = 0;
    void* p = bm::allocate(kMiB, &cap);
    bufs.emplace_back(p, cap);
  }
  for (auto [p, cap] : bufs) bm::release(p, cap);
  EXPECT_LE(bm::kept_bytes(), bm::kKeptBytes);
  EXPECT_GT(bm::kept_bytes(), bm::kKeptBytes / 2);  // they were kept, up to the bound
}

TEST(BufferMemory, SmallAndHugeBuffersAreNotKept) {
  for (size_t size : {size_t{100} << 10, 4 * bm::kMaxKept}) {
    SCOPED_TRACE(size);
    size_t cap = 0;
    void* p = bm::allocate(size, &cap);
    const size_t before = bm::kept_bytes();
    bm::release(p, cap);
    EXPECT_EQ(bm::kept_bytes(), before);
  }
}

TEST(BufferMemory, AByteBufferKeepsItsBytesAsItGrowsAndMoves) {
  base::ByteBuffer b;
  uint32_t x = 1;
  std::vector<uint8_t> expect;
  while (b.size() < 3 * kMiB) {
    uint8_t chunk[777];
    for (uint8_t& c : chunk) c = static_cast<uint8_t>(x = x * 1103515245 + 12345);
    b.append(chunk, sizeof chunk);
    expect.insert(expect.end(), chunk, chunk + sizeof chunk);
  }
  b.reserve_exact(b.size() + 5 * kMiB);
  EXPECT_GE(b.capacity(), b.size() + 5 * kMiB);
  ASSERT_EQ(b.size(), expect.size());
  EXPECT_EQ(std::memcmp(b.data(), expect.data(), expect.size()), 0);
}

// A figure of /proc/self/status in KiB ("VmRSS", "VmHWM"), or 0.
uint64_t status_kib(const std::string& name) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(name + ":", 0) == 0) return std::stoull(line.substr(name.size() + 1));
  return 0;
}

// A block whose size is unknown until decoded (an index build's) grows piece by piece as RLE1
// writes it, up to 46 MB for a block of runs. Growth that allocated a new buffer and copied the
// old one into it held both at once: 37 MB and 56 MB for such a block, 93 MB a decoder thread
// against the memory rule's 64 MiB (man mibz2fs, MEMORY).
TEST(BufferMemory, GrowingAHugeBufferNeverHoldsTwoCopiesOfIt) {
  if (!bm::keeps_buffers()) GTEST_SKIP() << "AddressSanitizer build: memory figures are its allocator's";
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5" << std::flush;  // the peak resident size (VmHWM) starts again from here
  if (!clear) GTEST_SKIP() << "/proc/self/clear_refs cannot reset the peak resident size here";
  const uint64_t before = status_kib("VmRSS");
  ASSERT_GT(before, 0u);
  ASSERT_LE(status_kib("VmHWM"), before + 1024);
  constexpr size_t kBlock = 46'000'000;
  uint64_t peak = 0;
  size_t kept = 0;
  {
    base::ByteBuffer b;
    std::vector<uint8_t> piece(64 << 10, 0x41);
    while (b.size() < kBlock) b.append(piece.data(), piece.size());
    peak = status_kib("VmHWM");
    kept = bm::kept_bytes();
    EXPECT_EQ(b.data()[kBlock - 1], 0x41);
  }
  // The block, the smaller buffers it outgrew (kept for the next blocks, within kKeptBytes), and a
  // few MiB for what else the process does meanwhile.
  EXPECT_LE((peak - before) << 10, kBlock + kept + 4 * kMiB)
      << "peak " << peak << " KiB, " << before << " KiB before, " << (kept >> 10) << " KiB kept";
}

// Threads allocating and freeing blocks side by side, as decoder workers and a cache do: every
// buffer is whole and its own while held, and the bound holds at the end.
TEST(BufferMemoryConcurrent, ThreadsShareTheKeptBuffersSafely) {
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &bad] {
      uint32_t x = 77 + static_cast<uint32_t>(t);
      for (int i = 0; i < 400; ++i) {
        x = x * 1664525 + 1013904223;
        const size_t size = bm::kMinKept + (x >> 8) % (2 * kMiB);
        size_t cap = 0;
        auto* p = static_cast<uint8_t*>(bm::allocate(size, &cap));
        const uint8_t mark = static_cast<uint8_t>(t * 31 + i);
        std::memset(p, mark, size);
        std::this_thread::yield();
        if (p[0] != mark || p[size / 2] != mark || p[size - 1] != mark) ++bad;
        bm::release(p, cap);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_LE(bm::kept_bytes(), bm::kKeptBytes);
}

}  // namespace
}  // namespace mibz2::test
