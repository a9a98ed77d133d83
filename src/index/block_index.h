// The block index of one bzip2 file, in memory exactly as on disk (see index/FORMAT.md): one
// 32-byte record per block, plus a summary. It maps decompressed offsets to blocks by binary
// search and says which blocks are damaged.
#pragma once

#include <bit>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "index/column.h"
#include "io/mapped_file.h"
#include "io/source_stamp.h"

namespace mibz2::index {

static_assert(std::endian::native == std::endian::little,
              "index files are little-endian and read by memcpy; add byte swapping for big-endian hosts");

struct BlockRecord {
  // Flag bits (FORMAT.md, "Block record").
  static constexpr uint8_t kCrcMismatch = 1 << 0;       // decodes, but not to its CRC
  static constexpr uint8_t kUndecodable = 1 << 1;       // size unknown: a nominal level * 100000 bytes
  static constexpr uint8_t kStreamStart = 1 << 2;       // first block of its stream
  static constexpr uint8_t kStreamCrcMismatch = 1 << 3; // ends a stream whose combined CRC does not match
  static constexpr uint8_t kTruncated = 1 << 4;         // the file ends inside it: a nominal span
  static constexpr uint8_t kKnownFlags = 0x1F;
  // Records whose bytes are never served: reading them fails (EIO).
  static constexpr uint8_t kDamageFlags = kCrcMismatch | kUndecodable | kStreamCrcMismatch | kTruncated;

  uint64_t first_bit;     // bit offset of the block magic in the source file
  uint64_t out_offset;    // decompressed offset of the first byte
  uint64_t bit_length;    // compressed length in bits
  uint32_t crc;           // stored block CRC (0 when undecodable)
  uint8_t stream_level;   // 1..9
  uint8_t flags;
  uint16_t reserved;      // 0

  uint64_t start_bit() const { return first_bit; }
  uint64_t end_bit() const { return first_bit + bit_length; }
  int level() const { return stream_level; }
  bool crc_mismatch() const { return flags & kCrcMismatch; }
  bool undecodable() const { return flags & kUndecodable; }
  bool stream_crc_mismatch() const { return flags & kStreamCrcMismatch; }
  bool truncated() const { return flags & kTruncated; }
  bool damaged() const { return flags & kDamageFlags; }
  bool stream_start() const { return flags & kStreamStart; }
  // Undecodable and truncated blocks stand for bytes whose number is unknown.
  bool nominal_size() const { return flags & (kUndecodable | kTruncated); }

  static BlockRecord make(uint64_t start_bit, int level, uint8_t flags, uint64_t out_offset, uint64_t bit_length,
                          uint32_t crc) {
    return {start_bit, out_offset, bit_length, crc, static_cast<uint8_t>(level), flags, 0};
  }
};
static_assert(sizeof(BlockRecord) == 32, "the on-disk record is 32 bytes");

// The most decoded bytes a block of `level` can hold: level * 100000 bytes before RLE1, each 5
// of which (4 equal bytes and a run count) can expand to 4 + 255 = 259.
inline constexpr uint64_t max_block_output(int level) { return uint64_t(level) * 100000 / 5 * 259; }
// More compressed bits than a block of `level` can take: its symbols (at most level * 100000 and
// the end of block), each coded in at most 20 bits, and its header, selectors (at most 32767, 6
// bits each) and code tables (6 of 258 lengths, at most 41 bits each), under 1 Mibit together.
inline constexpr uint64_t max_block_bits(int level) { return (uint64_t(level) * 100000 + 2) * 20 + (1u << 20); }
// The nominal size an undecodable or truncated block of `level` stands for.
inline constexpr uint64_t nominal_block_size(int level) { return uint64_t(level) * 100000; }

// A block's newline count, or the file's line count, that is not known: the block is damaged, or
// the index was made by a version without line counts (FORMAT.md).
inline constexpr uint32_t kUnknownNewlines = UINT32_MAX;
inline constexpr uint64_t kUnknownLines = UINT64_MAX;

// Identity of the source file an index belongs to.
struct SourceIdentity {
  uint64_t size = 0;
  uint64_t mtime_ns = 0;
  uint64_t inode = 0;
  uint64_t fingerprint = 0;  // XXH3-64 of the first and last 64 KiB (FORMAT.md)
  // The inode's change time when the identity was taken: not stored in index files and not part
  // of the identity (a chmod changes it), but a rewrite in place that restores size and mtime
  // (cp -p, rsync -t, touch -r) cannot restore it, so a changed ctime makes the catalog check the
  // fingerprint again before it trusts a size it showed.
  uint64_t ctime_ns = 0;
  bool operator==(const SourceIdentity& o) const {
    return same_stat(o) && fingerprint == o.fingerprint;
  }

  // Size, mtime, inode and ctime from a source's stamp (io/source_stamp.h: a file's stat; a remote
  // object's version); fingerprint 0: it needs a read.
  static SourceIdentity from_stamp(const io::SourceStamp& st) {
    return {st.size, st.mtime_ns, st.inode, 0, st.ctime_ns};
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
  static constexpr uint32_t kKnownFlags = kHasDamage | kHasUndecodable | kStreamCrcMismatch;

  SourceIdentity source;
  // Columns (column.h): owned by a build, or views into the index file mapped from disk.
  Column<BlockRecord> blocks;
  uint64_t decompressed_size = 0;
  uint64_t stream_count = 0;
  uint64_t trailing_bytes = 0;    // ignored bytes after the last stream
  uint64_t truncated_at_bit = 0;  // nonzero: the file ends inside a stream there
  uint32_t flags = 0;
  uint32_t damaged_blocks = 0;
  // Per block, the '\n' bytes of its decoded bytes (kUnknownNewlines for a damaged record); empty
  // for an index without line counts (format version 2, or one made by hand in a test).
  Column<uint32_t> newlines;
  // Lines of the decompressed file as `sed` counts them (its newlines, plus one when it does not
  // end with one), or kUnknownLines. Read line positions through index::LineMap (line_map.h).
  uint64_t line_count = kUnknownLines;

  // The index file the columns are views into (null when they are owned): shared with every
  // process that maps the same file. Its bytes may change under a reader (io/mapped_file.h).
  std::shared_ptr<const io::MappedFile> mapping;
  // Whether that file was cut short while mapped: nothing computed from the columns is believed
  // from then on (engine::Reader fails its reads).
  bool revoked() const { return mapping && mapping->revoked(); }

  bool has_line_counts() const { return !blocks.empty() ? newlines.size() == blocks.size() : line_count == 0; }

  // Index of the block holding decompressed byte `offset` (offset < decompressed_size).
  size_t block_at(uint64_t offset) const;
  uint64_t block_size(size_t i) const {
    return (i + 1 < blocks.size() ? blocks[i + 1].out_offset : decompressed_size) - blocks[i].out_offset;
  }
  uint64_t compressed_size() const { return source.size; }
};

// "block 12 (bits 1234..5678, bytes 900000..1800000)" for messages about a block.
std::string describe_block(const BlockIndex& index, size_t i);

// What is wrong with a damaged record, in a few words ("CRC mismatch", "truncated: the file ends
// inside it", ...); empty for a sound one.
std::string describe_damage(const BlockRecord& record);

// Every damage of the index, one line each: what, and where in decompressed bytes and compressed
// bits ("block 12: CRC mismatch; decompressed bytes 1080000..1170000; compressed bits ..").
// Empty when the file is intact.
std::vector<std::string> damage_report(const BlockIndex& index);

}  // namespace mibz2::index
