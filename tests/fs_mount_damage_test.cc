// Damage is never silent through the mount: for every damaged file made here (cut at many points,
// bits flipped in the last block, a block cut out of a stream or repeated, a single block whose
// tables are broken, nothing but a header), reading it through the mount with read(2), as `cat`
// does, fails exactly when bzip2 -dc (libbz2) fails; the bytes before the error are exactly
// bzip2's, up to the first damaged block; the damage shows in the attributes, in `mibz2 info` and
// in one log line per file; the intact neighbours read exactly.
#include <fcntl.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "bz2/stream_parser.h"
#include "index_test_support.h"
#include "mount_harness.h"

namespace mibz2::test {
namespace {

// The base of most cases: two streams (levels 1 and 2), several blocks each.
struct Base {
  Bytes plain;
  Bytes file;
  FileLayout layout;
};

const Base& base() {
  static const Base b = [] {
    Base x;
    const Bytes a = text_bytes(420000, 31), c = text_bytes(250000, 32);
    const Bytes fa = libbz2_compress(a, 1), fc = libbz2_compress(c, 2);
    x.plain = concat({&a, &c});
    x.file = concat({&fa, &fc});
    if (!walk_file(x.file, &x.layout)) std::abort();
    return x;
  }();
  return b;
}

Bytes prefix(const Bytes& b, uint64_t n) { return Bytes(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n)); }

// The damaged files of the test, by name, each with what it is.
std::map<std::string, Bytes> damaged_files() {
  const Base& b = base();
  std::map<std::string, Bytes> files;
  // Cut at many points: inside the first, a middle and the last block, inside an end-of-stream
  // marker, inside the second stream's header, and right after its "B".
  const BlockSpan& first = b.layout.blocks.front();
  const BlockSpan& middle = b.layout.blocks[b.layout.blocks.size() / 2];
  const BlockSpan& last = b.layout.blocks.back();
  const std::vector<std::pair<std::string, uint64_t>> cuts = {
      {"cut-first-block", first.start_bit / 8 + 100},
      {"cut-middle-block", (middle.start_bit + middle.end_bit) / 16},
      {"cut-last-block", last.end_bit / 8 - 3},
      {"cut-end-marker", b.layout.eos_bits[0] / 8 + 5},
      {"cut-second-header", b.layout.stream_bytes[1] + 3},
      {"cut-after-B", b.layout.stream_bytes[1] + 1},
      {"cut-final-crc", b.file.size() - 2},
  };
  for (const auto& [name, bytes] : cuts) files[name + ".bz2"] = prefix(b.file, bytes);

  // Bits flipped in the last block: its CRC fails; its tables break (undecodable at the end).
  Bytes crc = b.file;
  flip_bit(crc, *find_crc_only_flip(b.file, last));
  files["flip-last-block-crc.bz2"] = crc;
  Bytes table = b.file;
  flip_bit(table, *find_early_failure_flip(b.file, last));
  files["flip-last-block-table.bz2"] = table;

  // A block cut out of the first stream, and one repeated: every block's own CRC passes, the
  // stream's combined CRC does not. (Only the first stream's bits move, so the second stream's
  // header moves by a whole number of bytes only if the removed length is; re-pad it instead by
  // splicing within one single-stream file.)
  const Bytes one = libbz2_compress(text_bytes(900000, 33), 1);
  FileLayout ol;
  if (!walk_file(one, &ol) || ol.blocks.size() < 4) std::abort();
  const BlockSpan& k = ol.blocks[2];
  const uint64_t stream_end = ol.eos_bits[0] + bz2::kEndOfStreamBits;
  Bytes cut = splice_bits(one, k.start_bit, k.end_bit);
  cut.resize((stream_end - (k.end_bit - k.start_bit) + 7) / 8);
  files["block-cut-out.bz2"] = cut;
  Bytes twice = splice_bits(one, k.end_bit, k.end_bit, copy_bits(one, k.start_bit, k.end_bit), k.end_bit - k.start_bit);
  twice.resize((stream_end + (k.end_bit - k.start_bit) + 7) / 8);
  files["block-repeated.bz2"] = twice;

  // A single-block file whose Huffman tables are broken: nothing readable at all.
  const Bytes single = libbz2_compress(text_bytes(50000, 34), 9);
  FileLayout sl;
  if (!walk_file(single, &sl) || sl.blocks.size() != 1) std::abort();
  Bytes broken = single;
  flip_bit(broken, *find_early_failure_flip(single, sl.blocks[0]));
  files["single-block-broken-table.bz2"] = broken;

  // A header and nothing else.
  files["header-only.bz2"] = to_bytes("BZh9");
  return files;
}

// Files bzip2 accepts, next to the damaged ones: they must read exactly.
std::map<std::string, Bytes> sound_files() {
  const Base& b = base();
  std::map<std::string, Bytes> files;
  files["intact.bz2"] = b.file;
  files["cut-between-streams.bz2"] = prefix(b.file, b.layout.stream_bytes[1]);  // a whole first stream
  Bytes garbage = b.file;
  const Bytes tail = to_bytes("trailing garbage after the last stream");
  garbage.insert(garbage.end(), tail.begin(), tail.end());
  files["trailing-garbage.bz2"] = garbage;
  return files;
}

std::string shown_name(const std::string& source_name) { return source_name.substr(0, source_name.size() - 4); }

// `mibz2 info` of a file with the test's index directory; its output.
std::string mibz2_info(const stdfs::path& file, const stdfs::path& idx) {
  const std::string cmd = std::string(MIBZ2_BINARY) + " info --index-dir '" + idx.string() + "' '" + file.string() + "' 2>&1";
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    pclose(p);
  }
  return out;
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_F(FsMountTest, DamageIsNeverSilentAndGoodBytesAreExactlyBzip2s) {
  const stdfs::path src = new_source();
  const auto damaged = damaged_files();
  const auto sound = sound_files();
  for (const auto& [name, bytes] : damaged) write_file(src / name, bytes);
  for (const auto& [name, bytes] : sound) write_file(src / name, bytes);
  MOUNT_OR_RETURN(mount(src));

  for (const auto* set : {&damaged, &sound}) {
    for (const auto& [name, bytes] : *set) {
      SCOPED_TRACE(name);
      const LibResult ref = libbz2_decompress(bytes);
      const index::BuildResult built = build_guarded(bytes, 1);
      ASSERT_TRUE(built.ok()) << built.error;
      const index::BlockIndex& idx = built.index;
      const stdfs::path shown = mnt_ / shown_name(name);

      // The whole file read as cat reads it: it fails exactly when bzip2 -dc fails.
      const ReadAll r = read_all(shown);
      EXPECT_EQ(r.error != 0, !ref.ok) << "read error " << r.error << ", libbz2 " << ref.error;
      if (ref.ok) {
        EXPECT_TRUE(same_bytes(r.data, ref.out));
        EXPECT_EQ(get_xattr(shown, kXattrs[3]).value, "0");
        continue;
      }
      EXPECT_EQ(r.error, EIO);
      // Every verified byte before the first damaged block, and those are bzip2's.
      uint64_t good = idx.decompressed_size;
      for (const index::BlockRecord& rec : idx.blocks)
        if (rec.damaged()) {
          good = rec.out_offset;
          break;
        }
      EXPECT_EQ(r.data.size(), good);
      ASSERT_LE(r.data.size(), ref.out.size());
      EXPECT_TRUE(same_bytes(r.data, prefix(ref.out, r.data.size())));
      // Never an empty file: at least the nominal span of the damage is there, and fails.
      EXPECT_GT(stdfs::file_size(shown), good);

      // Visible without reading: the attributes and mibz2 info.
      const std::string n_damaged = get_xattr(shown, kXattrs[3]).value;
      EXPECT_EQ(n_damaged, std::to_string(idx.damaged_blocks));
      EXPECT_NE(n_damaged, "0");
      const Xattr what = get_xattr(shown, kXattrs[4]);
      EXPECT_EQ(what.error, 0);
      EXPECT_NE(what.value.find("decompressed bytes"), std::string::npos) << what.value;
      EXPECT_NE(what.value.find("compressed bits"), std::string::npos) << what.value;
      const std::string info = mibz2_info(src / name, idx_);
      EXPECT_NE(info.find("damaged blocks:     " + n_damaged), std::string::npos) << info;
    }
  }

  // One damage line per damaged file in the daemon's log, naming it; none for the sound ones.
  const std::string log = slurp(mounts_.back()->log());
  for (const auto& [name, bytes] : damaged) EXPECT_EQ(count_of(log, "/" + name + ": damaged,"), 1u) << name << "\n" << log;
  for (const auto& [name, bytes] : sound) EXPECT_EQ(count_of(log, "/" + name + ": damaged"), 0u) << name;
}

TEST_F(FsMountTest, ReadsAroundDamageInTheMiddle) {
  // A CRC-only flip in block 2: the blocks after it keep their true offsets and read exactly,
  // a read that starts before the damage stops short of it, and one that starts in it fails.
  const Base& b = base();
  const BlockSpan& bad = b.layout.blocks[2];
  Bytes file = b.file;
  flip_bit(file, *find_crc_only_flip(b.file, bad));
  const stdfs::path src = new_source();
  write_file(src / "mid.bz2", file);
  MOUNT_OR_RETURN(mount(src));
  const int fd = ::open((mnt_ / "mid").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  std::vector<uint8_t> buf(1 << 20);
  // Before: short, ending exactly at the damaged block.
  const uint64_t from = bad.out_offset - 1000;
  ASSERT_EQ(pread(fd, buf.data(), 5000, static_cast<off_t>(from)), 1000);
  EXPECT_TRUE(same_bytes(Bytes(buf.begin(), buf.begin() + 1000), Bytes(b.plain.begin() + from, b.plain.begin() + from + 1000)));
  // In it: EIO.
  EXPECT_EQ(pread(fd, buf.data(), 10, static_cast<off_t>(bad.out_offset + 5)), -1);
  EXPECT_EQ(errno, EIO);
  // After it: exact.
  const BlockSpan& next = b.layout.blocks[3];
  ASSERT_EQ(pread(fd, buf.data(), 4096, static_cast<off_t>(next.out_offset)), 4096);
  EXPECT_TRUE(same_bytes(Bytes(buf.begin(), buf.begin() + 4096),
                         Bytes(b.plain.begin() + next.out_offset, b.plain.begin() + next.out_offset + 4096)));
  close(fd);
  // And `cat` of the whole file exits non-zero.
  const std::string cmd = "cat '" + (mnt_ / "mid").string() + "' > /dev/null 2>&1";
  EXPECT_NE(std::system(cmd.c_str()), 0);
}

}  // namespace
}  // namespace mibz2::test
