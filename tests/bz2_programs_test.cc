// Files made by the real compressors (bzip2, lbzip2, pbzip2, 7-Zip), decoded by `mibz2 cat`, and
// the exit status and message of `mibz2 cat` on damaged input. A compressor that is not installed
// skips its test (scripts/setup installs them all).
#include <gtest/gtest.h>

#include <string>

#include "test_support.h"

#ifndef MIBZ2_BINARY
#error "MIBZ2_BINARY must name the mibz2 program"
#endif

namespace mibz2::test {
namespace {

const std::string kMibz2 = MIBZ2_BINARY;

// ~1.3 MB of mixed content: several blocks at level 1, two at level 9.
const Bytes& sample() {
  static const Bytes data = [] {
    const Bytes a = text_bytes(700000, 1);
    const Bytes b = runs_bytes(300000, 2);
    const Bytes c = random_bytes(200000, 3);
    const Bytes d = all_byte_values(400, 4);
    return concat({&a, &b, &c, &d});
  }();
  return data;
}

struct Cat {
  int status;
  Bytes out;
  std::string err;
};

// `mibz2 cat [options] FILES`, with the index cache inside `dir` (never the user's).
Cat mibz2_cat(const TempDir& dir, const std::vector<std::filesystem::path>& files, const std::string& options = "") {
  std::string cmd = "XDG_CACHE_HOME=" + shell_quote(dir.file("cache").string());
  cmd += ' ';
  cmd += shell_quote(kMibz2);
  cmd += " cat ";
  cmd += options;
  // Appended piece by piece: `" " + std::string(...)` trips a false -Wrestrict in g++ 12.
  for (const auto& f : files) {
    cmd += ' ';
    cmd += shell_quote(f.string());
  }
  const auto err_path = dir.file("stderr.txt");
  cmd += " 2>";
  cmd += shell_quote(err_path.string());
  CommandResult r = run_command(cmd);
  const Bytes err = read_file(err_path);
  return {r.status, std::move(r.out), std::string(err.begin(), err.end())};
}

struct Compressor {
  std::string program;
  // Shell command compressing IN into OUT at level L.
  std::string (*command)(const std::string& program, const std::string& in, const std::string& out, int level);
};

std::string bzip2_cmd(const std::string& p, const std::string& in, const std::string& out, int level) {
  return p + " -c -" + std::to_string(level) + " " + in + " > " + out;
}
std::string lbzip2_cmd(const std::string& p, const std::string& in, const std::string& out, int level) {
  return p + " -c -n 2 -" + std::to_string(level) + " " + in + " > " + out;
}
std::string pbzip2_cmd(const std::string& p, const std::string& in, const std::string& out, int level) {
  return p + " -c -p2 -" + std::to_string(level) + " " + in + " > " + out;
}
std::string sevenzip_cmd(const std::string& p, const std::string& in, const std::string& out, int level) {
  return p + " a -tbzip2 -mx=" + std::to_string(level) + " -bd -y " + out + " " + in + " > /dev/null";
}

class Programs : public ::testing::TestWithParam<Compressor> {};

TEST_P(Programs, DecodedByMibz2Cat) {
  const Compressor& c = GetParam();
  if (!have_program(c.program)) GTEST_SKIP() << c.program << " is not installed";
  TempDir dir;
  const auto in = dir.write("in.dat", sample());
  for (int level : {1, 9}) {
    SCOPED_TRACE(c.program + " level " + std::to_string(level));
    const auto out = dir.file("out" + std::to_string(level) + ".bz2");
    const CommandResult made =
        run_command(c.command(c.program, shell_quote(in.string()), shell_quote(out.string()), level));
    ASSERT_EQ(made.status, 0) << "compressing failed";
    const Bytes file = read_file(out);
    ASSERT_GT(file.size(), 1000u);
    ASSERT_EQ(file[0], 'B');
    FileLayout layout;
    ASSERT_TRUE(walk_file(file, &layout));
    EXPECT_GE(layout.blocks.size(), level == 1 ? 10u : 2u);

    for (const std::string options : {"", "-j 1", "-j 2"}) {
      const Cat cat = mibz2_cat(dir, {out}, options);
      EXPECT_EQ(cat.status, 0) << "mibz2 cat " << options << ": " << cat.err;
      EXPECT_TRUE(same_bytes(cat.out, sample())) << "mibz2 cat " << options;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Compressors, Programs,
                         ::testing::Values(Compressor{"bzip2", bzip2_cmd}, Compressor{"lbzip2", lbzip2_cmd},
                                           Compressor{"pbzip2", pbzip2_cmd}, Compressor{"7zz", sevenzip_cmd}),
                         [](const ::testing::TestParamInfo<Compressor>& info) {
                           return info.param.program == "7zz" ? std::string("sevenzip") : info.param.program;
                         });

// Run with the default options (threads, through the block index) and with -j 1 (streaming).
class Mibz2Cat : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!have_program("bzip2")) GTEST_SKIP() << "bzip2 is not installed";
    const auto in = dir_.write("in.dat", data_);
    good_ = dir_.file("good.bz2");
    ASSERT_EQ(run_command("bzip2 -c -1 " + shell_quote(in.string()) + " > " + shell_quote(good_.string())).status, 0);
    file_ = read_file(good_);
  }

