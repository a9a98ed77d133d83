// mibz2 cat against what the world does to it: a source truncated while it is read (an error with
// a message, never a signal), and blocks that expand to 45 MB each read into a slow pipe (memory
// bounded in bytes, whatever -j is).
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "test_support.h"

#ifndef MIBZ2_BINARY
#error "MIBZ2_BINARY must name the mibz2 program"
#endif

namespace mibz2::test {
namespace {

struct Exited {
  bool signalled = false;
  int code = -1;          // exit status, or the signal
  long max_rss_kib = 0;   // the child's own peak resident set (wait4's rusage)
  uint64_t out_bytes = 0;
  std::string err;
};

// Runs `args` (argv[0] first) with standard output into a pipe that `drain` reads (it gets the
// pipe's read end and returns the bytes it read), standard error into a file, and the index cache
// under `dir`.
Exited run_draining(const std::vector<std::string>& args, const TempDir& dir,
                    const std::function<uint64_t(int fd)>& drain) {
  const std::string err_path = dir.file("stderr.txt").string();
  const std::string cache = "XDG_CACHE_HOME=" + dir.file("cache").string();
  int p[2];
  EXPECT_EQ(pipe2(p, O_CLOEXEC), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(p[1], STDOUT_FILENO);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(err, STDERR_FILENO);
    putenv(const_cast<char*>(cache.c_str()));
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(p[1]);
  Exited r;
  r.out_bytes = drain(p[0]);
  close(p[0]);
  int st = 0;
  struct rusage ru {};
  while (wait4(pid, &st, 0, &ru) < 0 && errno == EINTR) {
  }
  r.signalled = WIFSIGNALED(st);
  r.code = r.signalled ? WTERMSIG(st) : WEXITSTATUS(st);
  r.max_rss_kib = ru.ru_maxrss;
  const Bytes err = read_file(err_path);
  r.err.assign(err.begin(), err.end());
  return r;
}

uint64_t read_all(int fd) {
  std::vector<char> buf(1 << 20);
  uint64_t total = 0;
  for (;;) {
    const ssize_t n = read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return total;
    total += static_cast<uint64_t>(n);
  }
}

// A file of many streams that is far larger than anything cat reads ahead (96 copies of a 1 MiB
// random stream: about 96 MiB, three times the 32 MiB that -j 2 may hold decoded for a consumer
// that does not read), truncated to 2 MiB once cat has written its first bytes and waits on the
// full pipe: cat then meets the end of the file where its size said there was more. (With 32
// copies, all of it fitted in -j 2's budget: only decode speed kept cat from reading every block
// within the 200 ms, and it took 0.55 s here.)
TEST(CatFaults, ASourceTruncatedWhileCatReadsItIsAnErrorNeverASignal) {
  constexpr int kCopies = 96;
  const Bytes one = libbz2_compress(as_span(random_bytes(1 << 20, 7)), 9);
  Bytes many;
  for (int i = 0; i < kCopies; ++i) many.insert(many.end(), one.begin(), one.end());
  for (const std::string threads : {"1", "2"}) {
    SCOPED_TRACE("-j " + threads);
    TempDir dir;
    const auto path = dir.write("big.bz2", as_span(many));
    const Exited r = run_draining({MIBZ2_BINARY, "cat", "-j", threads, path.string()}, dir, [&](int fd) {
      std::vector<char> buf(64 << 10);
      uint64_t got = 0;
      while (got < buf.size()) {  // cat is running and has written: it holds the file open
        const ssize_t n = read(fd, buf.data(), buf.size() - got);
        if (n <= 0) break;
        got += static_cast<uint64_t>(n);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let it fill the pipe and wait
      EXPECT_EQ(truncate(path.c_str(), 2 << 20), 0);
      return got + read_all(fd);
    });
    EXPECT_FALSE(r.signalled) << "killed by signal " << r.code << " (" << strsignal(r.code) << ")";
    EXPECT_TRUE(r.code == 1 || r.code == 2) << "exit " << r.code << ": " << r.err;
    EXPECT_NE(r.err.find("mibz2 cat: " + path.string() + ": "), std::string::npos) << r.err;
    EXPECT_LT(r.out_bytes, uint64_t{kCopies} << 20) << "all of it, from a file cut to 2 MiB";
  }
}

// 30 streams of 45 MB of one byte (about 50 bytes of bzip2 each, one block expanding to 45 MB),
// read by a consumer that first waits 3 s and then drains: cat decodes ahead as far as it is
// allowed to. The bound is the documented rule for a stream (src/engine/catalog.cc): a base for
// the program, plus per thread the stream budget (16 MiB), the largest block (46 MB), a decoder's
// scratch (6 MB) and its read buffer (3 MiB): 64 MiB + threads x 72 MiB. Before the budget was in
// bytes the queues held up to 8 blocks a thread (-j 2: 455 MB, -j 8: over 1.3 GB).
TEST(CatFaults, MemoryOfCatOnExpandingBlocksIsBoundedInBytes) {
  if (kSanitized) GTEST_SKIP() << "peak RSS under a sanitizer is the sanitizer's (freed memory kept in quarantine)";
  constexpr size_t kBlock = 45'000'000;
  const Bytes one = libbz2_compress(as_span(repeated_byte(kBlock, 'a')), 9);
  Bytes many;
  for (int i = 0; i < 30; ++i) many.insert(many.end(), one.begin(), one.end());
  TempDir dir;
  const auto path = dir.write("runs.bz2", as_span(many));
  for (const int threads : {2, 8}) {
    SCOPED_TRACE("-j " + std::to_string(threads));
    const Exited r = run_draining({MIBZ2_BINARY, "cat", "-j", std::to_string(threads), path.string()}, dir,
                                  [](int fd) {
                                    std::this_thread::sleep_for(std::chrono::seconds(3));
                                    return read_all(fd);
                                  });
    ASSERT_FALSE(r.signalled) << strsignal(r.code);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out_bytes, uint64_t{30} * kBlock);
    const long bound_kib = (64L + threads * 72L) * 1024;
    EXPECT_LE(r.max_rss_kib, bound_kib) << "peak RSS " << r.max_rss_kib / 1024 << " MiB";
    std::printf("mibz2 cat -j %d: peak RSS %ld MiB (bound %ld MiB)\n", threads, r.max_rss_kib / 1024,
                bound_kib / 1024);
    std::filesystem::remove_all(dir.file("cache"));  // the next run streams again, with no index
  }
}

}  // namespace
}  // namespace mibz2::test
