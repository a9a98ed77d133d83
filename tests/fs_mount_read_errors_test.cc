// A read error of the source is not a fact about it (docs/ARCHITECTURE.md): never stored, never a size, never
// damage. With SOURCE behind a file system that fails reads of one range with EIO (FaultySource:
// mibz2-latency-fs), a pbzip2-made file of several streams:
// - through the mount, stat and open get EIO while the fault lasts, the log names the errno, no
//   index is stored; once the fault is gone the next stat indexes it whole (tried again at the
//   next need), and a later mount shows the same size;
// - a read of a file already indexed that meets the fault fails with EIO, logged as a read error
//   (not damage, not a wrong index: the index stands), and reads exactly once the fault is gone;
// - mibz2 index, info, verify and cat (-j 1, -j 2, a range) exit 1 with the error and store
//   nothing; once the fault is gone they exit 0 with the exact bytes.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "faulty_source.h"
#include "index_test_support.h"
#include "mount_harness.h"

namespace mibz2::test {
namespace {

using Ran = CommandResult;

class FsReadErrorTest : public FsMountTest {
 protected:
  void SetUp() override {
    FsMountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!have_program("pbzip2")) GTEST_SKIP() << "pbzip2 is not installed";
    // 8 MB of text in streams of 900 kB (pbzip2's own chunks), about 2.6 MB compressed.
    plain_ = text_bytes(8'000'000, 2301);
    const stdfs::path raw = stdfs::canonical(work_->path()) / "raw";
    stdfs::create_directories(raw);
    const stdfs::path plain_file = work_->path() / "dump.json";
    write_file(plain_file, as_span(plain_));
    const CommandResult made = run_command("pbzip2 -9 -p2 -c < " + shell_quote(plain_file.string()) + " > " +
                                           shell_quote((raw / "dump.json.bz2").string()));
    ASSERT_EQ(made.status, 0) << "pbzip2 failed";
    file_ = read_file(raw / "dump.json.bz2");
    ASSERT_TRUE(walk_file(as_span(file_), &layout_));
    ASSERT_GE(layout_.stream_bytes.size(), 5u) << "pbzip2 made fewer streams than expected";
    // One byte in the middle of the file: inside a block of a middle stream.
    fault_at_ = file_.size() / 2;
    faulty_ = std::make_unique<FaultySource>(raw, stdfs::canonical(outside_.path()) / "lat",
                                             outside_.path() / "fault-on", fault_at_, fault_at_ + 1,
                                             outside_.path() / "latency-fs.log");
    const std::string why = faulty_->wait_mounted();
    ASSERT_EQ(why, "");
  }

  void TearDown() override {
    FsMountTest::TearDown();  // mibz2fs first: it holds files of the faulty mount open
    if (faulty_) {
      const bool clean = faulty_->stop();
      EXPECT_TRUE(clean) << "mibz2-latency-fs did not end; its log:\n" << slurp(faulty_->log());
    }
  }

  stdfs::path source_file() const { return faulty_->mnt() / "dump.json.bz2"; }
  stdfs::path shown() const { return mnt_ / "dump.json"; }

  // The decompressed offset of the block whose compressed bytes hold the faulty byte.
  uint64_t faulty_block_offset() const {
    for (const BlockSpan& b : layout_.blocks)
      if (b.start_bit / 8 <= fault_at_ && fault_at_ < (b.end_bit + 7) / 8) return b.out_offset;
    ADD_FAILURE() << "the faulty byte " << fault_at_ << " is in no block";
    return 0;
  }

  // `mibz2 ARGS` (shell words) with its standard output and error; MIBZ2_TEST_BINARY runs
  // another build's mibz2 (to see the test fail before a fix).
  Ran mibz2(const std::string& args) {
    const char* other = std::getenv("MIBZ2_TEST_BINARY");
    const std::string program = other && *other ? other : MIBZ2_BINARY;
    return run_command("timeout -k 5 120 " + shell_quote(program) + " " + args + " </dev/null",
                       work_->path() / "mibz2-stderr.txt");
  }

