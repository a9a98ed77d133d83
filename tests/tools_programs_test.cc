// The programs as a user runs them, without mounting: mibz2's exit statuses (bzip2's: 0 fine,
// 1 environmental, 2 bad input), its messages (each names its subcommand), plural forms, help and
// usage errors; mibz2fs's errors in its own words before anything is mounted.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "test_support.h"

#ifndef MIBZ2_BINARY
#error "MIBZ2_BINARY must name the mibz2 program"
#endif
#ifndef MIBZ2FS_BINARY
#error "MIBZ2FS_BINARY must name the mibz2fs program"
#endif

namespace mibz2::test {
namespace {

using Ran = CommandResult;

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class Mibz2Program : public ::testing::Test {
 protected:
  void SetUp() override {
    good_ = dir_.write("good.bz2", libbz2_compress(as_span(data_), 9));
    const Bytes one = libbz2_compress(as_span(data_), 9);
    two_streams_ = dir_.write("two.bz2", concat({&one, &one}));
    foreign_ = dir_.write("foreign.bz2", to_bytes("just some text, not bzip2\n"));
    truncated_ = dir_.write("cut.bz2", Bytes(one.begin(), one.begin() + static_cast<std::ptrdiff_t>(one.size() / 2)));
    missing_ = dir_.file("missing.bz2");
    not_a_dir_ = dir_.write("not-a-directory", to_bytes("x"));
  }

  // `program ARGS` (ARGS as shell words, already quoted where needed), with its index cache inside
  // the test's directory (never the user's).
  Ran run(const std::string& program, const std::string& args) {
    const auto err_path = dir_.file("stderr.txt");
    std::string cmd = "XDG_CACHE_HOME=" + shell_quote(dir_.file("cache").string());
    cmd += ' ';
    cmd += shell_quote(program);
    cmd += ' ';
    cmd += args;
    return run_command(cmd + " </dev/null", err_path);
  }
  Ran mibz2(const std::string& args) { return run(MIBZ2_BINARY, args); }
  Ran mibz2fs(const std::string& args) { return run(MIBZ2FS_BINARY, args); }

  static std::string q(const std::filesystem::path& p) { return shell_quote(p.string()); }

  // Every line on stderr says which subcommand speaks.
  static void expect_prefixed(const Ran& r, const std::string& prefix) {
    EXPECT_FALSE(r.err.empty());
    for (const std::string& line : r.err_lines()) EXPECT_EQ(line.rfind(prefix, 0), 0u) << line;
  }

  TempDir dir_;
  Bytes data_ = text_bytes(5000, 7);  // one block
  std::filesystem::path good_, two_streams_, foreign_, truncated_, missing_, not_a_dir_;
};

const char* const kCommands[] = {"cat", "cat -j 1", "index", "info", "verify"};

std::string subcommand_of(const std::string& command) { return "mibz2 " + command.substr(0, command.find(' ')) + ": "; }

TEST_F(Mibz2Program, AMissingFileIsAnEnvironmentalProblem) {
  for (const std::string command : kCommands) {
    SCOPED_TRACE(command);
    const Ran r = mibz2(command + " " + q(missing_));
    EXPECT_EQ(r.status, 1);
    expect_prefixed(r, subcommand_of(command) + missing_.string() + ": ");
    EXPECT_EQ(r.err_lines().size(), 1u) << r.err;
    EXPECT_NE(r.err.find("No such file or directory"), std::string::npos) << r.err;
  }
}

TEST_F(Mibz2Program, InputThatIsNotBzip2IsBadInput) {
  for (const std::string command : kCommands) {
    SCOPED_TRACE(command);
    const Ran r = mibz2(command + " " + q(foreign_));
    EXPECT_EQ(r.status, 2);
    EXPECT_TRUE(r.out.empty());
    expect_prefixed(r, subcommand_of(command) + foreign_.string() + ": ");
  }
}

TEST_F(Mibz2Program, ATruncatedFileFailsCatAndVerifyAndIsIndexedAsTruncated) {
  for (const std::string command : {"cat", "cat -j 1", "verify"}) {
    SCOPED_TRACE(command);
    const Ran r = mibz2(std::string(command) + " " + q(truncated_));
    EXPECT_EQ(r.status, 2);
    expect_prefixed(r, subcommand_of(command));
  }
  // index and info did their job: the index stored records the truncation.
  const Ran index = mibz2("index " + q(truncated_));
  EXPECT_EQ(index.status, 0) << index.err;
  EXPECT_NE(index.out_text().find(", truncated"), std::string::npos) << index.out_text();
  const Ran info = mibz2("info " + q(truncated_));
  EXPECT_EQ(info.status, 0) << info.err;
  EXPECT_NE(info.out_text().find("truncated:          yes"), std::string::npos) << info.out_text();
}

TEST_F(Mibz2Program, CatGoesOnPastFilesItCannotUseAndEndsWithTheWorstStatusLikeBzip2) {
  struct Case {
    std::vector<std::filesystem::path> files;
    int status;
  };
  const std::vector<Case> cases = {
      {{missing_, good_}, 1},
      {{foreign_, good_}, 2},
      {{missing_, foreign_, good_}, 2},
      {{good_, missing_, good_}, 1},
  };
  for (const std::string mode : {"", "-j 1"}) {
    for (const Case& c : cases) {
      std::string args = "cat " + mode;
      size_t goods = 0;
      for (const auto& f : c.files) {
        args += ' ';  // piece by piece: `" " + std::string` trips a false -Wrestrict in g++ 12
        args += q(f);
        goods += f == good_;
      }
      SCOPED_TRACE(args);
      const Ran r = mibz2(args);
      EXPECT_EQ(r.status, c.status) << r.err;
      Bytes expected;
      for (size_t i = 0; i < goods; ++i) expected.insert(expected.end(), data_.begin(), data_.end());
      EXPECT_TRUE(same_bytes(r.out, expected));
      expect_prefixed(r, "mibz2 cat: ");
      if (have_program("bzip2")) {
        std::string bzip2 = "bzip2 -dc";
        for (const auto& f : c.files) {
          bzip2 += ' ';
          bzip2 += q(f);
        }
        EXPECT_EQ(run_command(bzip2 + " >/dev/null 2>&1").status, c.status) << "bzip2 -dc says otherwise";
      }
    }
  }
}

TEST_F(Mibz2Program, CatStopsAtATruncatedFile) {
  for (const std::string mode : {"", "-j 1"}) {
    SCOPED_TRACE(mode);
    const Ran r = mibz2("cat " + mode + " " + q(truncated_) + " " + q(good_));
    EXPECT_EQ(r.status, 2);
    EXPECT_LT(r.out.size(), data_.size()) << "the good file after it was written";
  }
}

// A damaged copy of an indexed file can have its size and fingerprint (the damage lies between the
// first and last 64 KiB), so it finds the intact file's index, and the sampled blocks may all agree.
// The first block that does not match its record makes cat index the file again and go on: the
// output is what bzip2 -dc writes (the blocks before the damage), never nothing and never wrong.
TEST_F(Mibz2Program, CatOfADamagedTwinOfAnIndexedFileWritesWhatBzip2Does) {
  if (!have_program("bzip2")) GTEST_SKIP() << "bzip2 is not installed";
  const Bytes plain = text_bytes(3000000, 8);
  const Bytes intact = libbz2_compress(as_span(plain), 1);  // about 30 blocks
  Bytes damaged = intact;
  flip_bit(damaged, damaged.size() * 8 / 2);  // inside a block in the middle
  const std::filesystem::path a = dir_.write("intact.bz2", intact);
  const std::filesystem::path b = dir_.write("twin.bz2", damaged);
  ASSERT_EQ(mibz2("cat " + q(a)).status, 0);  // indexes it
  // What cat writes of the twin when it finds no index but its own: the blocks before the damage.
  const CommandResult alone = run_command("XDG_CACHE_HOME=" + q(dir_.file("cache-alone")) + " " + MIBZ2_BINARY +
                                          " cat " + q(b) + " 2>/dev/null");
  ASSERT_EQ(alone.status, 2);
  ASSERT_GT(alone.out.size(), 0u);
  EXPECT_TRUE(same_bytes(alone.out, Bytes(plain.begin(), plain.begin() + static_cast<std::ptrdiff_t>(alone.out.size()))));
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const Ran r = mibz2("cat " + q(b));
    EXPECT_EQ(r.status, 2);
    EXPECT_TRUE(same_bytes(r.out, alone.out)) << "not the blocks before the damage";
  }
  // And the intact file still reads whole (its index is built again if the twin's replaced it).
  const Ran whole = mibz2("cat " + q(a));
  EXPECT_EQ(whole.status, 0);
  EXPECT_TRUE(same_bytes(whole.out, plain));
}

// `mibz2 cat -` and `mibz2 cat` with no FILE read standard input as `bzip2 -dc` does: here always a
// pipe (`cat FILE |`), so nothing can be seeked and nothing is indexed. Intact input comes out as
// bzip2's; bad input ends with bzip2's status and exactly what `mibz2 cat FILE` writes of it (the
// verified blocks before the damage). A multi-block input larger than the decoders' window checks
// that what is read ahead and forgotten behind fits together.
TEST_F(Mibz2Program, CatReadsStandardInputAsBzip2Does) {
  if (!have_program("bzip2")) GTEST_SKIP() << "bzip2 is not installed";
  const Bytes big_plain = text_bytes(3000000, 8);
  const Bytes big = libbz2_compress(as_span(big_plain), 1);  // about 30 blocks
  const Bytes level9 = libbz2_compress(as_span(data_), 9);
  const Bytes multi = concat({&big, &level9, &big});
  Bytes damaged = big;
  flip_bit(damaged, damaged.size() * 8 / 2);  // inside a block in the middle
  const Bytes cut(big.begin(), big.begin() + static_cast<std::ptrdiff_t>(big.size() * 2 / 3));
  struct Case {
    std::string name;
    Bytes input;
  };
  const std::vector<Case> cases = {{"big.bz2", big},         {"multi.bz2", multi}, {"damaged.bz2", damaged},
                                   {"cut.bz2", cut},         {"empty.bz2", {}},    {"foreign.bz2", to_bytes("not bzip2\n")}};
  for (const Case& c : cases) {
    const std::filesystem::path file = dir_.write(c.name, c.input);
    const CommandResult ref = run_command("cat " + q(file) + " | bzip2 -dc 2>/dev/null");
    const Ran as_file = mibz2("cat " + q(file));
    for (const std::string args : {"cat -", "cat", "cat -j 1 -", "cat -j 2", "cat -j 3 -"}) {
      SCOPED_TRACE(c.name + ": " + args);
      const auto err_path = dir_.file("stderr.txt");
      std::string cmd = "cat " + q(file) + " | XDG_CACHE_HOME=" + q(dir_.file("cache")) + " " + MIBZ2_BINARY + " ";
      cmd += args;
      cmd += " 2>";
      cmd += q(err_path);
      const CommandResult r = run_command(cmd);
      const Bytes err_bytes = read_file(err_path);
      const std::string err(err_bytes.begin(), err_bytes.end());
      EXPECT_EQ(r.status, ref.status) << "bzip2 -dc's status is " << ref.status << "; stderr: " << err;
      if (ref.status == 0) {
        EXPECT_TRUE(same_bytes(r.out, ref.out));
        EXPECT_EQ(err, "");
      } else {
        EXPECT_TRUE(same_bytes(r.out, as_file.out)) << "not what mibz2 cat FILE writes of it";
        EXPECT_EQ(as_file.status, ref.status);
        EXPECT_EQ(err.rfind("mibz2 cat: (stdin): ", 0), 0u) << err;
      }
    }
  }
  // Standard input among files, in its place; a range of it is a usage error.
  const std::filesystem::path two = two_streams_;
  const CommandResult mixed = run_command("cat " + q(two) + " | " + MIBZ2_BINARY + " cat " + q(good_) + " - " +
                                          q(good_) + " 2>/dev/null");
  EXPECT_EQ(mixed.status, 0);
  EXPECT_TRUE(same_bytes(mixed.out, concat({&data_, &data_, &data_, &data_})));
  const CommandResult range = run_command("cat " + q(two) + " | " + MIBZ2_BINARY + " cat --offset 5 - 2>&1");
  EXPECT_EQ(range.status, 1);
  const std::string said(range.out.begin(), range.out.end());
  EXPECT_EQ(said.rfind("mibz2 cat: ", 0), 0u) << said;
}

// A FILE that is not a regular file but can be read is read as bzip2 -dc reads it: a fifo (with
// its writer), /dev/stdin from a pipe, a shell's <(command) (a /dev/fd/N pipe), a character device.
// Each is a stream like standard input: the same bytes as bzip2 -dc for intact input; for bad input
// bzip2's status and exactly what `mibz2 cat FILE` writes of it, the message naming the FILE
// (before: "cannot open: Invalid argument" and status 1 for all of them).
TEST_F(Mibz2Program, CatReadsAFileThatIsAStreamAsBzip2Does) {
  if (!have_program("bzip2") || !have_program("bash") || !have_program("mkfifo")) GTEST_SKIP() << "needs bzip2, bash, mkfifo";
  const Bytes big_plain = text_bytes(3000000, 9);
  const Bytes big = libbz2_compress(as_span(big_plain), 1);  // about 30 blocks
  Bytes damaged = big;
  flip_bit(damaged, damaged.size() * 8 / 2);
  const Bytes cut(big.begin(), big.begin() + static_cast<std::ptrdiff_t>(big.size() / 3));
  struct Case {
    std::string name;
    Bytes input;
  };
  const std::vector<Case> cases = {
      {"big.bz2", big}, {"damaged.bz2", damaged}, {"cut.bz2", cut}, {"foreign.bz2", to_bytes("not bzip2\n")}};
  const std::filesystem::path fifo = dir_.file("fifo");
  ASSERT_EQ(run_command("mkfifo " + q(fifo)).status, 0);
  const std::string env = "XDG_CACHE_HOME=" + q(dir_.file("cache")) + " ";
  const std::string mibz2 = shell_quote(MIBZ2_BINARY);
  for (const Case& c : cases) {
    const std::filesystem::path file = dir_.write(c.name, c.input);
    const CommandResult ref = run_command("bzip2 -dc < " + q(file) + " 2>/dev/null");
    const Ran as_file = this->mibz2("cat " + q(file));
    // How the stream reaches mibz2 cat, and the name its messages give.
    struct Way {
      std::string what, command, named;
    };
    // The fifo's writer is limited in time and never holds the output pipe, so nothing can hang.
    const std::string writer = "(timeout 30 sh -c " + shell_quote("cat " + q(file) + " > " + q(fifo)) + " >/dev/null 2>&1 &); ";
    const std::vector<Way> ways = {
        {"fifo", writer + env + mibz2 + " cat " + q(fifo), fifo.string()},
        {"fifo -j 1", writer + env + mibz2 + " cat -j 1 " + q(fifo), fifo.string()},
        {"/dev/stdin", "cat " + q(file) + " | " + env + mibz2 + " cat -j 3 /dev/stdin", "/dev/stdin"},
        {"<(cat FILE)", "bash -c " + shell_quote(env + mibz2 + " cat -j 2 <(cat " + q(file) + ")"), "/dev/fd/"},
    };
    for (const Way& w : ways) {
      SCOPED_TRACE(c.name + ": " + w.what);
      const auto err_path = dir_.file("stderr.txt");
      const CommandResult r = run_command(w.command + " 2>" + q(err_path));
      const Bytes err_bytes = read_file(err_path);
      const std::string err(err_bytes.begin(), err_bytes.end());
      EXPECT_EQ(r.status, ref.status) << "bzip2 -dc's status is " << ref.status << "; stderr: " << err;
      if (ref.status == 0) {
        EXPECT_TRUE(same_bytes(r.out, ref.out));
        EXPECT_EQ(err, "");
      } else {
        EXPECT_TRUE(same_bytes(r.out, as_file.out)) << "not what mibz2 cat FILE writes of it";
        EXPECT_EQ(err.rfind("mibz2 cat: " + w.named, 0), 0u) << err;
      }
    }
  }
  // A character device: /dev/null is empty, as for bzip2 -dc (status 2).
  const Ran null = this->mibz2("cat /dev/null");
  EXPECT_EQ(null.status, run_command("bzip2 -dc /dev/null 2>/dev/null").status);
  EXPECT_EQ(null.status, 2);
  EXPECT_EQ(null.err.rfind("mibz2 cat: /dev/null: ", 0), 0u) << null.err;
  // A range needs a file that can be seeked: a usage error, said before anything is opened (so no
  // writer is needed); a directory stays an error.
  const Ran range = this->mibz2("cat --offset 5 " + q(fifo));
  EXPECT_EQ(range.status, 1);
  EXPECT_EQ(range.err, "mibz2 cat: --offset and --length need a file that can be seeked: " + fifo.string() + " is a fifo\n");
  const Ran dir = this->mibz2("cat " + q(dir_.path()));
  EXPECT_EQ(dir.status, 1);
  EXPECT_NE(dir.err.find("Is a directory"), std::string::npos) << dir.err;
}

// Only regular files are indexed: mibz2 index and info of a fifo say so, at once (no writer is
// waited for), and exit 1 (before: "cannot open: Invalid argument"). mibz2 verify reads a stream as
// bzip2 -t does: every CRC checked in one pass, nothing stored; "-" is standard input.
TEST_F(Mibz2Program, OnlyRegularFilesAreIndexedAndVerifyReadsStreams) {
  if (!have_program("bzip2") || !have_program("mkfifo")) GTEST_SKIP() << "needs bzip2 and mkfifo";
  const std::filesystem::path fifo = dir_.file("fifo");
  ASSERT_EQ(run_command("mkfifo " + q(fifo)).status, 0);
  for (const std::string command : {"index", "info", "info --json"}) {
    SCOPED_TRACE(command);
    const Ran r = mibz2(command + " " + q(fifo));
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, subcommand_of(command) + fifo.string() +
                         ": a fifo, not a regular file: only regular files are indexed (mibz2 cat and mibz2 "
                         "verify read it as a stream)\n");
    EXPECT_TRUE(r.out.empty());
  }
  EXPECT_FALSE(std::filesystem::exists(dir_.file("cache") / "mibz2fs")) << "something was indexed";
  Bytes damaged = libbz2_compress(as_span(text_bytes(300000, 4)), 1);
  flip_bit(damaged, damaged.size() * 8 / 2);
  const std::filesystem::path bad = dir_.write("damaged.bz2", damaged);
  const std::string mibz2 = "XDG_CACHE_HOME=" + q(dir_.file("cache")) + " " + shell_quote(MIBZ2_BINARY);
  struct Case {
    std::string what, command;
    std::filesystem::path input;
    std::string out_prefix;
  };
  const std::vector<Case> cases = {
      {"fifo, intact", "(timeout 30 sh -c " + shell_quote("cat " + q(two_streams_) + " > " + q(fifo)) +
                           " >/dev/null 2>&1 &); " + mibz2 + " verify " + q(fifo),
       two_streams_, fifo.string() + ": OK: 2 blocks, 2 streams, "},
      {"/dev/stdin, damaged", "cat " + q(bad) + " | " + mibz2 + " verify /dev/stdin", bad, "/dev/stdin: DAMAGED: "},
      {"-, intact", "cat " + q(good_) + " | " + mibz2 + " verify -", good_, "(stdin): OK: 1 block, 1 stream, "},
      {"-, truncated", "cat " + q(truncated_) + " | " + mibz2 + " verify -", truncated_, "(stdin): DAMAGED: "},
      {"-, not bzip2", "cat " + q(foreign_) + " | " + mibz2 + " verify -", foreign_, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const int want = run_command("bzip2 -t < " + q(c.input) + " 2>/dev/null").status;
    const CommandResult r = run_command(c.command + " 2>/dev/null");
    EXPECT_EQ(r.status, want) << "bzip2 -t's status";
    const std::string out(r.out.begin(), r.out.end());
    if (c.out_prefix.empty()) EXPECT_EQ(out, "");
    else EXPECT_EQ(out.rfind(c.out_prefix, 0), 0u) << out;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_.file("cache") / "mibz2fs")) << "a stream was indexed";
}

