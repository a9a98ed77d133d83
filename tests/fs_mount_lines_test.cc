// user.mibz2fs.lines through a real mount: on files made by bzip2, lbzip2 and
// pbzip2, a multistream file of mixed levels whose last line has no newline, and an empty one, the
// attribute is what `bzip2 -dc FILE | sed -n '$='` says; a damaged file says its lines are unknown
// and why; a file whose index is not ready answers ENODATA at once (builds held back by mibz2fs's
// test hook, MIBZ2FS_TEST_HOLD_BUILDS), and its new count once the index is there.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "index_test_support.h"
#include "mount_harness.h"

namespace mibz2::test {
namespace {

constexpr const char* kLines = "user.mibz2fs.lines";

// Lines of the decompressed `file` as sed counts them: `bzip2 -dc | sed -n '$='` ("0" for none).
std::string sed_count(const stdfs::path& file) {
  const CommandResult r = run_command("bzip2 -dc " + shell_quote(file.string()) + " | sed -n '$='");
  EXPECT_EQ(r.status, 0) << file;
  std::string out = text_of(r.out);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out.empty() ? "0" : out;
}

class FsLinesTest : public FsHeldBuildsTest {};

TEST_F(FsLinesTest, EachFilesLinesAreWhatSedCounts) {
  const stdfs::path src = new_source();
  // Lines that start and end on both sides of block and stream boundaries; the last one without
  // its newline (sed counts it, wc -l does not).
  const Bytes a = text_bytes(420000, 61), b = text_bytes(250000, 62), tail = to_bytes("no newline at the end");
  const Bytes fa = libbz2_compress(a, 1), fb = libbz2_compress(b, 2), ft = libbz2_compress(tail, 9);
  write_file(src / "multi.txt.bz2", concat({&fa, &fb, &ft}));
  write_file(src / "empty.txt.bz2", libbz2_compress({}, 9));
  const Bytes plain = text_bytes(700000, 63);
  write_file(work_->path() / "plain.txt", plain);
  std::vector<std::string> shown = {"multi.txt", "empty.txt"};
  for (const char* maker : {"bzip2 -1", "lbzip2 -1 -n 2", "pbzip2 -1 -p2"}) {
    const std::string program = std::string(maker).substr(0, std::string(maker).find(' '));
    if (!have_program(program)) {
      ADD_FAILURE() << program << " is not installed";
      continue;
    }
    ASSERT_EQ(run_command(std::string(maker) + " -c < " + shell_quote((work_->path() / "plain.txt").string()) + " > " +
                          shell_quote((src / (program + ".txt.bz2")).string()))
                  .status,
              0)
        << maker;
    shown.push_back(program + ".txt");
  }
  MOUNT_OR_RETURN(mount(src));
  for (const std::string& name : shown) {
    const std::string want = sed_count(src / (name + ".bz2"));
    const Xattr got = get_xattr(mnt_ / name, kLines);
    ASSERT_EQ(got.error, 0) << name << ": " << std::strerror(got.error);
    EXPECT_EQ(got.value, want) << name;
  }
  // The counts are the files' own, not all alike: the multistream file's last line is counted.
  EXPECT_EQ(get_xattr(mnt_ / "multi.txt", kLines).value, std::to_string(sed_lines(concat({&a, &b, &tail}))));
  EXPECT_EQ(get_xattr(mnt_ / "empty.txt", kLines).value, "0");
}

TEST_F(FsLinesTest, ADamagedFileSaysItsLinesAreUnknownAndWhy) {
  const stdfs::path src = new_source();
  const Bytes file = libbz2_compress(text_bytes(600000, 64), 1);
  FileLayout layout;
  ASSERT_TRUE(walk_file(file, &layout));
  ASSERT_GE(layout.blocks.size(), 4u);
  const size_t middle = layout.blocks.size() / 2;
  const std::optional<Bytes> damaged = with_crc_only_damage(file, layout.blocks[middle]);
  ASSERT_TRUE(damaged);
  write_file(src / "damaged.txt.bz2", *damaged);
  MOUNT_OR_RETURN(mount(src));
  const Xattr got = get_xattr(mnt_ / "damaged.txt", kLines);
  ASSERT_EQ(got.error, 0) << std::strerror(got.error);
  EXPECT_EQ(got.value.rfind("unknown: block " + std::to_string(middle) + " ", 0), 0u) << got.value;
  EXPECT_NE(got.value.find("is damaged (CRC mismatch)"), std::string::npos) << got.value;
  EXPECT_EQ(get_xattr(mnt_ / "damaged.txt", "user.mibz2fs.damaged_blocks").value, "1");
}

// The file is indexed, so the kernel holds its attributes and asks no getattr (which would wait)
// before the getxattr; then its source changes while builds are held: the attribute is not there
// yet, at once; once the build is released, it is the new content's count.
TEST_F(FsLinesTest, AFileNotIndexedYetHasNoLinesAndNeverWaits) {
  const stdfs::path src = new_source();
  write_file(src / "f.txt.bz2", libbz2_compress(to_bytes("one\ntwo\n"), 1));
  MOUNT_OR_RETURN(mount(src));
  const stdfs::path shown = mnt_ / "f.txt";
  struct stat st;
  ASSERT_EQ(stat(shown.c_str(), &st), 0);
  ASSERT_EQ(get_xattr(shown, kLines).value, "2");
  // An O_PATH descriptor pins the dentry (as in FsProgressTest: another test's drop_caches would
  // make the kernel look the file up again, and that waits for the index).
  struct Pin {
    int fd;
    ~Pin() { if (fd >= 0) close(fd); }
  } const pin{open(shown.c_str(), O_PATH)};
  ASSERT_GE(pin.fd, 0) << std::strerror(errno);

  hold();
  const Bytes changed = text_bytes(300000, 65);
  write_file(src / "f.txt.bz2", libbz2_compress(changed, 1));
  Xattr lines, state;
  ASSERT_TRUE(returns_at_once([&] {
    lines = get_xattr(shown, kLines);
    state = get_xattr(shown, "user.mibz2fs.index");
  })) << "user.mibz2fs.lines waited for the index";
  EXPECT_EQ(lines.error, ENODATA) << lines.value;
  EXPECT_TRUE(state.value == "queued" || state.value.rfind("building ", 0) == 0) << state.value;

  release();
  const ReadAll r = read_all(shown);
  ASSERT_EQ(r.error, 0);
  ASSERT_TRUE(same_bytes(r.data, changed));
  EXPECT_EQ(get_xattr(shown, kLines).value, sed_count(src / "f.txt.bz2"));
  EXPECT_EQ(get_xattr(shown, kLines).value, std::to_string(sed_lines(changed)));
}

}  // namespace
}  // namespace mibz2::test
