// The mountinfo parser (src/io/mount_table): fields, optional fields, the \ooo escapes of paths,
// lines it must leave out, stacked mounts; and this machine's own table.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "io/mount_table.h"
#include "test_support.h"

namespace mibz2::test {
namespace {

using io::MountEntry;
using io::parse_mountinfo;

// The example of proc(5), and lines as Linux writes them for tmpfs, a bind mount and mibz2fs.
TEST(MountTable, ParsesTheFieldsItUses) {
  const std::vector<MountEntry> t = parse_mountinfo(
      "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n"
      "22 1 0:21 / / rw - tmpfs tmpfs rw\n"
      "40 22 8:1 /srv/data /home/x/data rw,relatime shared:7 master:2 unbindable - ext4 /dev/sda1 rw\n"
      "45 22 0:42 / /tmp/m ro,nosuid,nodev,relatime - fuse.mibz2fs /srv/dumps ro,user_id=0,group_id=0\n");
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].root, "/mnt1");
  EXPECT_EQ(t[0].mount_point, "/mnt2");
  EXPECT_EQ(t[0].fs_type, "ext3");
  EXPECT_EQ(t[0].source, "/dev/root");
  EXPECT_EQ(t[0].device, "98:0");
  EXPECT_EQ(t[1].mount_point, "/");
  EXPECT_EQ(t[1].fs_type, "tmpfs");
  EXPECT_EQ(t[2].root, "/srv/data") << "several optional fields before the separator";
  EXPECT_EQ(t[2].mount_point, "/home/x/data");
  EXPECT_EQ(t[2].fs_type, "ext4");
  EXPECT_EQ(t[2].source, "/dev/sda1");
  EXPECT_EQ(t[3].mount_point, "/tmp/m");
  EXPECT_EQ(t[3].fs_type, "fuse.mibz2fs");
  EXPECT_EQ(t[3].source, "/srv/dumps");
  EXPECT_EQ(t[3].device, "0:42");
}

// The kernel writes space, tab, newline and backslash in paths as \ooo.
TEST(MountTable, UndoesTheOctalEscapesOfPaths) {
  const std::vector<MountEntry> t =
      parse_mountinfo("50 22 0:50 / /tmp/a\\040b\\011c\\012d\\134e rw - fuse.mibz2fs /src\\040dir rw\n");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].mount_point, "/tmp/a b\tc\nd\\e");
  EXPECT_EQ(t[0].source, "/src dir");
  EXPECT_EQ(io::unescape_mount_field("\\303\\274n\\303\\257"), "\xc3\xbcn\xc3\xaf") << "bytes above 127 too";
}

TEST(MountTable, KeepsABackslashThatIsNotAnEscape) {
  EXPECT_EQ(io::unescape_mount_field("/a\\9zz"), "/a\\9zz");
  EXPECT_EQ(io::unescape_mount_field("/a\\04"), "/a\\04") << "too few digits at the end";
  EXPECT_EQ(io::unescape_mount_field("/a\\"), "/a\\");
  EXPECT_EQ(io::unescape_mount_field("/a\\400"), "/a\\400") << "above \\377 is not a byte";
  EXPECT_EQ(io::unescape_mount_field("\\134\\134"), "\\\\");
  EXPECT_EQ(io::unescape_mount_field(""), "");
}

TEST(MountTable, LeavesOutLinesWithoutTheFields) {
  const std::vector<MountEntry> t = parse_mountinfo(
      "\n"
      "1 2 3\n"
      "36 35 98:0 /mnt1 /no-separator rw,noatime master:1 ext3 /dev/root rw\n"
      "36 35 98:0 /mnt1 /nothing-after-it rw -\n"
      "36 35 98:0 /mnt1 /good rw - ext3 /dev/root rw\n"
      "37 35 98:0 / /last-line-without-newline rw - tmpfs tmpfs rw");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].mount_point, "/good");
  EXPECT_EQ(t[1].mount_point, "/last-line-without-newline");
  EXPECT_TRUE(parse_mountinfo("").empty());
}

TEST(MountTable, FindsTheMountThatIsSeenAtAPath) {
  const std::vector<MountEntry> t = parse_mountinfo(
      "1 0 0:1 / / rw - ext4 /dev/vda rw\n"
      "2 1 0:2 / /mnt rw - tmpfs first rw\n"
      "3 2 0:3 / /mnt rw - tmpfs second rw\n"
      "4 1 0:4 / /mnt2 rw - tmpfs other rw\n");
  const auto m = io::find_mount(t, "/mnt");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->source, "second") << "the last of the mounts stacked there";
  EXPECT_EQ(io::find_mount(t, "/mnt2")->source, "other");
  EXPECT_FALSE(io::find_mount(t, "/mn").has_value()) << "whole paths only";
  EXPECT_FALSE(io::find_mount(t, "/mnt/").has_value());
  EXPECT_FALSE(io::find_mount(t, "/srv").has_value());
}

TEST(MountTable, ReadsThisMachinesTable) {
  const std::vector<MountEntry> t = io::read_mount_table();
  ASSERT_FALSE(t.empty()) << "/proc/self/mountinfo";
  EXPECT_TRUE(io::find_mount(t, "/").has_value());
  EXPECT_TRUE(io::is_mount_point("/"));
  EXPECT_TRUE(io::is_mount_point("/proc"));
  const TempDir dir;
  EXPECT_FALSE(io::is_mount_point(dir.path().string()));
}

}  // namespace
}  // namespace mibz2::test
