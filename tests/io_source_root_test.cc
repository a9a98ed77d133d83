// The one way SOURCE is reached (io::SourceRoot), both with openat2 and with the component walk
// used where the kernel lacks it: never through a symlink in any component, never out of SOURCE,
// never blocking on a fifo, the kind checked; and lexically_beneath for symlink targets.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>

#include <gtest/gtest.h>

#include "io/source_root.h"
#include "test_support.h"

namespace mibz2::test {
namespace {

namespace stdfs = std::filesystem;
using io::LocalSourceRoot;
using io::SourceRoot;
using Kind = SourceRoot::Kind;

class SourceRootTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    LocalSourceRoot::use_component_walk_for_testing(GetParam());
    stdfs::create_directories(dir_.path() / "src" / "d" / "e");
    stdfs::create_directories(dir_.path() / "outside");
    write_file(dir_.path() / "src" / "d" / "e" / "f.txt", as_span(to_bytes("inside")));
    write_file(dir_.path() / "outside" / "secret", as_span(to_bytes("secret")));
    stdfs::create_directory_symlink("../outside", dir_.path() / "src" / "out");     // a component leading out
    stdfs::create_directory_symlink("d", dir_.path() / "src" / "alias");            // one staying inside
    stdfs::create_symlink("d/e/f.txt", dir_.path() / "src" / "link.txt");           // a last component
    ASSERT_EQ(mkfifo((dir_.path() / "src" / "fifo").c_str(), 0644), 0);
    ASSERT_EQ(root_.open((dir_.path() / "src").string()), 0);
  }
  void TearDown() override { LocalSourceRoot::use_component_walk_for_testing(false); }

  int open_kind(const std::string& rel, Kind kind) {
    struct stat st;
    const int fd = root_.open(rel, kind, &st);
    if (fd >= 0) close(fd);
    return fd >= 0 ? 0 : -fd;
  }

  TempDir dir_;
  LocalSourceRoot root_;
};

TEST_P(SourceRootTest, OpensFilesAndDirectoriesBeneathIt) {
  struct stat st;
  const int fd = root_.open("d/e/f.txt", Kind::kRegular, &st);
  ASSERT_GE(fd, 0) << std::strerror(-fd);
  char buf[16] = {};
  EXPECT_EQ(pread(fd, buf, sizeof buf, 0), 6);
  EXPECT_STREQ(buf, "inside");
  EXPECT_TRUE(S_ISREG(st.st_mode));
  close(fd);
  EXPECT_EQ(open_kind("d/e", Kind::kDirectory), 0);
  EXPECT_EQ(open_kind("", Kind::kDirectory), 0);
  EXPECT_EQ(open_kind("d/e", Kind::kRegular), EISDIR);
  EXPECT_EQ(open_kind("d/e/f.txt", Kind::kDirectory), ENOTDIR);
  EXPECT_EQ(open_kind("d/missing", Kind::kRegular), ENOENT);
}

TEST_P(SourceRootTest, NeverThroughASymlink) {
  EXPECT_NE(open_kind("out/secret", Kind::kRegular), 0) << "a symlinked component led out of SOURCE";
  EXPECT_NE(open_kind("alias/e/f.txt", Kind::kRegular), 0) << "even a symlink that stays inside is not followed";
  EXPECT_NE(open_kind("link.txt", Kind::kRegular), 0);
  struct stat st;
  EXPECT_NE(root_.lstat("out/secret", &st), 0);
  ASSERT_EQ(root_.lstat("link.txt", &st), 0);  // the link itself is there to see
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  std::string target;
  ASSERT_EQ(root_.readlink("link.txt", &target), 0);
  EXPECT_EQ(target, "d/e/f.txt");
}

TEST_P(SourceRootTest, NeverOutOfSourceByName) {
  for (const char* rel : {"..", "../outside/secret", "d/../../outside/secret", "./d", "d//e", "/etc/passwd", "d/"})
    EXPECT_NE(open_kind(rel, Kind::kRegular), 0) << rel;
}

TEST_P(SourceRootTest, AFifoIsRefusedAtOnce) {
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(open_kind("fifo", Kind::kRegular), EINVAL);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
}

TEST_P(SourceRootTest, RelativeIsTheInverseOfAbsolute) {
  EXPECT_EQ(root_.relative(root_.absolute("d/e/f.txt")), std::optional<std::string>("d/e/f.txt"));
  EXPECT_EQ(root_.relative(root_.absolute("")), std::optional<std::string>(""));
  EXPECT_EQ(root_.relative("/elsewhere/x"), std::nullopt);
  EXPECT_EQ(root_.relative(root_.path() + "x"), std::nullopt) << "a sibling with SOURCE's name as prefix";
}

INSTANTIATE_TEST_SUITE_P(Openat2AndWalk, SourceRootTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "ComponentWalk" : "Openat2"; });

}  // namespace
}  // namespace mibz2::test
