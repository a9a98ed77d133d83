#include "index/index_format.h"

#include <cerrno>
#include <cstring>

#include "bz2/stream_parser.h"
#include "index/xxh3.h"

namespace mibz2::index {
namespace {

constexpr char kMagic[8] = {'M', 'I', 'B', 'Z', '2', 'I', 'D', 'X'};
constexpr size_t kChecksumOffset = 120;

// Field offsets, as in FORMAT.md.
enum : size_t {
  kOffVersion = 8,
  kOffHeaderSize = 12,
  kOffSourceSize = 16,
  kOffFingerprint = 24,
  kOffSourceMtime = 32,
  kOffSourceInode = 40,
  kOffBlockCount = 48,
  kOffDecompressed = 56,
  kOffStreams = 64,
  kOffTrailing = 72,
  kOffTruncated = 80,
  kOffFlags = 88,
  kOffDamaged = 92,
  kOffLineCount = 96,    // version 3; reserved (0) in version 2
  kOffReserved = 104,    // version 3; 96 in version 2
};

constexpr uint32_t kVersionWithoutLines = 2;
constexpr size_t kNewlineCountSize = sizeof(uint32_t);

// Bytes a record takes in a file of `version`: the record, and the newline count of version 3.
constexpr size_t bytes_per_block(uint32_t version) {
  return version == kVersionWithoutLines ? sizeof(BlockRecord) : kBytesPerBlock;
}

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
  Xxh3 h;
  h.update(bytes.data(), kChecksumOffset);
  h.update(bytes.data() + kHeaderSize, bytes.size() - kHeaderSize);
  return h.digest();
}

// Why record i (after the one before it, if any) cannot be trusted, or empty.
std::string record_problem(const BlockIndex& idx, uint64_t i) {
  const BlockRecord& r = idx.blocks[i];
  const std::string which = "record " + std::to_string(i);
  if (r.level() < 1 || r.level() > 9) return which + " has level " + std::to_string(r.level());
  if ((r.flags & ~BlockRecord::kKnownFlags) || r.reserved) return which + " has a reserved bit set";
  // A block holds at least its 48-bit magic. A truncated record holds what is left of the file, and
  // a damaged stretch (undecodable) what lies between two marks: either may be shorter.
  if ((r.bit_length < 48 && !r.truncated() && !r.undecodable()) || (r.bit_length == 0 && !r.truncated()) ||
      r.start_bit() > idx.source.size * 8 ||
      r.bit_length > idx.source.size * 8 - r.start_bit())
    return which + " lies outside the source file";
  if (i == 0 && r.out_offset != 0) return "first record does not start at offset 0";
  if (i > 0) {
    // Inside a stream every block starts where the one before ends; a stream's first block (or
    // what is left of a truncated file) may start later, after at least an end-of-stream marker
    // and a stream header (112 bits), or right there after a damaged stretch.
    const uint64_t prev_end = idx.blocks[i - 1].end_bit();
    if (r.start_bit() < prev_end)
      return "records " + std::to_string(i - 1) + " and " + std::to_string(i) + " overlap or are out of order";
    // A file cut inside the next stream's header leaves a truncated record right after the
    // end-of-stream marker (80 bits and the padding).
    // The record of an empty stream whose combined CRC does not match covers that stream's
    // end-of-stream marker itself, so only the next stream's header lies between.
    const BlockRecord& prev = idx.blocks[i - 1];
    const bool prev_is_marker =
        prev.undecodable() && prev.stream_crc_mismatch() && prev.bit_length == bz2::kEndOfStreamBits;
    const uint64_t marker = prev_is_marker ? 0 : bz2::kEndOfStreamBits;
    const uint64_t gap = r.start_bit() - prev_end;
    const uint64_t min_gap = r.stream_start() ? marker + bz2::kStreamHeaderBits
                             : r.truncated()  ? marker
                                              : UINT64_MAX;
    if (gap != 0 && gap < min_gap)
      return "records " + std::to_string(i - 1) + " and " + std::to_string(i) + " do not chain";
  }
  if (r.out_offset >= idx.decompressed_size) return which + " starts past the end";
  const uint64_t end = i + 1 < idx.blocks.size() ? idx.blocks[i + 1].out_offset : idx.decompressed_size;
  if (end <= r.out_offset) return "records " + std::to_string(i) + " and " + std::to_string(i + 1) + " are out of order";
  const uint64_t size = end - r.out_offset;
  if (r.nominal_size() ? size != nominal_block_size(r.level()) : size > max_block_output(r.level()))
    return which + " has a size its level does not allow (" + std::to_string(size) + " bytes)";
  if (!idx.newlines.empty()) {
    const uint32_t n = idx.newlines[i];
    if (r.damaged() ? n != kUnknownNewlines : n > size && n != kUnknownNewlines)
      return which + " has a newline count it cannot have";
  }
  return {};
}

// Why the line count (version 3) cannot be right, or empty: FORMAT.md, "Validity".
std::string line_count_problem(const BlockIndex& idx) {
  uint64_t newlines = 0;
  for (uint32_t n : idx.newlines) {
    if (n == kUnknownNewlines) return idx.line_count == kUnknownLines ? "" : "a line count despite unknown blocks";
    newlines += n;
  }
  const bool last_has_newline = !idx.newlines.empty() && idx.newlines.back() > 0;
  if (idx.line_count == newlines && (last_has_newline || idx.decompressed_size == 0)) return {};
  if (idx.line_count == newlines + 1 && idx.decompressed_size > newlines) return {};
  return "the line count does not match the newline counts";
}

}  // namespace

