// The trust rule for index files (index/index_trust.h, FORMAT.md "Trust"), as a table: who may own
// an index file and its directory, and with which modes, for it to be believed.
#include <sys/stat.h>

#include <string>

#include <gtest/gtest.h>

#include "index/index_trust.h"

namespace mibz2::test {
namespace {

using index::Trust;

struct stat attrs(mode_t type_and_mode, uid_t uid) {
  struct stat st{};
  st.st_mode = type_and_mode;
  st.st_uid = uid;
  st.st_gid = 4242;  // the group never matters: a group that may write is "others" here
  return st;
}

constexpr uid_t kMe = 1000, kOther = 65534, kRoot = 0;

struct Case {
  const char* what;
  uid_t euid;
  mode_t file_mode;
  uid_t file_uid;
  mode_t dir_mode;
  uid_t dir_uid;
  Trust expected;
};

TEST(IndexTrust, TheRuleAsATable) {
  const Case cases[] = {
      // Believed: written by the euid or root, in a directory only they can change.
      {"mine, in my private directory", kMe, S_IFREG | 0644, kMe, S_IFDIR | 0700, kMe, Trust::kTrusted},
      {"mine, read-only, in my 0755 directory", kMe, S_IFREG | 0444, kMe, S_IFDIR | 0755, kMe, Trust::kTrusted},
      {"root's, in root's directory", kMe, S_IFREG | 0644, kRoot, S_IFDIR | 0755, kRoot, Trust::kTrusted},
      {"mine, in root's directory", kMe, S_IFREG | 0600, kMe, S_IFDIR | 0755, kRoot, Trust::kTrusted},
      {"root's, in my directory", kMe, S_IFREG | 0644, kRoot, S_IFDIR | 0700, kMe, Trust::kTrusted},
      {"root's, in root's sticky shared directory", kRoot, S_IFREG | 0644, kRoot, S_IFDIR | 01777, kRoot,
       Trust::kTrusted},
      {"mine, in root's sticky shared directory", kMe, S_IFREG | 0644, kMe, S_IFDIR | 01777, kRoot, Trust::kTrusted},
      {"mine, in my sticky group-writable directory", kMe, S_IFREG | 0644, kMe, S_IFDIR | 01775, kMe,
       Trust::kTrusted},
      {"root's, as root, in root's 0700 directory", kRoot, S_IFREG | 0644, kRoot, S_IFDIR | 0700, kRoot,
       Trust::kTrusted},
      {"setuid bits do not matter", kMe, S_IFREG | 04755, kMe, S_IFDIR | 02755, kMe, Trust::kTrusted},

      // The file: another writer, or others may change it.
      {"another user's, in root's sticky shared directory (the issue)", kRoot, S_IFREG | 0644, kOther,
       S_IFDIR | 01777, kRoot, Trust::kFileOwner},
      {"another user's, in my private directory", kMe, S_IFREG | 0644, kOther, S_IFDIR | 0700, kMe,
       Trust::kFileOwner},
      {"my user's, as root", kRoot, S_IFREG | 0644, kMe, S_IFDIR | 0755, kRoot, Trust::kFileOwner},
      {"group-writable", kMe, S_IFREG | 0664, kMe, S_IFDIR | 0700, kMe, Trust::kFileWritable},
      {"writable by others", kMe, S_IFREG | 0646, kMe, S_IFDIR | 0700, kMe, Trust::kFileWritable},
      {"root's, writable by others", kRoot, S_IFREG | 0666, kRoot, S_IFDIR | 0700, kRoot, Trust::kFileWritable},
      {"a fifo", kMe, S_IFIFO | 0600, kMe, S_IFDIR | 0700, kMe, Trust::kFileNotRegular},
      {"a directory", kMe, S_IFDIR | 0700, kMe, S_IFDIR | 0700, kMe, Trust::kFileNotRegular},
      {"a symlink", kMe, S_IFLNK | 0777, kMe, S_IFDIR | 0700, kMe, Trust::kFileNotRegular},
      {"a device", kRoot, S_IFCHR | 0600, kRoot, S_IFDIR | 0755, kRoot, Trust::kFileNotRegular},

      // Its directory: someone else could rename another file into its place.
      {"mine, in a directory writable by all, not sticky", kMe, S_IFREG | 0644, kMe, S_IFDIR | 0777, kRoot,
       Trust::kDirWritable},
      {"mine, in my group-writable directory", kMe, S_IFREG | 0644, kMe, S_IFDIR | 0770, kMe, Trust::kDirWritable},
      {"mine, in my directory writable by others", kMe, S_IFREG | 0644, kMe, S_IFDIR | 0703, kMe,
       Trust::kDirWritable},
      {"root's, in another user's directory", kRoot, S_IFREG | 0644, kRoot, S_IFDIR | 0755, kOther, Trust::kDirOwner},
      {"mine, in another user's sticky directory (its owner may remove anything)", kMe, S_IFREG | 0644, kMe,
       S_IFDIR | 01777, kOther, Trust::kDirOwner},
      {"mine, in a directory that is not one", kMe, S_IFREG | 0644, kMe, S_IFREG | 0700, kMe, Trust::kDirNotDirectory},
      // The file's own faults come first.
      {"another user's in another user's directory", kMe, S_IFREG | 0644, kOther, S_IFDIR | 0777, kOther,
       Trust::kFileOwner},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const struct stat file = attrs(c.file_mode, c.file_uid), dir = attrs(c.dir_mode, c.dir_uid);
    EXPECT_EQ(static_cast<int>(index::judge_index_file(file, dir, c.euid)), static_cast<int>(c.expected));
    // The directory part alone is what the index directory is judged by at mount.
    const Trust dir_alone = index::judge_index_dir(dir, c.euid);
    if (c.expected == Trust::kDirOwner || c.expected == Trust::kDirWritable || c.expected == Trust::kDirNotDirectory) {
      EXPECT_EQ(static_cast<int>(dir_alone), static_cast<int>(c.expected));
    } else if (c.expected == Trust::kTrusted) {
      EXPECT_EQ(static_cast<int>(dir_alone), static_cast<int>(Trust::kTrusted));
    }
  }
}

TEST(IndexTrust, ExplanationsNameTheOwnerAndTheMode) {
  const struct stat file = attrs(S_IFREG | 0644, kOther), dir = attrs(S_IFDIR | 0777, kRoot);
  EXPECT_EQ(index::explain(Trust::kFileOwner, file, dir, kRoot), "owned by uid 65534 (only root's are believed)");
  EXPECT_EQ(index::explain(Trust::kFileOwner, file, dir, kMe),
            "owned by uid 65534 (only uid 1000's or root's are believed)");
  EXPECT_EQ(index::explain(Trust::kFileWritable, attrs(S_IFREG | 0664, kMe), dir, kMe),
            "writable by group or others (mode 0664)");
  EXPECT_EQ(index::explain(Trust::kDirWritable, file, dir, kMe),
            "its directory is writable by group or others without the sticky bit (mode 0777)");
  EXPECT_EQ(index::explain(Trust::kDirOwner, file, attrs(S_IFDIR | 0755, kOther), kMe),
            "its directory is owned by uid 65534 (only uid 1000's or root's are believed)");
  // Said of the index directory itself, at mount.
  EXPECT_EQ(index::explain_dir(Trust::kDirWritable, dir, kMe),
            "writable by group or others without the sticky bit (mode 0777)");
}

}  // namespace
}  // namespace mibz2::test