  // bzip2 -dc as the judge of the same file: its exit status.
  int bzip2_status(const std::filesystem::path& p) {
    return run_command("bzip2 -dc " + shell_quote(p.string()) + " >/dev/null 2>&1").status;
  }

  TempDir dir_;
  Bytes data_ = text_bytes(250000, 9);
  std::filesystem::path good_;
  Bytes file_;
  const std::string options_ = GetParam();
};

TEST_P(Mibz2Cat, TruncatedFileExitsWithStatus2) {
  for (size_t len : {file_.size() / 2, file_.size() - 1, size_t{3}, size_t{0}}) {
    SCOPED_TRACE("truncated to " + std::to_string(len) + " bytes");
    const std::string name = "cut" + std::to_string(len) + ".bz2";
    const auto p = dir_.write(name, Bytes(file_.begin(), file_.begin() + static_cast<std::ptrdiff_t>(len)));
    const Cat cat = mibz2_cat(dir_, {p}, options_);
    EXPECT_EQ(bzip2_status(p), 2);
    EXPECT_EQ(cat.status, 2) << "mibz2 cat " << options_ << ": " << cat.err;
    EXPECT_NE(cat.err.find(name), std::string::npos) << cat.err;
    // What was written is a prefix of the data: whole blocks that passed their CRC.
    ASSERT_LE(cat.out.size(), data_.size());
    EXPECT_TRUE(std::equal(cat.out.begin(), cat.out.end(), data_.begin()));
  }
}

TEST_P(Mibz2Cat, DamagedAndForeignFiles) {
  Bytes damaged = file_;
  damaged[damaged.size() / 2] ^= 0x10;
  const auto bad = dir_.write("bad.bz2", damaged);
  Cat cat = mibz2_cat(dir_, {bad}, options_);
  EXPECT_EQ(cat.status, 2);
  EXPECT_EQ(bzip2_status(bad), 2);
  EXPECT_NE(cat.err.find("bad.bz2"), std::string::npos) << cat.err;

  const auto text = dir_.write("plain.txt", to_bytes("just some text\n"));
  cat = mibz2_cat(dir_, {text}, options_);
  EXPECT_EQ(cat.status, 2);
  EXPECT_EQ(bzip2_status(text), 2);
  EXPECT_TRUE(cat.out.empty());
  EXPECT_FALSE(cat.err.empty());

  cat = mibz2_cat(dir_, {dir_.file("does-not-exist.bz2")}, options_);
  EXPECT_NE(cat.status, 0);
  EXPECT_FALSE(cat.err.empty());
}

TEST_P(Mibz2Cat, TrailingGarbageIsIgnoredWithAWarning) {
  const Bytes tail = to_bytes("this is not bzip2\n");
  const auto p = dir_.write("tail.bz2", concat({&file_, &tail}));
  const Cat cat = mibz2_cat(dir_, {p}, options_);
  EXPECT_EQ(cat.status, 0);
  EXPECT_EQ(bzip2_status(p), 0);
  EXPECT_TRUE(same_bytes(cat.out, data_));
  EXPECT_NE(cat.err.find("garbage"), std::string::npos) << cat.err;
}

TEST_P(Mibz2Cat, SeveralFilesAndStreams) {
  const Bytes twice = concat({&file_, &file_});
  const auto p = dir_.write("twice.bz2", twice);
  const Cat cat = mibz2_cat(dir_, {good_, p}, options_);
  EXPECT_EQ(cat.status, 0) << cat.err;
  const Bytes expected = concat({&data_, &data_, &data_});
  EXPECT_TRUE(same_bytes(cat.out, expected));
}

INSTANTIATE_TEST_SUITE_P(Modes, Mibz2Cat, ::testing::Values(std::string(), std::string("-j 1")),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param.empty() ? std::string("default") : std::string("streaming");
                         });

}  // namespace
}  // namespace mibz2::test