TEST_F(Mibz2Program, IndexFailsWhenItCannotStoreTheIndex) {
  const Ran r = mibz2("index --index-dir " + q(not_a_dir_) + " " + q(good_));
  EXPECT_EQ(r.status, 1);
  expect_prefixed(r, "mibz2 index: ");
  EXPECT_NE(r.err.find("mibz2 index: " + good_.string() + ": index not stored: "), std::string::npos) << r.err;
  // The other commands only warn: storing is not their job.
  const Ran info = mibz2("info --index-dir " + q(not_a_dir_) + " " + q(good_));
  EXPECT_EQ(info.status, 0) << info.err;
  expect_prefixed(info, "mibz2 info: ");
  EXPECT_NE(info.err.find("index not saved"), std::string::npos) << info.err;
  // And with a usable index directory, index succeeds.
  const Ran ok = mibz2("index --index-dir " + q(dir_.file("idx")) + " " + q(good_));
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_TRUE(ok.err.empty()) << ok.err;
}

// --index-dir naming a symlink: refused as the index directory (as the man page says), never
// followed to its target, and said naming it, the same words as mibz2fs and Python use (the
// store's). Before: the path was resolved first, and the index stored in the link's target.
TEST_F(Mibz2Program, AnIndexDirThatIsASymlinkIsRefusedNotFollowed) {
  const std::filesystem::path target = dir_.file("idx-target"), link = dir_.file("idx-link");
  std::filesystem::create_directories(target);
  std::filesystem::create_directory_symlink(target, link);
  const std::string refused = link.string() + " is a symlink, refused as index directory";
  const Ran index = mibz2("index --index-dir " + q(link) + " " + q(good_));
  EXPECT_EQ(index.status, 1);
  EXPECT_NE(index.err.find("index not stored: " + refused), std::string::npos) << index.err;
  const Ran info = mibz2("info --index-dir " + q(link) + " " + q(good_));
  EXPECT_EQ(info.status, 0) << info.err;
  EXPECT_NE(info.err.find(refused), std::string::npos) << info.err;
  // Named relative to the working directory, the same.
  const Ran relative = run_command("cd " + q(dir_.path()) + " && XDG_CACHE_HOME=" + q(dir_.file("cache")) + " " +
                                       shell_quote(MIBZ2_BINARY) + " index --index-dir idx-link good.bz2 </dev/null",
                                   dir_.file("stderr.txt"));
  EXPECT_EQ(relative.status, 1);
  EXPECT_NE(relative.err.find(refused), std::string::npos) << relative.err;
  EXPECT_TRUE(std::filesystem::is_empty(target)) << "an index stored through the symlink";
  // The directory it points to, named, is used.
  EXPECT_EQ(mibz2("index --index-dir " + q(target) + " " + q(good_)).status, 0);
  EXPECT_FALSE(std::filesystem::is_empty(target));
}

