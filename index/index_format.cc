#include "index/index_format.h"

#include <cstring>

#include "index/hash64.h"

namespace mibz2::index {
namespace {

constexpr char kMagic[8] = {'M', 'I', 'B', 'Z', '2', 'I', 'D', 'X'};
constexpr size_t kChecksumOffset = 120;

// Field offsets, as in FORMAT.md.
enum : size_t {
  kOffVersion = 8,
  kOffHeaderSize = 12,
  kOffSourceSize = 16,
  kOffSourceMtime = 24,
  kOffSourceInode = 32,
  kOffFingerprint = 40,
  kOffBlockCount = 48,
  kOffDecompressed = 56,
  kOffStreams = 64,
  kOffTrailing = 72,
  kOffTruncated = 80,
  kOffFlags = 88,
  kOffDamaged = 92,
  kOffReserved = 96,
};
constexpr uint32_t kKnownFlags = BlockIndex::kHasDamage | BlockIndex::kHasUndecodable | BlockIndex::kStreamCrcMismatch;

template <class T>
void put(std::vector<uint8_t>& b, size_t off, T v) {
  std::memcpy(b.data() + off, &v, sizeof v);
}
template <class T>
T get(std::span<const uint8_t> b, size_t off) {
  T v;
  std::memcpy(&v, b.data() + off, sizeof v);
  return v;
}

uint64_t checksum(std::span<const uint8_t> bytes) {
  Hash64 h;
  h.update(bytes.data(), kChecksumOffset);
  h.update(bytes.data() + kHeaderSize, bytes.size() - kHeaderSize);
  return h.digest();
}

}  // namespace

std::vector<uint8_t> serialize(const BlockIndex& index) {
  std::vector<uint8_t> b(kHeaderSize + index.blocks.size() * sizeof(BlockRecord), 0);
  std::memcpy(b.data(), kMagic, sizeof kMagic);
  put<uint32_t>(b, kOffVersion, kFormatVersion);
  put<uint32_t>(b, kOffHeaderSize, kHeaderSize);
  put<uint64_t>(b, kOffSourceSize, index.source.size);
  put<uint64_t>(b, kOffSourceMtime, index.source.mtime_ns);
  put<uint64_t>(b, kOffSourceInode, index.source.inode);
  put<uint64_t>(b, kOffFingerprint, index.source.fingerprint);
  put<uint64_t>(b, kOffBlockCount, index.blocks.size());
  put<uint64_t>(b, kOffDecompressed, index.decompressed_size);
  put<uint64_t>(b, kOffStreams, index.stream_count);
  put<uint64_t>(b, kOffTrailing, index.trailing_bytes);
  put<uint64_t>(b, kOffTruncated, index.truncated_at_bit);
  put<uint32_t>(b, kOffFlags, index.flags);
  put<uint32_t>(b, kOffDamaged, index.damaged_blocks);
  if (!index.blocks.empty())
    std::memcpy(b.data() + kHeaderSize, index.blocks.data(), index.blocks.size() * sizeof(BlockRecord));
  put<uint64_t>(b, kChecksumOffset, checksum(b));
  return b;
}

bool parse(std::span<const uint8_t> bytes, BlockIndex* out, std::string* reason) {
  auto fail = [&](std::string why) {
    *reason = std::move(why);
    return false;
  };
  if (bytes.size() < kHeaderSize) return fail("file too short for a header (" + std::to_string(bytes.size()) + " bytes)");
  if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) return fail("not an index file (bad magic)");
  const uint32_t version = get<uint32_t>(bytes, kOffVersion);
  if (version != kFormatVersion)
    return fail("format version " + std::to_string(version) + ", expected " + std::to_string(kFormatVersion));
  if (get<uint32_t>(bytes, kOffHeaderSize) != kHeaderSize) return fail("unexpected header size");
  const uint64_t count = get<uint64_t>(bytes, kOffBlockCount);
  if (count > (bytes.size() - kHeaderSize) / sizeof(BlockRecord) ||
      bytes.size() != kHeaderSize + count * sizeof(BlockRecord))
    return fail("file size does not match its block count (truncated or padded)");
  if (get<uint64_t>(bytes, kChecksumOffset) != checksum(bytes)) return fail("checksum mismatch (damaged index file)");
  for (size_t off = kOffReserved; off < kChecksumOffset; ++off)
    if (bytes[off] != 0) return fail("reserved header bytes are not zero");

  BlockIndex idx;
  idx.source.size = get<uint64_t>(bytes, kOffSourceSize);
  idx.source.mtime_ns = get<uint64_t>(bytes, kOffSourceMtime);
  idx.source.inode = get<uint64_t>(bytes, kOffSourceInode);
  idx.source.fingerprint = get<uint64_t>(bytes, kOffFingerprint);
  idx.decompressed_size = get<uint64_t>(bytes, kOffDecompressed);
  idx.stream_count = get<uint64_t>(bytes, kOffStreams);
  idx.trailing_bytes = get<uint64_t>(bytes, kOffTrailing);
  idx.truncated_at_bit = get<uint64_t>(bytes, kOffTruncated);
  idx.flags = get<uint32_t>(bytes, kOffFlags);
  idx.damaged_blocks = get<uint32_t>(bytes, kOffDamaged);
  if (idx.flags & ~kKnownFlags) return fail("unknown flags set");
  idx.blocks.resize(count);
  if (count) std::memcpy(idx.blocks.data(), bytes.data() + kHeaderSize, count * sizeof(BlockRecord));

  // One linear pass: every record sane and ordered, so lookups can trust them.
  const uint64_t size_bits = idx.source.size * 8;
  uint32_t damaged = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const BlockRecord& r = idx.blocks[i];
    if (r.start & (uint64_t{1} << 63)) return fail("record " + std::to_string(i) + " has a reserved bit set");
    if (r.level() < 1 || r.level() > 9) return fail("record " + std::to_string(i) + " has level " + std::to_string(r.level()));
    if (r.bit_length == 0 || r.end_bit() > size_bits) return fail("record " + std::to_string(i) + " lies outside the source file");
    if (r.out_offset >= idx.decompressed_size) return fail("record " + std::to_string(i) + " starts past the end");
    if (i > 0) {
      const BlockRecord& p = idx.blocks[i - 1];
      if (r.start_bit() < p.end_bit() || r.out_offset <= p.out_offset)
        return fail("records " + std::to_string(i - 1) + " and " + std::to_string(i) + " are out of order");
    } else if (r.out_offset != 0) {
      return fail("first record does not start at offset 0");
    }
    if (r.damaged()) ++damaged;
  }
  if (count == 0 && idx.decompressed_size != 0) return fail("no blocks but a nonzero size");
  if (damaged != idx.damaged_blocks) return fail("damaged block count does not match the records");
  *out = std::move(idx);
  return true;
}

}  // namespace mibz2::index
