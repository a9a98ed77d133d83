// mibz2fs as real deployments run it, mounted for real: root with
// no HOME (an fstab or systemd mount) keeps its indexes in /var/cache/mibz2fs and reuses them;
// `df` shows the decompressed content and nothing free; `cp -a` copies no user.mibz2fs.*
// attribute; and the README's fstab lines and systemd mount unit work as written.
//
// The tests that could write /var/cache run in a mount namespace of their own (ctest runs each
// test in its own process) with a tmpfs over /var/cache, which the daemons they start inherit:
// the machine's /var/cache is never touched. So do the tests that run mount(8), which also get the
// mibz2fs just built "installed" on a tmpfs over /usr/local/sbin: mount(8) runs mount.fuse3 with
// no PATH, and mount.fuse3 runs `mibz2fs` through /bin/sh, which then searches its default PATH
// (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin).
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "mount_harness.h"

#ifndef MIBZ2_BINARY
#error "MIBZ2_BINARY must name the mibz2 program"
#endif
#ifndef MIBZ2_SOURCE_DIR
#error "MIBZ2_SOURCE_DIR must name the source tree (for README.md)"
#endif

namespace mibz2::test {
namespace {

const stdfs::path kVarCache = "/var/cache";
const stdfs::path kSystemIndexDir = "/var/cache/mibz2fs";

// Moves this process into a mount namespace of its own with an empty tmpfs over /var/cache.
// "" or why it cannot (the test then skips).
std::string private_var_cache() {
  if (geteuid() != 0) return "needs root (root's default index directory, mount namespaces)";
  if (unshare(CLONE_NEWNS) != 0) return std::string("no mount namespace of our own here: ") + std::strerror(errno);
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return std::string("cannot make the mounts private: ") + std::strerror(errno);
  if (mount("mibz2-test-var-cache", kVarCache.c_str(), "tmpfs", 0, "mode=0755") != 0)
    return std::string("cannot mount a tmpfs over /var/cache: ") + std::strerror(errno);
  return {};
}

// In the namespace of private_var_cache(): `mibz2fs` in /usr/local/sbin is the one just built.
std::string install_mibz2fs_in_namespace() {
  const stdfs::path bin = "/usr/local/sbin";
  if (!stdfs::is_directory(bin)) return bin.string() + " is missing";
  if (mount("mibz2-test-bin", bin.c_str(), "tmpfs", 0, "mode=0755") != 0)
    return std::string("cannot mount a tmpfs over /usr/local/sbin: ") + std::strerror(errno);
  std::error_code ec;
  stdfs::create_symlink(MIBZ2FS_BINARY, bin / "mibz2fs", ec);
  return ec ? ec.message() : "";
}

// A source directory with one compressed file; returns its decompressed content.
Bytes one_file_source(const stdfs::path& src, uint64_t seed) {
  const Bytes content = text_bytes(300000, seed);
  write_file(src / "a.txt.bz2", as_span(libbz2_compress(as_span(content), 9)));
  return content;
}

// The dumps' daemon as an fstab or systemd mount starts it: root, and `env -i` (no HOME, no
// XDG_CACHE_HOME); -f keeps it our child so that the harness reaps it and reads its log.
class DeployMountTest : public FsMountTest {
 protected:
  Mibz2fs* mount_bare(const stdfs::path& src) {
    const stdfs::path log = work_->path() / ("bare-log" + std::to_string(mounts_.size()) + ".txt");
    mounts_.push_back(std::make_unique<Mibz2fs>(std::vector<std::string>{"-f", src.string(), mnt_.string()}, mnt_, log,
                                                std::vector<std::string>{}));
    const std::string why = mounts_.back()->wait_mounted();
    if (!why.empty()) {
      ADD_FAILURE() << why;
      return nullptr;
    }
    return mounts_.back().get();
  }
};

TEST_F(DeployMountTest, RootWithoutHomeKeepsIndexesInVarCacheAcrossMounts) {
  if (const std::string why = private_var_cache(); !why.empty()) GTEST_SKIP() << why;
  const stdfs::path src = new_source();
  const Bytes content = one_file_source(src, 81);

  Mibz2fs* first = mount_bare(src);
  MOUNT_OR_RETURN(first);
  EXPECT_TRUE(same_bytes(read_all(mnt_ / "a.txt").data, content));  // waits for the index, saved first
  struct stat st;
  ASSERT_EQ(lstat(kSystemIndexDir.c_str(), &st), 0) << "no " << kSystemIndexDir << "; log:\n" << slurp(first->log());
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(count_index_files(kSystemIndexDir), 1u) << slurp(first->log());
  EXPECT_EQ(slurp(first->log()).find("memory only"), std::string::npos) << slurp(first->log());
  EXPECT_NE(slurp(first->log()).find(": indexing ("), std::string::npos)
      << "the log line of a build, which the next mount must not have:\n" << slurp(first->log());
  ASSERT_TRUE(first->stop());

  // The next boot's mount finds the index: nothing is indexed again.
  Mibz2fs* second = mount_bare(src);
  MOUNT_OR_RETURN(second);
  EXPECT_TRUE(same_bytes(read_all(mnt_ / "a.txt").data, content));
  EXPECT_EQ(slurp(second->log()).find(": indexing ("), std::string::npos) << slurp(second->log());
  ASSERT_TRUE(second->stop());

  // A /var/cache/mibz2fs that is a symlink is refused, and running without a place for indexes
  // says what it costs.
  const stdfs::path elsewhere = kVarCache / "elsewhere";
  stdfs::create_directories(elsewhere);
  stdfs::rename(kSystemIndexDir, kVarCache / "old");
  stdfs::create_directory_symlink(elsewhere, kSystemIndexDir);
  Mibz2fs* third = mount_bare(src);
  MOUNT_OR_RETURN(third);
  EXPECT_TRUE(same_bytes(read_all(mnt_ / "a.txt").data, content));
  const std::string log = slurp(third->log());
  EXPECT_NE(log.find("/var/cache/mibz2fs is a symlink"), std::string::npos) << log;
  EXPECT_NE(log.find("every mount indexes every file again"), std::string::npos) << log;
  EXPECT_EQ(count_index_files(elsewhere), 0u);
}

// `mibz2 index` run as root (no HOME either) stores into the same directory, so that dumps can be
// indexed before their first mount at boot: the mount then builds nothing.
TEST_F(DeployMountTest, Mibz2IndexAsRootPreparesTheBootMount) {
  if (const std::string why = private_var_cache(); !why.empty()) GTEST_SKIP() << why;
  const stdfs::path src = new_source();
  const Bytes content = one_file_source(src, 84);
  const CommandResult indexed =
      run_command("env -i " + shell_quote(MIBZ2_BINARY) + " index " + shell_quote((src / "a.txt.bz2").string()) + " 2>&1");
  ASSERT_EQ(indexed.status, 0) << text_of(indexed.out);
  EXPECT_EQ(count_index_files(kSystemIndexDir), 1u) << text_of(indexed.out);
  Mibz2fs* m = mount_bare(src);
  MOUNT_OR_RETURN(m);
  EXPECT_TRUE(same_bytes(read_all(mnt_ / "a.txt").data, content));
  EXPECT_EQ(slurp(m->log()).find(": indexing ("), std::string::npos) << slurp(m->log());
  EXPECT_EQ(count_index_files(kSystemIndexDir), 1u);
}

// Copies made with cp -a (which copies every attribute listed) carry none of ours: they would be
// stale there. The attributes stay readable by name on the mount.
TEST_F(FsMountTest, CpACopiesNoMibz2fsAttributes) {
  const stdfs::path src = new_source();
  const Bytes content = one_file_source(src, 82);
  MOUNT_OR_RETURN(mount(src));
  const stdfs::path out = stdfs::canonical(work_->path()) / "copies";
  stdfs::create_directories(out);
  // The copies' file system must keep user attributes, and cp -a must copy them, for the test to
  // mean anything.
  write_file(out / "probe", as_span(to_bytes("x")));
  if (setxattr((out / "probe").c_str(), "user.probe", "1", 1, 0) != 0)
    GTEST_SKIP() << out << " keeps no user attributes: " << std::strerror(errno);
  ASSERT_EQ(run_command("cp -a " + shell_quote((out / "probe").string()) + " " + shell_quote((out / "probe2").string())).status, 0);
  ASSERT_EQ(get_xattr(out / "probe2", "user.probe").value, "1") << "cp -a copies user attributes here";

  ASSERT_EQ(run_command("cp -a " + shell_quote((mnt_ / "a.txt").string()) + " " + shell_quote((out / "a.txt").string())).status, 0);
  EXPECT_TRUE(same_bytes(read_file(out / "a.txt"), content));
  for (const char* name : kXattrs) EXPECT_EQ(get_xattr(out / "a.txt", name).error, ENODATA) << name;
  // The whole mount, root directory included (user.mibz2fs.stats).
  ASSERT_EQ(run_command("cp -a " + shell_quote(mnt_.string() + "/.") + " " + shell_quote((out / "tree").string())).status, 0);
  EXPECT_EQ(get_xattr(out / "tree", "user.mibz2fs.stats").error, ENODATA);
  EXPECT_EQ(get_xattr(out / "tree" / "a.txt", "user.mibz2fs.blocks").error, ENODATA);

  // Still there by name, for getfattr -n.
  EXPECT_EQ(get_xattr(mnt_ / "a.txt", "user.mibz2fs.compressed_size").value,
            std::to_string(stdfs::file_size(src / "a.txt.bz2")));
  EXPECT_EQ(get_xattr(mnt_, "user.mibz2fs.stats").error, 0);
  if (have_program("getfattr")) {
    const CommandResult r =
        run_command("getfattr --only-values -n user.mibz2fs.index " + shell_quote((mnt_ / "a.txt").string()));
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(text_of(r.out), "ready");
  }
}

// ---- the README's fstab lines and systemd mount unit, as written ---------------------------------

// The README's example paths, and the test's own in their place.
std::string localize(std::string s, const std::map<std::string, std::string>& paths) {
  for (const auto& [from, to] : paths)
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

std::string readme() { return slurp(stdfs::path(MIBZ2_SOURCE_DIR) / "README.md"); }

// The README's fstab lines for mibz2fs (inside code blocks).
std::vector<std::string> readme_fstab_lines() {
  std::vector<std::string> lines;
  std::istringstream in(readme());
  bool in_code = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("```", 0) == 0) in_code = !in_code;
    else if (in_code && line.find(" fuse.mibz2fs ") != std::string::npos && line[0] == '/') lines.push_back(line);
  }
  return lines;
}

// The README's systemd mount unit: the code block holding "[Mount]".
std::string readme_mount_unit() {
  std::istringstream in(readme());
  std::string block;
  bool in_code = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("```", 0) == 0) {
      if (in_code && block.find("[Mount]\n") != std::string::npos) return block;
      in_code = !in_code;
      block.clear();
    } else if (in_code) {
      block += line + "\n";
    }
  }
  return {};
}