std::vector<uint8_t> serialize(const BlockIndex& index) {
  const size_t n = index.blocks.size();
  std::vector<uint8_t> b(kHeaderSize + n * bytes_per_block(kFormatVersion), 0);
  std::memcpy(b.data(), kMagic, sizeof kMagic);
  put<uint32_t>(b, kOffVersion, kFormatVersion);
  put<uint32_t>(b, kOffHeaderSize, kHeaderSize);
  put<uint64_t>(b, kOffSourceSize, index.source.size);
  put<uint64_t>(b, kOffFingerprint, index.source.fingerprint);
  put<uint64_t>(b, kOffSourceMtime, index.source.mtime_ns);
  put<uint64_t>(b, kOffSourceInode, index.source.inode);
  put<uint64_t>(b, kOffBlockCount, index.blocks.size());
  put<uint64_t>(b, kOffDecompressed, index.decompressed_size);
  put<uint64_t>(b, kOffStreams, index.stream_count);
  put<uint64_t>(b, kOffTrailing, index.trailing_bytes);
  put<uint64_t>(b, kOffTruncated, index.truncated_at_bit);
  put<uint32_t>(b, kOffFlags, index.flags);
  put<uint32_t>(b, kOffDamaged, index.damaged_blocks);
  // An index without line counts (read from a version 2 file) is written with every count unknown.
  const bool lines = index.has_line_counts();
  put<uint64_t>(b, kOffLineCount, lines ? index.line_count : kUnknownLines);
  if (n) std::memcpy(b.data() + kHeaderSize, index.blocks.data(), n * sizeof(BlockRecord));
  const size_t column = kHeaderSize + n * sizeof(BlockRecord);
  for (size_t i = 0; i < n; ++i)
    put<uint32_t>(b, column + i * kNewlineCountSize, lines ? index.newlines[i] : kUnknownNewlines);
  put<uint64_t>(b, kChecksumOffset, checksum(b));
  return b;
}

