// `mibz2 cat` of a file that changes while it is written out, as a user's pipeline meets it: an
// indexed file, `mibz2 cat FILE | slow reader`, and meanwhile the file is rewritten in place (`cp
// other.bz2 FILE`) or replaced (`mv`). Rewritten: cat stops with status 1 and says the file changed
// while it was read, having written only the old content's bytes (never the new content's at the
// same offsets). Replaced: the descriptor cat holds reads the old file, which it writes whole.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "test_support.h"

#ifndef MIBZ2_BINARY
#error "MIBZ2_BINARY must name the mibz2 program"
#endif

namespace mibz2::test {
namespace {

struct CatRun {
  Bytes out;
  int status = -1;
  std::string err;
};

// Runs `mibz2 cat ARGS`, reads `pause_after` bytes of its output, runs `change`, then reads the
// rest (the reader is slow exactly once: while the file changes).
template <class Change>
CatRun cat_while(const TempDir& dir, const std::string& args, size_t pause_after, Change change) {
  const std::filesystem::path err_path = dir.file("stderr.txt");
  const std::string cmd = "XDG_CACHE_HOME=" + shell_quote(dir.file("cache").string()) + " " + MIBZ2_BINARY + " cat " +
                          args + " 2>" + shell_quote(err_path.string());
  FILE* p = popen(cmd.c_str(), "r");
  CatRun r;
  if (!p) return r;
  Bytes buf(1 << 16);
  bool changed = false;
  for (;;) {
    if (!changed && r.out.size() >= pause_after) {
      change();
      changed = true;
    }
    const size_t want = changed ? buf.size() : std::min(buf.size(), pause_after - r.out.size());
    const size_t n = fread(buf.data(), 1, want, p);
    if (n == 0) break;
    r.out.insert(r.out.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
  }
  if (!changed) change();
  const int w = pclose(p);
  r.status = WIFEXITED(w) ? WEXITSTATUS(w) : -1;
  const Bytes err = read_file(err_path);
  r.err.assign(err.begin(), err.end());
  return r;
}

// Two contents of 32 MiB: more than cat decodes ahead of a reader that paused after 1 MiB (its 4 MiB
// piece, and read-ahead of a quarter of its 48 MiB cache), made once for the suite.
struct Contents {
  Bytes old_plain = text_bytes(32u << 20, 41);
  Bytes new_plain = text_bytes(32u << 20, 42);
  Bytes old_file = libbz2_compress(as_span(old_plain), 1);
  Bytes new_file = libbz2_compress(as_span(new_plain), 1);
};
const Contents& contents() {
  static const Contents* c = new Contents;
  return *c;
}

class CatChanges : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.write("x.bz2", old_file_);
    // Indexed first: cat then reads it through the engine and its cache (-j 2: 48 MiB, read-ahead
    // a quarter of it), so most of the file is still to be decoded when it changes.
    const CommandResult indexed = run_command("XDG_CACHE_HOME=" + shell_quote(dir_.file("cache").string()) + " " +
                                              MIBZ2_BINARY + " index " + shell_quote(path_.string()));
    ASSERT_EQ(indexed.status, 0);
  }
  bool is_old_prefix(const Bytes& out) const {
    return out.size() <= old_plain_.size() && std::equal(out.begin(), out.end(), old_plain_.begin());
  }

  TempDir dir_;
  const Bytes& old_plain_ = contents().old_plain;
  const Bytes& new_plain_ = contents().new_plain;
  const Bytes& old_file_ = contents().old_file;
  const Bytes& new_file_ = contents().new_file;
  std::filesystem::path path_;
};

TEST_F(CatChanges, AFileRewrittenInPlaceWhileCatWritesItEndsCatWithAMessage) {
  const CatRun r = cat_while(dir_, "-j 2 " + shell_quote(path_.string()), 1 << 20, [&] {
    const int fd = ::open(path_.c_str(), O_WRONLY | O_TRUNC);  // cp's way: the same inode
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, new_file_.data(), new_file_.size()), static_cast<ssize_t>(new_file_.size()));
    ::close(fd);
  });
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("changed while it was read"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(path_.string()), std::string::npos) << r.err;
  EXPECT_LT(r.out.size(), old_plain_.size());
  EXPECT_TRUE(is_old_prefix(r.out)) << "cat wrote bytes that are not the old content's";
  // The next cat is the new content's, whole.
  const CommandResult again = run_command("XDG_CACHE_HOME=" + shell_quote(dir_.file("cache").string()) + " " +
                                          MIBZ2_BINARY + " cat " + shell_quote(path_.string()));
  EXPECT_EQ(again.status, 0);
  EXPECT_TRUE(again.out == new_plain_);
}

TEST_F(CatChanges, AFileReplacedByARenameWhileCatWritesItIsWrittenWhole) {
  const CatRun r = cat_while(dir_, "-j 2 " + shell_quote(path_.string()), 1 << 20, [&] {
    const std::filesystem::path other = dir_.write("other.bz2", new_file_);
    std::filesystem::rename(other, path_);
  });
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(r.out == old_plain_) << "not the old content, whole";
}

}  // namespace
}  // namespace mibz2::test
