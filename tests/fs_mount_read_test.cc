// mibz2fs mounted for real, what it shows: the main tree's listing, names, sizes, modes and symlink
// targets, every file's content, extended attributes, statfs, EROFS for every write, real programs
// reading mounted files, and random reads from several processes at once.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "io/fd_io.h"
#include "mount_harness.h"

namespace mibz2::test {
namespace {

TEST_F(FsMountTest, ListingNamesTypesModesSizesAndSymlinks) {
  MOUNT_OR_RETURN(mount_tree());
  // Every path under the mount, walked with readdir (symlinks not followed).
  std::set<std::string> seen;
  for (auto it = stdfs::recursive_directory_iterator(mnt_); it != stdfs::recursive_directory_iterator(); ++it)
    seen.insert(it->path().lexically_relative(mnt_).string());
  std::set<std::string> expected;
  for (const auto& [rel, s] : tree_->shown()) expected.insert(rel);
  EXPECT_EQ(seen, expected);

  for (const auto& [rel, s] : tree_->shown()) {
    SCOPED_TRACE(rel);
    const stdfs::path p = mnt_ / rel;
    struct stat st;
    ASSERT_EQ(lstat(p.c_str(), &st), 0) << std::strerror(errno);
    EXPECT_EQ(st.st_mode & 07777, s.mode) << std::oct << (st.st_mode & 07777);
    struct stat src;
    ASSERT_EQ(lstat(s.source.c_str(), &src), 0);
    EXPECT_EQ(st.st_uid, src.st_uid);
    EXPECT_EQ(st.st_gid, src.st_gid);
    EXPECT_EQ(st.st_mtim.tv_sec, src.st_mtim.tv_sec);
    switch (s.kind) {
      case Shown::kDir: EXPECT_TRUE(S_ISDIR(st.st_mode)); break;
      case Shown::kFile:
        EXPECT_TRUE(S_ISREG(st.st_mode));
        EXPECT_EQ(static_cast<uint64_t>(st.st_size), s.content.size());
        break;
      case Shown::kSymlink: {
        EXPECT_TRUE(S_ISLNK(st.st_mode));
        char buf[4096];
        const ssize_t n = readlink(p.c_str(), buf, sizeof buf);
        ASSERT_GE(n, 0) << std::strerror(errno);
        EXPECT_EQ(std::string(buf, static_cast<size_t>(n)), s.target);
        EXPECT_EQ(static_cast<uint64_t>(st.st_size), s.target.size());
        break;
      }
    }
  }
  // Inode numbers are stable: the same on a second look.
  struct stat a, b;
  ASSERT_EQ(stat((mnt_ / "multi.bin").c_str(), &a), 0);
  ASSERT_EQ(stat((mnt_ / "multi.bin").c_str(), &b), 0);
  EXPECT_EQ(a.st_ino, b.st_ino);
  // Following symlinks through the mount.
  EXPECT_EQ(text_of(read_all(mnt_ / "link-plain").data), text_of(tree_->at("plain.txt").content));
  EXPECT_TRUE(stdfs::is_directory(mnt_ / "link-dir"));
  EXPECT_EQ(stdfs::exists(mnt_ / "dangling"), false);
  // Names that are not there.
  struct stat st;
  EXPECT_EQ(lstat((mnt_ / "single.txt.bz2").c_str(), &st), -1);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_EQ(lstat((mnt_ / "dir/nope").c_str(), &st), -1);
  EXPECT_EQ(errno, ENOENT);
}

TEST_F(FsMountTest, ReadingEveryFileGivesItsContent) {
  MOUNT_OR_RETURN(mount_tree());
  for (const auto& [rel, s] : tree_->shown()) {
    if (s.kind != Shown::kFile) continue;
    SCOPED_TRACE(rel);
    const ReadAll r = read_all(mnt_ / rel);
    ASSERT_EQ(r.error, 0) << std::strerror(r.error);
    EXPECT_TRUE(same_bytes(r.data, s.content));
  }
  // And again, now partly from caches.
  for (const char* rel : {"multi.bin", "multistream.txt", "single.txt"}) {
    SCOPED_TRACE(rel);
    const ReadAll r = read_all(mnt_ / rel);
    ASSERT_EQ(r.error, 0);
    EXPECT_TRUE(same_bytes(r.data, tree_->at(rel).content));
  }
}

TEST_F(FsMountTest, ExtendedAttributesOfDecompressedFiles) {
  MOUNT_OR_RETURN(mount_tree());
  for (const auto& [rel, s] : tree_->shown()) {
    if (s.kind != Shown::kFile) continue;
    SCOPED_TRACE(rel);
    const stdfs::path p = mnt_ / rel;
    if (!s.decompressed) {
      const Xattr x = get_xattr(p, kXattrs[0]);
      EXPECT_EQ(x.error, ENODATA) << "a file shown as it is has no mibz2fs attributes: " << x.value;
      continue;
    }
    EXPECT_EQ(get_xattr(p, kXattrs[0]).value, std::to_string(stdfs::file_size(s.source)));
    EXPECT_EQ(get_xattr(p, kXattrs[1]).value, std::to_string(s.blocks));
    EXPECT_EQ(get_xattr(p, kXattrs[2]).value, "ready");
    EXPECT_EQ(get_xattr(p, kXattrs[3]).value, "0");
    const Xattr damage = get_xattr(p, kXattrs[4]);
    EXPECT_EQ(damage.error, 0);
    EXPECT_EQ(damage.value, "") << "an intact file lists no damage";
    EXPECT_EQ(get_xattr(p, "user.mibz2fs.nonsense").error, ENODATA);
    // Read by name only: none is listed, so that `cp -a` and `rsync -X` do not copy them.
    char names[1024];
    EXPECT_EQ(llistxattr(p.c_str(), names, sizeof names), 0) << std::strerror(errno);
    EXPECT_EQ(llistxattr(p.c_str(), nullptr, 0), 0) << std::strerror(errno);
    // A buffer too small is ERANGE; size 0 asks for the size.
    char tiny[1];
    EXPECT_EQ(lgetxattr(p.c_str(), kXattrs[2], tiny, sizeof tiny), -1);
    EXPECT_EQ(errno, ERANGE);
    EXPECT_EQ(lgetxattr(p.c_str(), kXattrs[2], nullptr, 0), 5);
  }
  EXPECT_EQ(get_xattr(mnt_ / "dir", kXattrs[2]).error, ENODATA);
}

// The engine's counters are on the root directory: after reading a file they count what happened.
TEST_F(FsMountTest, RootCarriesTheEngineCounters) {
  MOUNT_OR_RETURN(mount_tree());
  auto counter = [&](const std::string& name) -> long long {
    const Xattr x = get_xattr(mnt_, "user.mibz2fs.stats");
    EXPECT_EQ(x.error, 0);
    const size_t at = x.value.find(name + "=");
    if (at == std::string::npos) return -1;
    return std::stoll(x.value.substr(at + name.size() + 1));
  };
  uint64_t expected = 0;
  for (const auto& [rel, s] : tree_->shown()) {
    if (s.kind != Shown::kFile || !s.decompressed) continue;
    const ReadAll r = read_all(mnt_ / rel);
    ASSERT_EQ(r.error, 0) << rel;
    expected += r.data.size();
  }
  EXPECT_GE(counter("bytes_decoded"), static_cast<long long>(expected));
  EXPECT_GT(counter("decodes"), 0);
  EXPECT_GE(counter("bytes_read"), static_cast<long long>(expected));
  EXPECT_EQ(counter("decode_errors"), 0);
  EXPECT_EQ(get_xattr(mnt_ / "dir", "user.mibz2fs.stats").error, ENODATA);
}

// df shows the decompressed total of the files whose index is ready and nothing free (as
// squashfuse does), not the source's disk; du counts a decompressed file's decompressed bytes.
TEST_F(FsMountTest, StatfsReportsTheDecompressedTotalAndNothingFree) {
  MOUNT_OR_RETURN(mount_tree());
  uint64_t total = 0;
  for (const auto& [rel, s] : tree_->shown()) {
    if (s.kind != Shown::kFile || !s.decompressed) continue;
    struct stat st;
    ASSERT_EQ(stat((mnt_ / rel).c_str(), &st), 0) << rel << ": " << std::strerror(errno);  // waits for its index
    EXPECT_EQ(st.st_blocks, (st.st_size + 511) / 512) << rel;
    total += static_cast<uint64_t>(st.st_size);
  }
  ASSERT_GT(total, 0u);
  struct statvfs sv;
  ASSERT_EQ(statvfs(mnt_.c_str(), &sv), 0) << std::strerror(errno);
  EXPECT_TRUE(sv.f_flag & ST_RDONLY);
  ASSERT_GT(sv.f_frsize, 0u);
  EXPECT_EQ(sv.f_blocks, (total + sv.f_frsize - 1) / sv.f_frsize) << "decompressed total " << total << " bytes";
  EXPECT_EQ(sv.f_bfree, 0u);
  EXPECT_EQ(sv.f_bavail, 0u);
  EXPECT_EQ(sv.f_ffree, 0u);
  EXPECT_GT(sv.f_files, 0u);
  EXPECT_GT(sv.f_namemax, 0u);
}

TEST_F(FsMountTest, EveryWriteFailsWithErofs) {
  MOUNT_OR_RETURN(mount_tree());
  const std::string file = (mnt_ / "single.txt").string();
  const std::string plain = (mnt_ / "plain.txt").string();
  const std::string fresh = (mnt_ / "new-file").string();
  struct Attempt {
    const char* what;
    std::function<int()> run;  // -1 with errno set on failure
  };
  auto open_close = [](const std::string& p, int flags) {
    const int fd = open(p.c_str(), flags | O_CLOEXEC, 0644);
    if (fd >= 0) close(fd);
    return fd < 0 ? -1 : 0;
  };
  const std::vector<Attempt> attempts = {
      {"open O_WRONLY", [&] { return open_close(file, O_WRONLY); }},
      {"open O_RDWR (plain)", [&] { return open_close(plain, O_RDWR); }},
      {"open O_RDONLY|O_TRUNC", [&] { return open_close(file, O_RDONLY | O_TRUNC); }},
      {"open O_WRONLY|O_APPEND", [&] { return open_close(plain, O_WRONLY | O_APPEND); }},
      {"open O_CREAT", [&] { return open_close(fresh, O_WRONLY | O_CREAT); }},
      {"creat over an existing name", [&] { return open_close(file, O_WRONLY | O_CREAT | O_TRUNC); }},
      {"mkdir", [&] { return mkdir((mnt_ / "newdir").c_str(), 0755); }},
      {"rmdir", [&] { return rmdir((mnt_ / "empty-dir").c_str()); }},
      {"unlink", [&] { return unlink(file.c_str()); }},
      {"rename", [&] { return rename(file.c_str(), (mnt_ / "renamed").c_str()); }},
      {"link", [&] { return link(plain.c_str(), (mnt_ / "hard").c_str()); }},
      {"symlink", [&] { return symlink("x", (mnt_ / "sym").c_str()); }},
      {"truncate", [&] { return truncate(file.c_str(), 0); }},
      {"truncate (plain)", [&] { return truncate(plain.c_str(), 1); }},
      {"chmod", [&] { return chmod(file.c_str(), 0600); }},
      {"chown", [&] { return chown(file.c_str(), 1, 1); }},
      {"utimes", [&] { return utimensat(AT_FDCWD, file.c_str(), nullptr, 0); }},
      {"setxattr", [&] { return setxattr(file.c_str(), "user.test", "x", 1, 0); }},
      {"setxattr mibz2fs name", [&] { return setxattr(file.c_str(), kXattrs[2], "x", 1, 0); }},
      {"removexattr", [&] { return removexattr(file.c_str(), kXattrs[2]); }},
      {"mknod fifo", [&] { return mkfifo((mnt_ / "fifo").c_str(), 0644); }},
  };
  for (const Attempt& a : attempts) {
    errno = 0;
    const int rc = a.run();
    EXPECT_EQ(rc, -1) << a.what << " succeeded";
    EXPECT_EQ(errno, EROFS) << a.what << ": " << std::strerror(errno);
  }
  // Nothing changed in the mount or in the source.
  EXPECT_FALSE(stdfs::exists(mnt_ / "new-file"));
  EXPECT_FALSE(stdfs::exists(tree_->src() / "new-file"));
  EXPECT_TRUE(same_bytes(read_all(file).data, tree_->at("single.txt").content));
  EXPECT_TRUE(same_bytes(read_file(tree_->src() / "plain.txt"), tree_->at("plain.txt").content));
}

// Real programs on a mounted file give what they give on the same content as a plain file.
TEST_F(FsMountTest, ProgramsReadLikeFromAPlainFile) {
  MOUNT_OR_RETURN(mount_tree());
  const std::vector<std::string> commands = {
      "grep -c -a the",         "grep -c -a -E '[Hh]uffman|bzip2'", "tail -c 10000",  "tail -c 1",
      "head -c 123457",         "head -c 1",                        "wc -c",          "md5sum",
      "dd bs=4096 skip=37 count=20 status=none",                   "dd bs=65536 skip=3 status=none",
      "dd bs=1 skip=100003 count=3000 status=none",                 "tail -n 3",
  };
  for (const char* rel : {"multi.bin", "single.txt", "multistream.txt", "name with spaces.txt", "plain.txt",
                          "dir/nested.log"}) {
    const Shown& s = tree_->at(rel);
    for (const std::string& c : commands) {
      SCOPED_TRACE(std::string(rel) + ": " + c);
      // Input by name (programs seek and stat) and by standard input (where the command allows).
      const bool stdin_only = c.rfind("dd ", 0) == 0;
      const std::string on_mount = stdin_only ? c + " if=" + shell_quote((mnt_ / rel).string())
                                              : c + " " + shell_quote((mnt_ / rel).string());
      const std::string on_plain = stdin_only ? c + " if=" + shell_quote(s.original.string())
                                              : c + " " + shell_quote(s.original.string());
      const CommandResult m = run_command(on_mount + (c == "md5sum" || c == "wc -c" ? " | cut -d' ' -f1" : ""));
      const CommandResult p = run_command(on_plain + (c == "md5sum" || c == "wc -c" ? " | cut -d' ' -f1" : ""));
      EXPECT_EQ(m.status, p.status);
      EXPECT_TRUE(same_bytes(m.out, p.out));
      if (!stdin_only) {
        EXPECT_FALSE(p.out.empty());
      }
    }
  }
  // An archive through the mount lists and extracts like the original.
  for (const char* rel : {"archive.tar", "backup.tar"}) {
    SCOPED_TRACE(rel);
    const CommandResult m = run_command("tar -tvf " + shell_quote((mnt_ / rel).string()));
    const CommandResult p = run_command("tar -tvf " + shell_quote(tree_->at(rel).original.string()));
    EXPECT_EQ(m.status, 0);
    EXPECT_TRUE(same_bytes(m.out, p.out));
  }
  const CommandResult x = run_command("tar -xOf " + shell_quote((mnt_ / "archive.tar").string()) + " ./doc/readme.txt");
  EXPECT_EQ(x.status, 0);
  EXPECT_TRUE(same_bytes(x.out, text_bytes(30000, 30)));
  // cmp over the whole file, through a pipe.
  EXPECT_EQ(run_command("cat " + shell_quote((mnt_ / kUtf8Name).string()) + " | cmp -s - " +
                        shell_quote(tree_->at(kUtf8Name).original.string()))
                .status,
            0);
}

// Several processes at once, each with thousands of random preads over every file (half of them
// with O_DIRECT so that their reads reach mibz2fs instead of the page cache).
TEST_F(FsMountTest, ConcurrentRandomPreadsFromSeveralProcesses) {
  // A cache smaller than multi.bin, so that blocks are evicted and decoded again meanwhile.
  MOUNT_OR_RETURN(mount_tree({"-o", "cache_size=2M"}));
  struct Target {
    std::string path;
    const Bytes* content;
  };
  std::vector<Target> targets;
  for (const auto& [rel, s] : tree_->shown())
    if (s.kind == Shown::kFile) targets.push_back({(mnt_ / rel).string(), &s.content});
  // The big ones more often.
  for (int i = 0; i < 6; ++i) {
    targets.push_back({(mnt_ / "multi.bin").string(), &tree_->at("multi.bin").content});
    targets.push_back({(mnt_ / "multistream.txt").string(), &tree_->at("multistream.txt").content});
  }
  constexpr int kChildren = 4;
  constexpr int kReads = 1500;
  std::vector<pid_t> children;
  std::fflush(nullptr);
  for (int c = 0; c < kChildren; ++c) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      const bool direct = c % 2 == 1;
      std::vector<int> fds;
      for (const Target& t : targets) {
        int fd = open(t.path.c_str(), O_RDONLY | O_CLOEXEC | (direct ? O_DIRECT : 0));
        if (fd < 0 && direct) fd = open(t.path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
          std::fprintf(stderr, "child %d: open %s: %s\n", c, t.path.c_str(), std::strerror(errno));
          _exit(2);
        }
        fds.push_back(fd);
      }
      Rng rng(1000 + static_cast<uint64_t>(c));
      std::vector<uint8_t> buf(1 << 20);
      for (int i = 0; i < kReads; ++i) {
        const size_t k = rng.below(static_cast<uint32_t>(targets.size()));
        const Bytes& want = *targets[k].content;
        const uint64_t off = rng.below(static_cast<uint32_t>(want.size() + 5000));
        size_t len;
        switch (rng.below(4)) {
          case 0: len = 1 + rng.below(64); break;
          case 1: len = 4096; break;
          case 2: len = 1 + rng.below(200000); break;
          default: len = 1 + rng.below(1 << 20); break;
        }
        const ssize_t n = io::pread_full(fds[k], buf.data(), len, off);
        const size_t expect = off >= want.size() ? 0 : std::min<size_t>(len, want.size() - off);
        if (n < 0 || static_cast<size_t>(n) != expect ||
            (expect && std::memcmp(buf.data(), want.data() + off, expect) != 0)) {
          std::fprintf(stderr, "child %d read %d: %s at %llu length %zu: got %zd (%s), want %zu bytes%s\n", c, i,
                       targets[k].path.c_str(), static_cast<unsigned long long>(off), len, n,
                       n < 0 ? std::strerror(static_cast<int>(-n)) : "ok", expect,
                       n == static_cast<ssize_t>(expect) ? " (content differs)" : "");
          _exit(1);
        }
      }
      for (int fd : fds) close(fd);
      _exit(0);
    }
    children.push_back(pid);
  }
  const auto t0 = Clock::now();
  for (size_t c = 0; c < children.size(); ++c) {
    int st = 0;
    pid_t got = 0;
    while ((got = waitpid(children[c], &st, WNOHANG)) == 0 && seconds_since(t0) < 240) sleep_ms(10);
    if (got == 0) {
      kill(children[c], SIGKILL);
      waitpid(children[c], &st, 0);
      ADD_FAILURE() << "reader " << c << " did not finish in 240 s";
      continue;
    }
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "reader " << c << ": " << describe_status(st);
  }
  EXPECT_TRUE(mounts_.back()->running()) << "mibz2fs ended during the reads";
  if (std::getenv("MIBZ2_FS_TEST_VERBOSE")) {
    mounts_.back()->stop();
    std::fprintf(stderr, "%s", slurp(mounts_.back()->log()).c_str());
  }
}