namespace {

// The `count` elements at `at`: a view into `mapping` when there is one, else a copy.
template <class T>
Column<T> column_at(const std::shared_ptr<const io::MappedFile>& mapping, const uint8_t* at, size_t count) {
  if (mapping) return Column<T>::view(mapping, reinterpret_cast<const T*>(at), count);
  std::vector<T> copied(count);
  if (count) std::memcpy(copied.data(), at, count * sizeof(T));
  return copied;
}

// parse() and parse_mapped(): with `mapping`, the columns are views into `bytes` (its bytes).
base::Result<BlockIndex> parse_bytes(std::span<const uint8_t> bytes, std::shared_ptr<const io::MappedFile> mapping) {
  auto fail = [](std::string why) { return base::Status::error(EBADMSG, std::move(why)); };
  if (bytes.size() < kHeaderSize) return fail("file too short for a header (" + std::to_string(bytes.size()) + " bytes)");
  if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) return fail("not an index file (bad magic)");
  const uint32_t version = get<uint32_t>(bytes, kOffVersion);
  if (version != kFormatVersion && version != kVersionWithoutLines)
    return fail("format version " + std::to_string(version) + ", expected " + std::to_string(kFormatVersion) +
                " (or " + std::to_string(kVersionWithoutLines) + ")");
  const bool lines = version != kVersionWithoutLines;
  if (get<uint32_t>(bytes, kOffHeaderSize) != kHeaderSize) return fail("unexpected header size");
  const uint64_t count = get<uint64_t>(bytes, kOffBlockCount);
  const size_t per_block = bytes_per_block(version);
  if (count > (bytes.size() - kHeaderSize) / per_block || bytes.size() != kHeaderSize + count * per_block)
    return fail("file size does not match its block count (truncated or padded)");
  if (get<uint64_t>(bytes, kChecksumOffset) != checksum(bytes)) return fail("checksum mismatch (damaged index file)");
  for (size_t off = lines ? kOffReserved : kOffLineCount; off < kChecksumOffset; ++off)
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
  if (idx.flags & ~BlockIndex::kKnownFlags) return fail("unknown flags set");
  // Sizes the arithmetic below can trust (no source is an exbibyte).
  if (idx.source.size > (uint64_t{1} << 60)) return fail("implausible source size");
  if (idx.trailing_bytes > idx.source.size || idx.truncated_at_bit > idx.source.size * 8)
    return fail("trailing bytes or truncation point outside the source file");
  // Records at byte 128 and counts at 128 + 32 * count of a page-aligned mapping are aligned.
  const uint8_t* records = bytes.data() + kHeaderSize;
  const uint8_t* counts = records + count * sizeof(BlockRecord);
  idx.blocks = column_at<BlockRecord>(mapping, records, count);
  // Version 2: lines unknown, except that a file of no bytes has none.
  if (!lines && idx.decompressed_size == 0) idx.line_count = 0;
  if (lines) {
    idx.line_count = get<uint64_t>(bytes, kOffLineCount);
    idx.newlines = column_at<uint32_t>(mapping, counts, count);
  }

  // One linear pass: every record sane, chained and ordered, so lookups and reads can trust them.
  uint32_t damaged = 0;
  for (uint64_t i = 0; i < count; ++i) {
    if (std::string why = record_problem(idx, i); !why.empty()) return fail(why);
    if (idx.blocks[i].damaged()) ++damaged;
  }
  if (count == 0 && idx.decompressed_size != 0) return fail("no blocks but a nonzero size");
  if (damaged != idx.damaged_blocks) return fail("damaged block count does not match the records");
  if (lines)
    if (std::string why = line_count_problem(idx); !why.empty()) return fail(why);
  // Cut short while it was checked: the zeros the guard put in its place may have passed a check.
  if (mapping && mapping->revoked()) return fail("the file was cut short while it was read");
  idx.mapping = std::move(mapping);
  return idx;
}

}  // namespace

base::Result<BlockIndex> parse(std::span<const uint8_t> bytes) { return parse_bytes(bytes, nullptr); }

base::Result<BlockIndex> parse_mapped(std::shared_ptr<const io::MappedFile> file) {
  const std::span<const uint8_t> bytes = file->bytes();
  return parse_bytes(bytes, std::move(file));
}

}  // namespace mibz2::index
