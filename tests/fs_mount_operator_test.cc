// Issue 23, item 5: what an operator hits, mounted for real: a .bz2 name of the longest length
// (its sidecar's name cannot exist, which is no reason to warn).
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
