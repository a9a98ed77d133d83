// mibz2fs's life cycle, mounted for real: bad options and paths, the ways it ends (signals and
// fusermount3 -u), daemonized, -o wait_index, and a second mount that finds its indexes current.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "io/fd_io.h"
#include "mount_harness.h"

namespace mibz2::test {
namespace {

TEST_F(FsMountTest, BadOptionsAndPathsGiveOneLineAndNoMount) {
  const stdfs::path src = tree_->src();
  const stdfs::path file = tree_->src() / "plain.txt";
  const stdfs::path missing = work_->path() / "missing";
  const std::string idx = "index_dir=" + idx_.string();
  struct Case {
    const char* what;
    std::vector<std::string> args;
  };
  const std::vector<Case> cases = {
      {"-o threads=0", {"-o", "threads=0", src, mnt_}},
      {"-o threads=abc", {"-o", "threads=abc", src, mnt_}},
      {"-o threads=100000", {"-o", "threads=100000", src, mnt_}},
      {"-o cache_size=abc", {"-o", "cache_size=abc", src, mnt_}},
      {"-o cache_size=-5M", {"-o", "cache_size=-5M", src, mnt_}},
      {"-o log_level=loud", {"-o", "log_level=loud", src, mnt_}},
      {"-o nonsense_option", {"-o", "nonsense_option", src, mnt_}},
      {"-o threads=2,nonsense_option", {"-o", "threads=2,nonsense_option", src, mnt_}},
      {"--nonsense", {"--nonsense", src, mnt_}},
      {"missing SOURCE", {"-o", idx, missing, mnt_}},
      {"SOURCE is a file", {"-o", idx, file, mnt_}},
      {"missing MOUNTPOINT", {"-o", idx, src, missing}},
      {"MOUNTPOINT is a file", {"-o", idx, src, file}},
      {"no MOUNTPOINT argument", {"-o", idx, src}},
      {"no arguments", {}},
      {"three arguments", {src, mnt_, missing}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const BadRun r = run_mibz2fs(c.args);
    EXPECT_NE(r.status, 0);
    EXPECT_NE(r.status, 124) << "timed out";
    EXPECT_FALSE(r.output.empty());
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << "output:\n" << r.output;
    EXPECT_EQ(r.output.back(), '\n');
    EXPECT_FALSE(is_mounted(mnt_));
    if (is_mounted(mnt_)) lazy_unmount(mnt_);
  }
  EXPECT_TRUE(processes_mentioning(mnt_.string()).empty());

  // A mount point that a first mibz2fs already uses.
  MOUNT_OR_RETURN(mount_tree());
  const BadRun r = run_mibz2fs({"-o", idx, src, mnt_});
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << "output:\n" << r.output;
  EXPECT_NE(r.output.find("already mounted"), std::string::npos) << r.output;
  const auto points = mount_points();
  EXPECT_EQ(std::count(points.begin(), points.end(), mnt_.string()), 1) << "a second mount was stacked";
  EXPECT_EQ(processes_mentioning(mnt_.string()).size(), 1u);
  EXPECT_TRUE(same_bytes(read_all(mnt_ / "single.txt").data, tree_->at("single.txt").content));
  // Help and version are not errors.
  EXPECT_EQ(run_mibz2fs({"--help"}).status, 0);
  const BadRun v = run_mibz2fs({"-V"});
  EXPECT_EQ(v.status, 0);
  EXPECT_NE(v.output.find("mibz2fs"), std::string::npos);
}

enum class Ending { kSigterm, kSigint, kSighup, kFusermount };

class FsEndingTest : public FsMountTest, public ::testing::WithParamInterface<Ending> {};

TEST_P(FsEndingTest, LeavesNoMountAndNoProcessAndExitsZero) {
  Mibz2fs* m = mount_tree();
  MOUNT_OR_RETURN(m);
  // Some work first: files open, blocks cached, a read-ahead under way.
  const int fd = open((mnt_ / "multi.bin").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::vector<uint8_t> buf(1 << 16);
  ASSERT_EQ(io::pread_full(fd, buf.data(), buf.size(), 0), static_cast<ssize_t>(buf.size()));
  close(fd);
  ASSERT_EQ(read_all(mnt_ / "single.txt").error, 0);

  switch (GetParam()) {
    case Ending::kSigterm: kill(m->pid(), SIGTERM); break;
    case Ending::kSigint: kill(m->pid(), SIGINT); break;
    case Ending::kSighup: kill(m->pid(), SIGHUP); break;
    case Ending::kFusermount:
      EXPECT_EQ(run_command("fusermount3 -u " + shell_quote(mnt_.string()) + " 2>&1").status, 0);
      break;
  }
  const std::optional<int> st = m->wait_exit(15);
  ASSERT_TRUE(st.has_value()) << "mibz2fs still running 15 s later; log:\n" << slurp(m->log());
  EXPECT_TRUE(WIFEXITED(*st) && WEXITSTATUS(*st) == 0) << describe_status(*st) << "; log:\n" << slurp(m->log());
  EXPECT_FALSE(is_mounted(mnt_));
  EXPECT_TRUE(processes_mentioning(mnt_.string()).empty());
  EXPECT_NE(slurp(m->log()).find("unmounted"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Endings, FsEndingTest,
                         ::testing::Values(Ending::kSigterm, Ending::kSigint, Ending::kSighup, Ending::kFusermount),
                         [](const auto& info) {
                           switch (info.param) {
                             case Ending::kSigterm: return std::string("Sigterm");
                             case Ending::kSigint: return std::string("Sigint");
                             case Ending::kSighup: return std::string("Sighup");
                             default: return std::string("Fusermount");
                           }
                         });

// Without -f: the parent returns 0 once mounted, the daemon lives on and ends on SIGTERM.
TEST_F(FsMountTest, DaemonizedMountEndsOnSigterm) {
  const BadRun r = run_mibz2fs({"-o", "index_dir=" + idx_.string(), tree_->src(), mnt_});
  ASSERT_EQ(r.status, 0) << r.output;
  ASSERT_TRUE(is_mounted(mnt_)) << "mounted when the parent returned";
  std::vector<pid_t> daemons = processes_mentioning(mnt_.string());
  ASSERT_EQ(daemons.size(), 1u);
  EXPECT_TRUE(same_bytes(read_all(mnt_ / "multistream.txt").data, tree_->at("multistream.txt").content));
  kill(daemons[0], SIGTERM);
  const auto t0 = Clock::now();
  while ((is_mounted(mnt_) || !processes_mentioning(mnt_.string()).empty()) && seconds_since(t0) < 15) sleep_ms(10);
  EXPECT_FALSE(is_mounted(mnt_));
  EXPECT_TRUE(processes_mentioning(mnt_.string()).empty());
  if (is_mounted(mnt_)) lazy_unmount(mnt_);
  for (pid_t p : processes_mentioning(mnt_.string())) kill(p, SIGKILL);
}

TEST_F(FsMountTest, WaitIndexMountsOnlyOnceEverythingIsIndexed) {
  size_t decompressed = 0;
  for (const auto& [rel, s] : tree_->shown()) decompressed += s.decompressed;
  Mibz2fs* m = mount_tree({"-o", "wait_index"});
  MOUNT_OR_RETURN(m);
  // Before anything looks at the mount: every index is stored and reported ready.
  EXPECT_EQ(count_index_files(idx_), decompressed);
  for (const auto& [rel, s] : tree_->shown()) {
    if (!s.decompressed) continue;
    SCOPED_TRACE(rel);
    EXPECT_EQ(get_xattr(mnt_ / rel, kXattrs[2]).value, "ready");
  }
  // The progress lines come before the mount.
  const std::string log = slurp(m->log());
  const size_t mounted = log.find("mounted ");
  const size_t last_progress = log.rfind("indexed ");
  ASSERT_NE(mounted, std::string::npos) << log;
  ASSERT_NE(last_progress, std::string::npos) << log;
  EXPECT_LT(last_progress, mounted) << log;
  // (Appended to a std::string: "[" + std::string trips g++ 12's -Wrestrict false positive here.)
  const std::string count = std::to_string(decompressed);
  EXPECT_NE(log.find(std::string("[").append(count).append("/").append(count).append("]")), std::string::npos)
      << log;
  // Each says the total so far: bytes of all files, and the time left.
  EXPECT_NE(log.find(" of "), std::string::npos) << log;
  EXPECT_NE(log.find("(total "), std::string::npos) << log;
  EXPECT_NE(log.find(", ETA "), std::string::npos) << log;
}

TEST_F(FsMountTest, SecondMountFindsItsIndexesCurrent) {
  std::vector<std::string> files;
  for (const auto& [rel, s] : tree_->shown())
    if (s.decompressed) files.push_back(rel);
  {
    Mibz2fs* first = mount_tree();
    MOUNT_OR_RETURN(first);
    for (const auto& rel : files) EXPECT_EQ(get_xattr(mnt_ / rel, kXattrs[2]).value, "ready") << rel;
    EXPECT_NE(slurp(first->log()).find("indexing"), std::string::npos);
    EXPECT_TRUE(first->stop());
  }
  EXPECT_EQ(count_index_files(idx_), files.size());
  // Whether the second mount is fast is for scripts/bench-fs; here: it builds and loads nothing
  // but the stored indexes (its log says no indexing), and its sizes and bytes are right.
  Mibz2fs* second = mount_tree();
  MOUNT_OR_RETURN(second);
  for (const auto& rel : files) {
    EXPECT_EQ(stdfs::file_size(mnt_ / rel), tree_->at(rel).content.size()) << rel;
    EXPECT_EQ(get_xattr(mnt_ / rel, kXattrs[2]).value, "ready") << rel;
  }
  const std::string log = slurp(second->log());
  for (const char* word : {"indexing", "indexed", "rebuilding", "not used"})
    EXPECT_EQ(log.find(word), std::string::npos) << "the second mount's log mentions '" << word << "':\n" << log;
  EXPECT_TRUE(same_bytes(read_all(mnt_ / "multi.bin").data, tree_->at("multi.bin").content));
}

}  // namespace
}  // namespace mibz2::test