  TempDir outside_;  // the faulty mount's place: outside work_, which must hold no mount at the end
  Bytes plain_;
  Bytes file_;
  FileLayout layout_;
  uint64_t fault_at_ = 0;
  std::unique_ptr<FaultySource> faulty_;
};

TEST_F(FsReadErrorTest, MountShowsNoSizeWhileTheSourceCannotBeReadAndTheRightOneAfter) {
  faulty_->fail(true);
  Mibz2fs* m = mount(faulty_->mnt());
  MOUNT_OR_RETURN(m);
  struct stat st {};
  errno = 0;
  EXPECT_NE(stat(shown().c_str(), &st), 0) << "stat shows " << st.st_size << " bytes of a file that could not be read";
  EXPECT_EQ(errno, EIO) << std::strerror(errno);
  errno = 0;
  const int fd = open(shown().c_str(), O_RDONLY);
  EXPECT_LT(fd, 0) << "open succeeded while the source could not be read";
  EXPECT_EQ(errno, EIO) << std::strerror(errno);
  if (fd >= 0) close(fd);
  EXPECT_EQ(count_index_files(idx_), 0u) << "an index was stored from a build that met a read error";
  const std::string log = slurp(m->log());
  EXPECT_NE(log.find("read error at byte"), std::string::npos) << log;
  EXPECT_NE(log.find("Input/output error (EIO)"), std::string::npos) << log;
  EXPECT_EQ(log.find("truncated"), std::string::npos) << log;

  // The fault is gone: the next stat tries again, and gets the whole file.
  faulty_->fail(false);
  ASSERT_EQ(stat(shown().c_str(), &st), 0) << std::strerror(errno);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), plain_.size());
  EXPECT_TRUE(same_bytes(read_all(shown()).data, plain_));
  EXPECT_EQ(count_index_files(idx_), 1u);
  ASSERT_TRUE(m->stop());

  // A later mount loads that index: the same size, the same bytes.
  Mibz2fs* again = mount(faulty_->mnt());
  MOUNT_OR_RETURN(again);
  ASSERT_EQ(stat(shown().c_str(), &st), 0) << std::strerror(errno);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), plain_.size());
  EXPECT_TRUE(same_bytes(read_all(shown()).data, plain_));
}

TEST_F(FsReadErrorTest, AReadThatMeetsTheFaultFailsAndTheNextTriesAgain) {
  Mibz2fs* first = mount(faulty_->mnt());
  MOUNT_OR_RETURN(first);
  ASSERT_TRUE(same_bytes(read_all(shown()).data, plain_));  // indexed, stored
  ASSERT_TRUE(first->stop());

  // A new mount (nothing cached) with the index loaded; then the fault.
  Mibz2fs* m = mount(faulty_->mnt());
  MOUNT_OR_RETURN(m);
  struct stat st {};
  ASSERT_EQ(stat(shown().c_str(), &st), 0) << std::strerror(errno);
  faulty_->fail(true);
  const ReadAll failed = read_all(shown());
  EXPECT_EQ(failed.error, EIO) << std::strerror(failed.error);
  EXPECT_LE(failed.data.size(), faulty_block_offset());
  EXPECT_TRUE(same_bytes(failed.data, Bytes(plain_.begin(), plain_.begin() + static_cast<std::ptrdiff_t>(
                                                                                std::min(failed.data.size(), plain_.size())))));
  const Xattr stats = get_xattr(mnt_, "user.mibz2fs.stats");
  EXPECT_NE(stats.value.find("read_errors="), std::string::npos) << stats.value;
  EXPECT_EQ(stats.value.find("read_errors=0"), std::string::npos) << stats.value;

  // The index stands: the same size, and the bytes once the fault is gone, with no new index.
  faulty_->fail(false);
  ASSERT_EQ(stat(shown().c_str(), &st), 0) << std::strerror(errno);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), plain_.size());
  EXPECT_TRUE(same_bytes(read_all(shown()).data, plain_));
  const std::string log = slurp(m->log());
  EXPECT_NE(log.find("read error in the source"), std::string::npos) << log;
  EXPECT_NE(log.find("Input/output error (EIO)"), std::string::npos) << log;
  EXPECT_EQ(log.find("does not match"), std::string::npos) << "a read error taken for a wrong index:\n" << log;
  EXPECT_EQ(log.find("damaged"), std::string::npos) << "a read error taken for damage:\n" << log;
  EXPECT_EQ(log.find("cannot be read"), std::string::npos) << "a read error told as damage:\n" << log;
  EXPECT_EQ(log.find("indexing"), std::string::npos) << "indexed again after a read error:\n" << log;
}