// mibz2 index --output writes the index to a file of its own (a sidecar to publish with the dump):
// a copy of the dump with it beside it, and an empty index directory, is not indexed again.
TEST_F(Mibz2Program, IndexOutputWritesASidecarThatACopyUses) {
  const std::filesystem::path side = dir_.file("good.bz2.mibz2idx");
  const Ran r = mibz2("index --index-dir " + q(dir_.file("idx")) + " --output " + q(side) + " " + q(good_));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out_text().find("index written to " + side.string()), std::string::npos) << r.out_text();
  const Bytes written = read_file(side);
  ASSERT_GE(written.size(), 128u);
  EXPECT_EQ(std::string(written.begin(), written.begin() + 8), "MIBZ2IDX");
  std::filesystem::create_directories(dir_.file("copy"));
  std::filesystem::copy_file(good_, dir_.file("copy") / "good.bz2");
  std::filesystem::copy_file(side, dir_.file("copy") / "good.bz2.mibz2idx");
  const Ran info = mibz2("info --index-dir " + q(dir_.file("empty-idx")) + " " + q(dir_.file("copy") / "good.bz2"));
  EXPECT_EQ(info.status, 0) << info.err;
  EXPECT_NE(info.out_text().find("sidecar, validated for this file"), std::string::npos) << info.out_text();
  // One FILE only.
  const Ran two = mibz2("index --output " + q(dir_.file("x.mibz2idx")) + " " + q(good_) + " " + q(two_streams_));
  EXPECT_EQ(two.status, 1);
  expect_prefixed(two, "mibz2 index: ");
  EXPECT_FALSE(std::filesystem::exists(dir_.file("x.mibz2idx")));
  // A place it cannot be written is an error of its own.
  const Ran bad = mibz2("index --output " + q(not_a_dir_ / "x.mibz2idx") + " " + q(good_));
  EXPECT_EQ(bad.status, 1);
  expect_prefixed(bad, "mibz2 index: ");
}

