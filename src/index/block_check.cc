#include "index/block_check.h"

#include "bz2/block_scanner.h"
#include "bz2/errors.h"
#include "bz2/stream_parser.h"
#include "index/newline_count.h"

namespace mibz2::index {
namespace {

BlockCheck mismatch(std::string why) { return {BlockCheck::kMismatch, base::Status::error(EBADMSG, std::move(why))}; }

// The '\n' bytes of the whole file by its records (all known where the line count is).
uint64_t newline_total(const BlockIndex& idx) {
  uint64_t total = 0;
  for (uint32_t n : idx.newlines) total += n;
  return total;
}

}  // namespace

BlockCheck check_block(const BlockIndex& idx, size_t block, const io::SourceBytes& source, bz2::BlockDecoder& decoder,
                       base::ByteBuffer& compressed, base::ByteBuffer& out) {
  // A copy, and each neighbour read once: the record is checked and used as it was at this moment
  // (a mapped index can change under the check, io/mapped_file.h).
  const BlockRecord r = idx.blocks[block];
  const uint64_t expect = idx.block_size(block);
  // What parsing checked may no longer hold: never size a buffer by more than a block can be.
  if (r.level() < 1 || r.level() > 9 || expect > max_block_output(r.level()) || r.bit_length > max_block_bits(r.level()))
    return mismatch("the record describes no block its level allows");
  // What must surround the block in the source, so that no index can leave a block out unseen
  // (records chain inside a stream; FORMAT.md): a stream's first block after a gap follows its
  // stream header, and a block the next record does not start right after is followed by an
  // end-of-stream marker. Both are read with the block, in the same request.
  const bool after_header = r.stream_start() && (block == 0 || idx.blocks[block - 1].end_bit() != r.start_bit());
  const bool before_end = block + 1 == idx.blocks.size() || idx.blocks[block + 1].start_bit() != r.end_bit();
  if (after_header && (r.start_bit() < bz2::kStreamHeaderBits || r.start_bit() % 8 != 0))
    return mismatch("a stream's first block is not byte-aligned after its header");
  const uint64_t byte_begin = (r.start_bit() - (after_header ? bz2::kStreamHeaderBits : 0)) / 8;
  const uint64_t byte_end = (r.end_bit() + (before_end ? 48 : 0) + 7) / 8;
  compressed.resize_uninitialized(byte_end - byte_begin);
  const io::SourceRead got = source.read(byte_begin, byte_end - byte_begin, compressed.data());
  if (got.failed()) return {BlockCheck::kReadError, base::Status::os_error(got.error, got.describe())};
  if (got.count != byte_end - byte_begin) return mismatch("the source is shorter than its index says (it changed)");
  const std::span<const uint8_t> bytes{compressed.data(), compressed.size()};
  const uint64_t start = r.start_bit() - byte_begin * 8;
  if (after_header) {
    int level = 0;
    if (bz2::classify_stream_start(bytes, 0, &level) != bz2::StreamStart::kStream || level != r.level())
      return mismatch("no stream header before a stream's first block");
  }
  if (before_end && bz2::read48_at(bytes, start + r.bit_length) != bz2::kEndOfStreamMagic)
    return mismatch("no end-of-stream marker after a stream's last block");
  out.clear();
  // Exactly the known size, plus the little RLE1 reserves ahead of what it writes (so the buffer
  // never regrows and a cache's byte accounting is the memory really held).
  out.reserve_exact(expect + 4096);
  bz2::BlockResult res;
  if (const bz2::Error e = decoder.decode(bytes, start, r.level(), out, res))
    return mismatch(std::string("the block does not decode (") + bz2::to_string(e) + ") though its record says it does");
  // Never serve bytes the index does not vouch for: its size, stored CRC and end as the index
  // recorded them (an index of another file, or a source changed in place).
  if (out.size() != expect || res.stored_crc != r.crc || res.end_bit != start + r.bit_length)
    return mismatch("the block decodes to another size, CRC or length than its record says");
  // Nor line numbers it does not vouch for: the count costs a pass at memory speed over bytes the
  // decoder has just written (about 1% of the block's decode).
  // A count never made (an index written again from a version 2 one) vouches for nothing.
  const uint32_t newlines = idx.has_line_counts() ? idx.newlines[block] : kUnknownNewlines;
  if (newlines != kUnknownNewlines && count_newlines(out.data(), out.size()) != newlines)
    return mismatch("the block holds another number of newlines than its record says");
  // The file's last block also vouches for the line count's last line: parsing checked that the
  // count is the sum of the blocks' counts or one more, and which of the two is this byte's to say.
  if (block + 1 == idx.blocks.size() && idx.line_count != kUnknownLines && !out.empty() &&
      idx.line_count != newline_total(idx) + (out.data()[out.size() - 1] != '\n'))
    return mismatch("the file's line count is not what its last block ends with");
  BlockCheck ok;
  ok.out_offset = r.out_offset;
  return ok;
}

std::vector<size_t> sample_blocks(const BlockIndex& idx, size_t count) {
  std::vector<size_t> sound;
  sound.reserve(idx.blocks.size() - idx.damaged_blocks);
  for (size_t i = 0; i < idx.blocks.size(); ++i)
    if (!idx.blocks[i].damaged()) sound.push_back(i);
  if (sound.size() <= count) return sound;
  std::vector<size_t> picked;
  for (size_t k = 0; k < count; ++k) picked.push_back(sound[k * (sound.size() - 1) / (count - 1)]);
  return picked;
}

std::string describe_check(const BlockIndex& idx, size_t block, const BlockCheck& check) {
  switch (check.kind) {
    case BlockCheck::kOk: return {};
    case BlockCheck::kReadError: return describe_block(idx, block) + ": " + check.why.message();
    case BlockCheck::kMismatch:
      return describe_block(idx, block) + ": the index does not match the source: " + check.why.message();
  }
  return {};
}

}  // namespace mibz2::index
