// fork() while the parent decodes: the child process has only the thread that forked, and every
// lock another thread held at that moment would stay held in it for ever. A child that makes an
// engine of its own and reads (multiprocessing's and Dask's fork start method do exactly this) must
// never find one of the process's locks held: the block allocator's free list, the log sink, the
// CPU dispatch.
#include <gtest/gtest.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "base/byte_buffer.h"
#include "base/log_sink.h"
#include "engine_test_support.h"
#include "spdlog/sinks/null_sink.h"

namespace mibz2::test {
namespace {

using engine::Engine;
using engine::Reader;

// Blocks of level 9 decode to about 900 kB: buffers the allocator keeps on its free list.
const Source& large_blocks_source() {
  static const TempDir* dir = new TempDir;
  static const Source* s = new Source(make_source(*dir, "large.bz2", text_bytes(6000000, 91), 9));
  return *s;
}

// What a forked child does: a new engine, a reader, its first block read and compared (the
// decoders allocate, log, and dispatch). Runs without gtest (a child must not report through the
// parent's test state); returns whether every byte was right.
bool child_reads(const Source& s) {
  Engine e(options(2, 8 << 20));
  std::shared_ptr<Reader> r = open_reader(e, 1, s);
  if (!r) return false;
  std::vector<uint8_t> buf(256 << 10);
  for (uint64_t off = 0; off < s.block_start(1); off += buf.size()) {
    const ssize_t n = r->read(off, buf.size(), buf.data());
    const size_t want = std::min<uint64_t>(buf.size(), s.plain.size() - off);
    if (n != static_cast<ssize_t>(want) || std::memcmp(buf.data(), s.plain.data() + off, want) != 0) return false;
    spdlog::info("child read {} bytes at {}", n, off);  // through the process's log sink
  }
  return true;
}

// How a child ended: 0 when it read everything right, 1 when it read wrong, -1 when it did not end
// within `limit` (killed then: it waits on a lock that nobody in it will ever let go).
int wait_child(pid_t pid, std::chrono::seconds limit) {
  int status = 0;
  const bool ended = eventually([&] { return waitpid(pid, &status, WNOHANG) == pid; }, limit);
  if (!ended) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

TEST(ForkConcurrent, AChildForkedWhileTheParentDecodesMakesItsOwnEngineAndReads) {
  // The sanitizers' runtimes keep locks of their own that a fork can catch held, and this is a test
  // of ours: ThreadSanitizer does not run threads after a multi-threaded fork, and the allocator of
  // GCC 12's AddressSanitizer takes its quarantine's lock in every free with no fork handler (a
  // child hung in 1 of 50 forks, waiting in __asan::Quarantine::Drain for a lock a parent thread
  // held in free). The Release build runs it.
  if (base::kThreadSanitizer || base::kAddressSanitizer)
    GTEST_SKIP() << "the sanitizer's runtime has locks a fork can catch held (its allocator's quarantine)";
  const Source& s = large_blocks_source();
  ASSERT_GE(s.blocks(), 4u);
  // The process logs as the programs do (an escaping logger over a thread-safe sink: one that
  // throws the text away, but takes its lock), at a level that writes the children's messages: a
  // sink's lock is one more a child reaches.
  const std::shared_ptr<spdlog::logger> before = spdlog::default_logger();
  const spdlog::level::level_enum before_level = spdlog::get_level();
  spdlog::set_default_logger(
      base::escaping_logger("fork-test", std::make_shared<spdlog::sinks::null_sink_mt>()));
  spdlog::set_level(spdlog::level::info);

  // The parent's load: readers that miss a small cache all the time, so that blocks are decoded,
  // allocated and freed (and messages logged) on several threads at every moment a fork can come.
  Engine parent(options(1, 2 << 20, false));
  std::atomic<bool> stop{false};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t)
    readers.emplace_back([&, t] {
      std::shared_ptr<Reader> r = open_reader(parent, 10 + t, s);
      std::vector<uint8_t> buf(64 << 10);
      Rng rng(700 + t);
      while (r && !stop.load()) {
        r->read(rng.next() % s.plain.size(), buf.size(), buf.data());
        spdlog::info("parent reader {} read", t);
      }
    });

  // And a thread that does nothing but take a block buffer, give it back and log: the allocator's
  // and the sink's locks are held at a good share of the moments a fork comes, as they are now and
  // then under real load.
  readers.emplace_back([&] {
    while (!stop.load()) {
      base::ByteBuffer b;
      b.resize_uninitialized(1 << 20);
      spdlog::info("a message among many");
    }
  });

  const int kForks = 200;
  int hung = 0, wrong = 0, forks = 0;
  for (; forks < kForks && hung == 0; ++forks) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0) << std::strerror(errno);
    if (pid == 0) _exit(child_reads(s) ? 0 : 1);
    const int outcome = wait_child(pid, std::chrono::seconds(30));
    hung += outcome < 0;
    wrong += outcome > 0;
  }
  stop = true;
  for (std::thread& t : readers) t.join();
  spdlog::set_default_logger(before);
  spdlog::set_level(before_level);
  EXPECT_EQ(hung, 0) << "a child hung (fork " << forks << " of " << kForks << ")";
  EXPECT_EQ(wrong, 0) << "of " << forks << " children";
}

}  // namespace
}  // namespace mibz2::test