// key=value lines of one [section] of a unit file.
std::map<std::string, std::string> unit_section(const std::string& unit, const std::string& section) {
  std::map<std::string, std::string> keys;
  std::istringstream in(unit);
  bool in_section = false;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] == '[') in_section = line == "[" + section + "]";
    else if (in_section && line.find('=') != std::string::npos) keys[line.substr(0, line.find('='))] = line.substr(line.find('=') + 1);
  }
  return keys;
}

class ReadmeMountTest : public FsMountTest {
 protected:
  void SetUp() override {
    FsMountTest::SetUp();
    if (IsSkipped()) return;
    // Lines without index_dir= keep indexes in root's default: a private /var/cache.
    if (const std::string why = private_var_cache(); !why.empty()) GTEST_SKIP() << why;
    ASSERT_EQ(install_mibz2fs_in_namespace(), "");
    src_ = new_source();
    content_ = one_file_source(src_, 83);
    paths_ = {{"/srv/dumps", src_.string()}, {"/mnt/plain", mnt_.string()}, {"/srv/mibz2-index", idx_.string()}};
  }

  // Checks the mount serves the file, then unmounts it and waits for its daemon (not our child: it
  // was started by mount.fuse3 and daemonized) to end.
  void check_and_unmount(const std::string& what) {
    SCOPED_TRACE(what);
    ASSERT_TRUE(is_mounted(mnt_)) << "not mounted";
    EXPECT_TRUE(same_bytes(read_all(mnt_ / "a.txt").data, content_));
    EXPECT_EQ(run_command("umount " + shell_quote(mnt_.string())).status, 0);
    EXPECT_FALSE(is_mounted(mnt_));
    const auto t0 = Clock::now();
    while (!processes_mentioning(mnt_.string()).empty() && seconds_since(t0) < 15) sleep_ms(20);
    EXPECT_TRUE(processes_mentioning(mnt_.string()).empty()) << "the daemon did not end after umount";
  }