TEST_F(Mibz2Program, PluralForms) {
  const Ran one = mibz2("index " + q(good_));
  EXPECT_EQ(one.status, 0) << one.err;
  EXPECT_NE(one.out_text().find(": 1 block in 1 stream, "), std::string::npos) << one.out_text();
  const Ran two = mibz2("index " + q(two_streams_));
  EXPECT_NE(two.out_text().find(": 2 blocks in 2 streams, "), std::string::npos) << two.out_text();
  const Ran verify = mibz2("verify " + q(good_) + " " + q(two_streams_));
  EXPECT_EQ(verify.status, 0) << verify.err;
  EXPECT_NE(verify.out_text().find(": OK: 1 block, 1 stream, "), std::string::npos) << verify.out_text();
  EXPECT_NE(verify.out_text().find(": OK: 2 blocks, 2 streams, "), std::string::npos) << verify.out_text();
}

TEST_F(Mibz2Program, SizesFollowTheSharedRule) {
  const Bytes& d = data_;
  for (const std::string range : {"--offset 1K --length 0.5K", "--offset=1KiB --length=512", "--offset 1024B --length 0.5kb"}) {
    SCOPED_TRACE(range);
    const Ran r = mibz2("cat " + range + " " + q(good_));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(same_bytes(r.out, Bytes(d.begin() + 1024, d.begin() + 1536)));
  }
}

