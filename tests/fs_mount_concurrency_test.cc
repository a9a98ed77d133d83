// Many readers through a real mount at once: the kernel is let hand them all over to
// the daemon, a block many of them want is decoded once, and every reader gets the right bytes
// when the reply is written straight from the cached blocks.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "io/fd_io.h"
#include "mount_harness.h"

namespace mibz2::test {
namespace {

// The engine counter `name` from the mount root's user.mibz2fs.stats, or -1.
long long counter(const stdfs::path& mnt, const std::string& name) {
  const Xattr x = get_xattr(mnt, "user.mibz2fs.stats");
  const size_t at = x.value.find(name + "=");
  if (x.error || at == std::string::npos) return -1;
  return std::stoll(x.value.substr(at + name.size() + 1));
}

// O_DIRECT reads and asynchronous readers are the kernel's background requests: beyond the
// connection's max_background in flight, the kernel makes the next reader wait on its own queue
// before the daemon even sees the request, and each read then costs two sleeps instead of one.
// The daemon must ask for room for many readers (it used to ask for 32). The kernel shows what the
// connection holds in fusectl, under the mount's device number.
TEST_F(FsMountTest, KernelHandsManyReadsToTheDaemonAtOnce) {
  MOUNT_OR_RETURN(mount_tree());
  struct stat st;
  ASSERT_EQ(stat(mnt_.c_str(), &st), 0) << std::strerror(errno);
  const stdfs::path connection = stdfs::path("/sys/fs/fuse/connections") / std::to_string(minor(st.st_dev));
  if (!stdfs::exists(connection)) GTEST_SKIP() << connection << " is missing (no fusectl mounted)";
  const std::string value = slurp(connection / "max_background");
  ASSERT_FALSE(value.empty()) << "cannot read " << connection / "max_background";
  EXPECT_GE(std::stoul(value), 256u) << "max_background of the mount's FUSE connection";
}

// 32 readers of one cold block at once, with O_DIRECT so that every read reaches the daemon: the
// block is decoded once, and each reader gets its own bytes (replies are written from the cached
// block, which must stay alive until each reply is out). One block, so no read-ahead adds decodes.
TEST_F(FsMountTest, ManyReadersOfOneColdBlockDecodeItOnce) {
  const stdfs::path src = new_source();
  const Bytes content = random_bytes(600000, 15);  // incompressible: one block at level 9
  write_file(src / "one.bin.bz2", as_span(libbz2_compress(as_span(content), 9)));
  MOUNT_OR_RETURN(mount(src));
  const stdfs::path shown = mnt_ / "one.bin";
  ASSERT_EQ(get_xattr(shown, "user.mibz2fs.blocks").value, "1");
  const long long decodes_before = counter(mnt_, "decodes");
  ASSERT_GE(decodes_before, 0);

  constexpr int kReaders = 32;
  std::atomic<int> ready{0};
  std::vector<std::string> failures(kReaders);
  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&, r] {
      int fd = open(shown.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
      if (fd < 0) fd = open(shown.c_str(), O_RDONLY | O_CLOEXEC);
      ready.fetch_add(1);
      while (ready.load() < kReaders) std::this_thread::yield();  // all ask at once
      if (fd < 0) {
        failures[r] = std::string("open: ") + std::strerror(errno);
        return;
      }
      alignas(4096) static thread_local uint8_t buf[8192];
      const uint64_t off = static_cast<uint64_t>(r) * 16384;
      const ssize_t n = io::pread_full(fd, buf, sizeof buf, off);
      if (n != static_cast<ssize_t>(sizeof buf)) failures[r] = "read returned " + std::to_string(n);
      else if (std::memcmp(buf, content.data() + off, sizeof buf) != 0) failures[r] = "wrong bytes";
      close(fd);
    });
  }
  for (std::thread& t : readers) t.join();
  for (int r = 0; r < kReaders; ++r) EXPECT_EQ(failures[r], "") << "reader " << r;
  EXPECT_EQ(counter(mnt_, "decodes") - decodes_before, 1) << "decodes of the one block for " << kReaders << " readers";
}

}  // namespace
}  // namespace mibz2::test
