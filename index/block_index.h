// The block index of one bzip2 file, in memory exactly as on disk (see index/FORMAT.md): one
// 24-byte record per block, plus a summary. It maps decompressed offsets to blocks by binary
// search and says which blocks are damaged.
#pragma once

#include <sys/stat.h>

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

namespace mibz2::index {

static_assert(std::endian::native == std::endian::little,
              "index files are little-endian and read by memcpy; add byte swapping for big-endian hosts");

struct BlockRecord {
  static constexpr uint64_t kBitMask = (uint64_t{1} << 56) - 1;
  static constexpr int kLevelShift = 56;
  static constexpr uint64_t kCrcMismatch = uint64_t{1} << 60;
  static constexpr uint64_t kUndecodable = uint64_t{1} << 61;
  static constexpr uint64_t kStreamStart = uint64_t{1} << 62;

  uint64_t start;       // bit offset of the block magic | level << 56 | flags
  uint64_t out_offset;  // decompressed offset of the first byte
  uint32_t bit_length;  // compressed length in bits
  uint32_t crc;         // stored block CRC

  uint64_t start_bit() const { return start & kBitMask; }
  uint64_t end_bit() const { return start_bit() + bit_length; }
  int level() const { return static_cast<int>((start >> kLevelShift) & 0xF); }
  bool crc_mismatch() const { return start & kCrcMismatch; }
  bool undecodable() const { return start & kUndecodable; }
  bool damaged() const { return start & (kCrcMismatch | kUndecodable); }
  bool stream_start() const { return start & kStreamStart; }

  static BlockRecord make(uint64_t start_bit, int level, uint64_t flags, uint64_t out_offset,
                          uint32_t bit_length, uint32_t crc) {
    return {start_bit | (uint64_t(level) << kLevelShift) | flags, out_offset, bit_length, crc};
  }
};
static_assert(sizeof(BlockRecord) == 24, "the on-disk record is 24 bytes");

// Identity of the source file an index belongs to.
struct SourceIdentity {
  uint64_t size = 0;
  uint64_t mtime_ns = 0;
  uint64_t inode = 0;
  uint64_t fingerprint = 0;  // hash64 of the first and last 64 KiB
  bool operator==(const SourceIdentity&) const = default;

  // Size, mtime and inode from stat (fingerprint 0: it needs a read).
  static SourceIdentity from_stat(const struct stat& st) {
    return {static_cast<uint64_t>(st.st_size),
            static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000ull + static_cast<uint64_t>(st.st_mtim.tv_nsec),
            static_cast<uint64_t>(st.st_ino), 0};
  }
  // The same file as far as stat can tell (size, mtime, inode; not the fingerprint).
  bool same_stat(const SourceIdentity& o) const { return size == o.size && mtime_ns == o.mtime_ns && inode == o.inode; }
};

struct BlockIndex {
  enum Flags : uint32_t {
    kHasDamage = 1u << 0,
    kHasUndecodable = 1u << 1,  // offsets after such a block are shifted by an unknown amount
    kStreamCrcMismatch = 1u << 2,
  };

  SourceIdentity source;
  std::vector<BlockRecord> blocks;
  uint64_t decompressed_size = 0;
  uint64_t stream_count = 0;
  uint64_t trailing_bytes = 0;    // ignored bytes after the last stream
  uint64_t truncated_at_bit = 0;  // nonzero: the file ends inside a block there
  uint32_t flags = 0;
  uint32_t damaged_blocks = 0;

  // Index of the block holding decompressed byte `offset` (offset < decompressed_size).
  size_t block_at(uint64_t offset) const;
  uint64_t block_size(size_t i) const {
    return (i + 1 < blocks.size() ? blocks[i + 1].out_offset : decompressed_size) - blocks[i].out_offset;
  }
  uint64_t compressed_size() const { return source.size; }
};

// "block 12 (bits 1234..5678, bytes 900000..1800000)" for messages about a block.
std::string describe_block(const BlockIndex& index, size_t i);

}  // namespace mibz2::index