TEST_F(Mibz2Program, UsageErrorsSayWhatAndWhereInOneLine) {
  struct Case {
    std::string args;
    std::string starts;
  };
  const std::string g = q(good_);
  const std::vector<Case> cases = {
      {"cat -j 0 " + g, "mibz2 cat: --threads: '0' is not a thread count (1 to 1024) (try 'mibz2 cat --help')"},
      {"index --threads=1025 " + g, "mibz2 index: --threads: '1025' is not a thread count (1 to 1024)"},
      {"cat --offset 1.5 " + g, "mibz2 cat: --offset: '1.5' is not a size ("},
      {"cat --length -1 " + g, "mibz2 cat: "},
      {"info --bogus " + g, "mibz2 info: "},
      {"verify", "mibz2 verify: "},
      {"frobnicate " + g, "mibz2: unknown command 'frobnicate' (try 'mibz2 --help')"},
      {"--bogus", "mibz2: "},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    const Ran r = mibz2(c.args);
    EXPECT_EQ(r.status, 1);
    EXPECT_TRUE(r.out.empty());
    ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
    EXPECT_EQ(r.err.rfind(c.starts, 0), 0u) << r.err;
  }
  // No command at all: the help, on stderr.
  const Ran none = mibz2("");
  EXPECT_EQ(none.status, 1);
  EXPECT_NE(none.err.find("Subcommands:"), std::string::npos) << none.err;
}

