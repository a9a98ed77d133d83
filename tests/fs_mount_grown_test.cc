// A .bz2 file growing under the mount (a download), looked at after each step, through a real
// mount: it was indexed from its start at every look (a 10 MB download looked at 15 times decoded
// 8 times its size) and left one index file per size seen in the index directory. Now at every
// step the mount shows exactly what bzip2 -dc makes of the file so far, all the steps together
// decode about one full index (the daemon's counters, user.mibz2fs.stats), and one index file is
// left.
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "index_test_support.h"
#include "mount_harness.h"

namespace mibz2::test {
namespace {

// The value of `key=` in a "key=value key=value" line, or -1.
long long field(const std::string& line, const std::string& key) {
  const size_t at = line.find(" " + key + "=");
  if (at == std::string::npos) return -1;
  return std::atoll(line.c_str() + at + key.size() + 2);
}

TEST_F(FsMountTest, ADownloadLookedAtInStepsIsIndexedAboutOnce) {
  // Two streams: many blocks, and a stream boundary for a step to cross.
  const Bytes a = libbz2_compress(text_bytes(2600000, 51), 1);
  const Bytes b = libbz2_compress(text_bytes(1400000, 52), 1);
  const Bytes file = concat({&a, &b});
  const index::BuildResult full = build_guarded(file, 2);
  ASSERT_TRUE(full.ok());
  uint64_t largest_block = 0;  // compressed bytes
  for (const index::BlockRecord& r : full.index.blocks) largest_block = std::max(largest_block, r.bit_length / 8 + 1);
  constexpr size_t kSteps = 15;
  ASSERT_GT(file.size() / kSteps, 2 * largest_block) << "every step should add complete blocks (its size shows)";

  const stdfs::path src = new_source();
  MOUNT_OR_RETURN(mount(src));
  const stdfs::path source = src / "dl.txt.bz2";
  const stdfs::path shown = mnt_ / "dl.txt";
  uint64_t size = 0;
  for (size_t step = 1; step <= kSteps; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    const uint64_t upto = file.size() * step / kSteps;
    {
      std::ofstream out(source, std::ios::binary | std::ios::app);  // the same inode, grown
      out.write(reinterpret_cast<const char*>(file.data() + size), static_cast<std::streamsize>(upto - size));
    }
    size = upto;
    const std::span<const uint8_t> so_far(file.data(), size);
    // The mount looks (stat), until it shows this step's size: the blocks complete so far, and a
    // nominal span for the one the file ends inside.
    const uint64_t want_size = build_guarded(so_far, 2).index.decompressed_size;
    struct stat st {};
    ASSERT_TRUE(eventually([&] { return stat(shown.c_str(), &st) == 0 && static_cast<uint64_t>(st.st_size) == want_size; }))
        << "shown size " << st.st_size << ", want " << want_size;
    // Its bytes are bzip2's, to where bzip2 -dc stops.
    const LibResult lib = libbz2_decompress(so_far);
    const ReadAll r = read_all(shown);
    EXPECT_TRUE(same_bytes(r.data, lib.out));
    EXPECT_EQ(r.error, lib.ok ? 0 : EIO);
    EXPECT_EQ(lib.ok, step == kSteps);
  }
  // Decoded by all the looks together: about one full index (each look decodes again the block
  // before its old end, and the one the file ends inside), where every look decoded the whole
  // file so far.
  const std::string stats = get_xattr(mnt_, "user.mibz2fs.stats").value;
  const long long bytes_indexed = field(stats, "bytes_indexed");
  const long long decoded = field(stats, "index_blocks_decoded");
  EXPECT_GT(bytes_indexed, 0) << stats;
  EXPECT_LE(bytes_indexed, static_cast<long long>(file.size() + 2 * kSteps * largest_block)) << stats;
  EXPECT_GT(decoded, 0) << stats;
  EXPECT_LE(decoded, static_cast<long long>(full.index.blocks.size() + 2 * kSteps + 4)) << stats;
  // One index file: those of the sizes seen before were removed as each new one was stored.
  EXPECT_EQ(count_index_files(idx_), 1u);
}

}  // namespace
}  // namespace mibz2::test
