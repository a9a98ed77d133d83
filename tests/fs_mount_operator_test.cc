// What an operator hits, mounted for real. A low open-file limit (the daemon
// raises its soft limit to the hard one, and says once when descriptors run out), file names that
// would forge log lines (every message is escaped), and a .bz2 name of the longest length (its
// sidecar's name cannot exist, which is no reason to warn).
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "mount_harness.h"

namespace mibz2::test {
namespace {

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The names under a directory of the mount, by opendir and readdir; errno if it cannot be listed.
struct Listing {
  int error = 0;
  std::vector<std::string> names;
};
Listing list(const stdfs::path& dir) {
  Listing l;
  DIR* d = opendir(dir.c_str());
  if (!d) {
    l.error = errno;
    return l;
  }
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") l.names.push_back(name);
  }
  closedir(d);
  return l;
}

// PREFIX + N + SUFFIX, appended piece by piece (`"p" + std::to_string(i)` trips a false -Wrestrict
// in g++ 12).
std::string numbered(const char* prefix, size_t n, const char* suffix = "") {
  std::string s = prefix;
  s.append(std::to_string(n)).append(suffix);
  return s;
}

// The "Max open files" line of /proc/PID/limits.
std::string open_file_limits_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/limits");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("Max open files", 0) == 0) return line;
  return {};
}

class FsOperatorTest : public FsMountTest {
 protected:
  // SOURCE with `plain` plain files p0.txt ... and `compressed` small bzip2 files c0.bz2 ...
  stdfs::path many_files(size_t plain, size_t compressed) {
    const stdfs::path src = new_source();
    for (size_t i = 0; i < plain; ++i) write_file(src / numbered("p", i, ".txt"), to_bytes(numbered("plain ", i, "\n")));
    for (size_t i = 0; i < compressed; ++i)
      write_file(src / numbered("c", i, ".bz2"), libbz2_compress(as_span(to_bytes(text_of_c(i))), 9));
    return src;
  }
  static std::string text_of_c(size_t i) { return numbered("compressed ", i, "\n"); }
};

// Under a soft limit of 64 (a container's, or `ulimit -n 64`) with a hard limit of 4096, 200 plain
// files and 20 decompressed ones open at once through the mount all open and read (before: 142 of
// 200 opens failed with EMFILE, and ls of the mount with them).
TEST_F(FsOperatorTest, ALowSoftOpenFileLimitIsRaisedToTheHardLimit) {
  const stdfs::path src = many_files(200, 20);
  Mibz2fs* m;
  {
    const ChildOpenFileLimit limit(64, 4096);
    MOUNT_OR_RETURN(m = mount(src));
  }
  EXPECT_NE(open_file_limits_of(m->pid()).find(" 4096 "), std::string::npos)
      << "soft limit not raised: " << open_file_limits_of(m->pid());
  std::vector<int> fds;
  std::vector<std::string> failed;
  auto open_one = [&](const std::string& name) {
    const int fd = open((mnt_ / name).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) failed.push_back(name + ": " + std::strerror(errno));
    else fds.push_back(fd);
  };
  for (size_t i = 0; i < 200; ++i) open_one(numbered("p", i, ".txt"));
  for (size_t i = 0; i < 20; ++i) open_one(numbered("c", i));
  EXPECT_TRUE(failed.empty()) << failed.size() << " opens failed, the first: " << failed.front();
  EXPECT_EQ(list(mnt_).error, 0) << "the mount cannot be listed while the files are open";
  // Every descriptor reads its own file.
  for (size_t i = 0; i < fds.size(); ++i) {
    char buf[64];
    const ssize_t n = pread(fds[i], buf, sizeof buf, 0);
    const std::string want = i < 200 ? numbered("plain ", i, "\n") : text_of_c(i - 200);
    EXPECT_EQ(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0), want) << "descriptor " << i;
  }
  for (int fd : fds) close(fd);
  const std::string log = slurp(m->log());
  EXPECT_NE(log.find("open file limit (RLIMIT_NOFILE) raised from 64 to 4096"), std::string::npos) << log;
  EXPECT_EQ(log.find("out of file descriptors"), std::string::npos) << log;
}