TEST_F(FsReadErrorTest, CommandsExitOneAndStoreNothingThenReadExactly) {
  const std::string idx = (stdfs::canonical(work_->path()) / "cmd-idx").string();
  const std::string file = shell_quote(source_file().string());
  const std::string with_idx = " --index-dir " + shell_quote(idx) + " ";
  faulty_->fail(true);
  for (const std::string args : {"index", "info", "verify", "cat -j 2", "cat -j 1", "cat -j 2 --offset 1000 --length 1000"}) {
    const Ran r = mibz2(args + with_idx + file);
    EXPECT_EQ(r.status, 1) << "mibz2 " << args << ":\n" << r.err;
    EXPECT_NE(r.err.find("Input/output error"), std::string::npos) << "mibz2 " << args << ":\n" << r.err;
    EXPECT_NE(r.err.find(source_file().string()), std::string::npos) << "mibz2 " << args << ":\n" << r.err;
    EXPECT_EQ(r.err.find("truncated"), std::string::npos) << "mibz2 " << args << ":\n" << r.err;
    EXPECT_EQ(count_index_files(idx), 0u) << "mibz2 " << args << " stored an index";
  }

  // Indexed without the fault; then reads of the faulty block through that index.
  faulty_->fail(false);
  const Ran indexed = mibz2("index" + with_idx + file);
  ASSERT_EQ(indexed.status, 0) << indexed.err;
  ASSERT_EQ(count_index_files(idx), 1u);
  faulty_->fail(true);
  const std::string range = " --offset " + std::to_string(faulty_block_offset()) + " --length 1000 ";
  for (const std::string& args : std::vector<std::string>{"cat -j 2" + range, "cat -j 2", "verify"}) {
    const Ran r = mibz2(args + with_idx + file);
    EXPECT_EQ(r.status, 1) << "mibz2 " << args << ":\n" << r.err;
    EXPECT_NE(r.err.find("Input/output error"), std::string::npos) << "mibz2 " << args << ":\n" << r.err;
    EXPECT_EQ(r.err.find("truncated"), std::string::npos) << "mibz2 " << args << ":\n" << r.err;
  }
  EXPECT_EQ(count_index_files(idx), 1u);

  faulty_->fail(false);
  for (const std::string args : {"cat -j 2", "cat -j 1"}) {
    const Ran r = mibz2(args + with_idx + file);
    EXPECT_EQ(r.status, 0) << "mibz2 " << args << ":\n" << r.err;
    EXPECT_TRUE(same_bytes(r.out, plain_)) << "mibz2 " << args;
  }
  const Ran ranged = mibz2("cat" + range + with_idx + file);
  EXPECT_EQ(ranged.status, 0) << ranged.err;
  const auto from = static_cast<std::ptrdiff_t>(faulty_block_offset());
  EXPECT_TRUE(same_bytes(ranged.out, Bytes(plain_.begin() + from, plain_.begin() + from + 1000)));
  const Ran verified = mibz2("verify" + with_idx + file);
  EXPECT_EQ(verified.status, 0) << verified.err;
}

}  // namespace
}  // namespace mibz2::test