// A sequential reader reaches mibz2fs in requests as large as the connection allows (1 MiB), not
// in the kernel's default read-ahead of 128 KiB, which FUSE_INIT's max_readahead alone cannot raise
// (the kernel keeps the smaller of the two): the mount's read-ahead is set to it, and 8 MiB read
// through the mount cost the engine a dozen reads or so. At 128 KiB they were 64 or more, and the
// setting read 128.
TEST_F(FsMountTest, SequentialReadsReachTheMountInMegabyteRequests) {
  if (geteuid() != 0) GTEST_SKIP() << "only root may set a mount's read-ahead";
  const stdfs::path src = new_source();
  constexpr size_t kBytes = size_t{8} << 20;
  const Bytes content = text_bytes(kBytes, 77);
  write_file(src / "big.txt.bz2", as_span(libbz2_compress(as_span(content), 9)));
  MOUNT_OR_RETURN(mount(src));
  const stdfs::path shown = mnt_ / "big.txt";
  struct stat st;
  ASSERT_EQ(stat(shown.c_str(), &st), 0) << std::strerror(errno);  // waits for its index
  const std::string bdi = "/sys/class/bdi/" + std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
  EXPECT_EQ(text_of(read_all(bdi + "/read_ahead_kb").data), "1024\n");

  auto engine_reads = [&]() -> long long {
    const Xattr x = get_xattr(mnt_, "user.mibz2fs.stats");
    EXPECT_EQ(x.error, 0);
    const std::string counters = " " + x.value;
    const size_t at = counters.find(" reads=");
    return at == std::string::npos ? -1 : std::stoll(counters.substr(at + 7));
  };
  const long long before = engine_reads();
  const ReadAll r = read_all(shown);
  const long long reads = engine_reads() - before;
  ASSERT_EQ(r.error, 0) << std::strerror(r.error);
  EXPECT_TRUE(same_bytes(r.data, content));
  // The kernel's first requests are smaller while its window grows; 128 KiB ones would be 64.
  EXPECT_LE(reads, 16) << "engine reads for 8 MiB read in order";
  EXPECT_GE(reads, 8);
}

}  // namespace
}  // namespace mibz2::test