// With a hard limit of 64 too, opens past it fail with EMFILE: the first shortage is logged, once,
// with the limit and what to do; once the files are closed, the mount lists and reads for everyone
// again (before: nothing was logged).
TEST_F(FsOperatorTest, RunningOutOfDescriptorsIsLoggedOnceAndTheMountRecovers) {
  const stdfs::path src = many_files(200, 0);
  Mibz2fs* m;
  {
    const ChildOpenFileLimit limit(64, 64);
    MOUNT_OR_RETURN(m = mount(src));
  }
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(numbered("round ", static_cast<size_t>(round)));
    std::vector<int> fds;
    size_t emfile = 0;
    for (size_t i = 0; i < 200; ++i) {
      const int fd = open((mnt_ / numbered("p", i, ".txt")).c_str(), O_RDONLY | O_CLOEXEC);
      if (fd >= 0) fds.push_back(fd);
      else if (errno == EMFILE) ++emfile;
      else ADD_FAILURE() << "open: " << std::strerror(errno);
    }
    EXPECT_GT(emfile, 0u) << "the daemon never ran out of descriptors: the test shows nothing";
    for (int fd : fds) close(fd);
    const Listing l = list(mnt_);
    EXPECT_EQ(l.error, 0) << std::strerror(l.error);
    EXPECT_EQ(l.names.size(), 200u);
    EXPECT_EQ(text_of(read_all(mnt_ / "p7.txt").data), "plain 7\n");
  }
  const std::string log = slurp(m->log());
  EXPECT_EQ(count_of(log, "out of file descriptors"), 1u) << log;
  EXPECT_NE(log.find("may have 64 open (RLIMIT_NOFILE)"), std::string::npos) << log;
  EXPECT_NE(log.find("LimitNOFILE="), std::string::npos) << log;
}

// A name with a newline, a carriage return, an escape sequence and a backslash, of a file whose
// damage gets it logged as a warning: the log has no line the name made, no control character, and
// the name in it escaped, each escape standing for one byte (before: the name's second half stood
// in the log as a line of its own, ESC and all).
TEST_F(FsOperatorTest, NamesCannotForgeLogLines) {
  const stdfs::path src = new_source();
  const std::string forged = "2001-01-01 00:00:00.000 mibz2fs error: FORGED";
  const std::string shown = "evil\n" + forged + " \x1b[2K\rline\\x";
  const std::string escaped = "evil\\n" + forged + " \\x1b[2K\\rline\\\\x";
  Bytes damaged = libbz2_compress(as_span(text_bytes(20000, 3)), 9);
  damaged.resize(damaged.size() / 2);  // cut short: logged as damaged, with its name
  write_file(src / (shown + ".bz2"), damaged);
  Mibz2fs* m;
  MOUNT_OR_RETURN(m = mount(src));
  struct stat st;
  ASSERT_EQ(stat((mnt_ / shown).c_str(), &st), 0) << std::strerror(errno);  // waits for its index
  EXPECT_EQ(list(mnt_).names, std::vector<std::string>{shown});
  ASSERT_TRUE(m->stop());  // unmounted and ended: the log is complete
  const std::string log = slurp(m->log());
  EXPECT_NE(log.find(escaped + ".bz2: damaged"), std::string::npos) << log;
  for (const std::string& line : lines_of(log)) {
    EXPECT_NE(line.rfind(forged, 0), 0u) << "a line the name forged: " << line;
    if (line.find(forged) != std::string::npos) {
      EXPECT_NE(line.find("evil\\n" + forged), std::string::npos) << line;
    }
    EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
    EXPECT_EQ(line.find('\r'), std::string::npos) << line;
  }
}

// A .bz2 name of 255 bytes (NAME_MAX): its sidecar's name would be 264 bytes, so there is none,
// silently. Shown, indexed and read with no warning (before: "stored index not used, rebuilding:
// cannot open ....mibz2idx: File name too long" at every index).
TEST_F(FsOperatorTest, ANameOfTheLongestLengthHasNoSidecarAndNoWarning) {
  const stdfs::path src = new_source();
  const std::string stem(251, 'n');
  const Bytes plain = text_bytes(50000, 5);
  write_file(src / (stem + ".bz2"), libbz2_compress(as_span(plain), 9));
  Mibz2fs* m;
  MOUNT_OR_RETURN(m = mount(src));
  const Listing l = list(mnt_);
  ASSERT_EQ(l.names, std::vector<std::string>{stem});
  EXPECT_TRUE(same_bytes(read_all(mnt_ / stem).data, plain));
  EXPECT_EQ(get_xattr(mnt_ / stem, "user.mibz2fs.index").value, "ready");
  ASSERT_TRUE(m->stop());
  const std::string log = slurp(m->log());
  EXPECT_NE(log.find(": indexed: "), std::string::npos) << log;
  EXPECT_EQ(log.find(" warning: "), std::string::npos) << log;
  EXPECT_EQ(log.find("too long"), std::string::npos) << log;
}

}  // namespace
}  // namespace mibz2::test