TEST_F(Mibz2Program, HelpOfEachCommandListsEachOptionOnce) {
  const Ran main = mibz2("--help");
  EXPECT_EQ(main.status, 0);
  for (const char* command : {"cat", "index", "info", "verify"}) EXPECT_NE(main.out_text().find(command), std::string::npos);
  struct Case {
    const char* command;
    std::vector<std::string> options;
  };
  const std::vector<Case> cases = {
      {"cat", {"--offset SIZE", "--length SIZE", "--lines FIRST:LAST"}},
      {"index", {"-f,--force", "-o,--output OUT"}},
      {"info", {"--json"}},
      {"verify", {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.command);
    const Ran r = mibz2(std::string(c.command) + " --help");
    EXPECT_EQ(r.status, 0);
    EXPECT_TRUE(r.err.empty());
    const std::string help = r.out_text();
    EXPECT_NE(help.find(std::string("Usage: mibz2 ") + c.command), std::string::npos) << help;
    std::vector<std::string> options = c.options;
    for (const char* o : {"-h,--help", "-j,--threads N", "--index-dir DIR", "  FILE ..."}) options.push_back(o);
    for (const std::string& o : options) EXPECT_EQ(count_of(help, o + " "), 1u) << o << " in:\n" << help;
    if (std::string(c.command) == "cat") {
      EXPECT_NE(help.find("K, M, G or T"), std::string::npos);
    }
  }
  for (const char* flag : {"-V", "--version"}) {
    const Ran v = mibz2(flag);
    EXPECT_EQ(v.status, 0);
    EXPECT_EQ(v.out_text().rfind("mibz2 ", 0), 0u) << v.out_text();
  }
}

// mibz2fs says in its own words what libfuse would have said in its own, before mounting anything.
TEST_F(Mibz2Program, Mibz2fsErrorsAreItsOwnAndOneLineEach) {
  const std::filesystem::path src = dir_.file("src"), mnt = dir_.file("mnt");
  std::filesystem::create_directories(src);
  std::filesystem::create_directories(mnt);
  struct Case {
    std::string args;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"-o nonsense_option " + q(src) + " " + q(mnt), "mibz2fs: unknown option(s): '-o nonsense_option' (try --help)"},
      {"--nonsense " + q(src) + " " + q(mnt), "mibz2fs: unknown option(s): '--nonsense' (try --help)"},
      {q(src) + " " + q(dir_.file("nowhere")), "mibz2fs: MOUNTPOINT " + dir_.file("nowhere").string() + ": No such file or directory"},
      {q(src) + " " + q(not_a_dir_), "mibz2fs: MOUNTPOINT " + not_a_dir_.string() + " is not a directory"},
      {q(src), "mibz2fs: missing MOUNTPOINT (usage: mibz2fs [options] SOURCE MOUNTPOINT; try --help)"},
      {q(src) + " " + q(mnt) + " extra", "mibz2fs: unexpected argument 'extra' after SOURCE and MOUNTPOINT (try --help)"},
      {q(src) + " " + q(mnt) + " -o", "mibz2fs: missing argument after '-o' (try --help)"},
      {"-o cache_size=100 " + q(src) + " " + q(mnt), "mibz2fs: -o cache_size: 100 B is too small for a cache: the least is 1M"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    const Ran r = mibz2fs(c.args);
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, c.error + "\n");
  }
  // A cache above the machine's memory is a warning (then the missing mount point an error).
  const Ran big = mibz2fs("-o cache_size=16000000T " + q(src) + " " + q(dir_.file("nowhere")));
  EXPECT_EQ(big.status, 1);
  ASSERT_EQ(big.err_lines().size(), 2u) << big.err;
  EXPECT_EQ(big.err_lines()[0].rfind("mibz2fs: -o cache_size: 15.3 EiB is more than this machine's memory (", 0), 0u)
      << big.err;
  // Help: ours alone, each option once (libfuse's list is not appended).
  const Ran help = mibz2fs("--help");
  EXPECT_EQ(help.status, 0);
  EXPECT_EQ(count_of(help.out_text(), "--help"), 1u) << help.out_text();
  EXPECT_EQ(count_of(help.out_text(), "--version"), 1u) << help.out_text();
  EXPECT_NE(help.out_text().find("critical"), std::string::npos);
}

}  // namespace
}  // namespace mibz2::test