  stdfs::path src_;
  Bytes content_;
  std::map<std::string, std::string> paths_;
};

TEST_F(ReadmeMountTest, FstabLinesMountWithMountT) {
  const std::vector<std::string> lines = readme_fstab_lines();
  ASSERT_GE(lines.size(), 2u) << "the README shows an fstab line and an x-systemd.automount one";
  bool automount = false;
  for (const std::string& line : lines) {
    const std::string local = localize(line, paths_);
    automount |= line.find("x-systemd.automount") != std::string::npos;
    const stdfs::path fstab = work_->path() / "fstab";
    std::ofstream(fstab) << local << "\n";
    const CommandResult r = run_command("mount -T " + shell_quote(fstab.string()) + " " +
                                        shell_quote(mnt_.string()) + " 2>&1");
    ASSERT_EQ(r.status, 0) << local << "\n" << text_of(r.out);
    check_and_unmount(line);
  }
  EXPECT_TRUE(automount);
}

// The unit is checked with systemd-analyze where it can run, and mounted the way systemd mounts it:
// mount WHAT WHERE -t TYPE -o OPTIONS.
TEST_F(ReadmeMountTest, SystemdMountUnitMounts) {
  const std::string unit = readme_mount_unit();
  ASSERT_FALSE(unit.empty()) << "the README shows a systemd mount unit";
  const auto mount_keys = unit_section(unit, "Mount");
  for (const char* key : {"What", "Where", "Type", "Options"}) ASSERT_EQ(mount_keys.count(key), 1u) << key;
  EXPECT_EQ(mount_keys.at("Type"), "fuse.mibz2fs");
  EXPECT_EQ(unit_section(unit, "Install").count("WantedBy"), 1u);
  // The README names the unit after its mount point, as systemd requires.
  const CommandResult escaped = run_command("systemd-escape --path --suffix=mount " + shell_quote(mount_keys.at("Where")));
  if (escaped.status == 0) {
    std::string name = text_of(escaped.out);
    name.erase(name.find_last_not_of('\n') + 1);
    EXPECT_NE(readme().find("/etc/systemd/system/" + name), std::string::npos) << name;
  }

  const std::string local = localize(unit, paths_);
  if (have_program("systemd-analyze") && have_program("systemd-escape")) {
    const CommandResult n = run_command("systemd-escape --path --suffix=mount " + shell_quote(mnt_.string()));
    ASSERT_EQ(n.status, 0);
    std::string name = text_of(n.out);
    name.erase(name.find_last_not_of('\n') + 1);
    const stdfs::path file = work_->path() / name;
    std::ofstream(file) << local;
    const CommandResult v = run_command("systemd-analyze verify --man=no " + shell_quote(file.string()) + " 2>&1");
    EXPECT_EQ(v.status, 0) << local << "\n" << text_of(v.out);
    EXPECT_EQ(text_of(v.out), "") << local;
  }
  const auto local_keys = unit_section(local, "Mount");
  const CommandResult r = run_command("mount " + shell_quote(local_keys.at("What")) + " " +
                                      shell_quote(local_keys.at("Where")) + " -t " + shell_quote(local_keys.at("Type")) +
                                      " -o " + shell_quote(local_keys.at("Options")) + " 2>&1");
  ASSERT_EQ(r.status, 0) << local << "\n" << text_of(r.out);
  check_and_unmount("the mount unit");
}

}  // namespace
}  // namespace mibz2::test
