#include "bz2/stream_parser.h"

#include "bz2/bit_reader.h"
#include "bz2/block_scanner.h"
#include "bz2/crc32.h"

namespace mibz2::bz2 {

StreamStart classify_stream_start(std::span<const uint8_t> data, uint64_t byte, int* level) {
  static constexpr uint8_t kMagic[3] = {'B', 'Z', 'h'};
  if (byte >= data.size()) return StreamStart::kEnd;
  const uint64_t left = data.size() - byte;
  for (uint64_t i = 0; i < 3; ++i) {
    if (i == left) return StreamStart::kTruncated;
    if (data[byte + i] != kMagic[i]) return StreamStart::kNotBzip2;
  }
  if (left == 3) return StreamStart::kTruncated;
  const uint8_t d = data[byte + 3];
  if (d < '1' || d > '9') return StreamStart::kNotBzip2;
  *level = d - '0';
  return StreamStart::kStream;
}

Error decode_sequential(SequentialInput& input, BlockDecoder& decoder, const SequentialSink& sink) {
  base::ByteBuffer block;
  uint64_t byte = 0;
  for (bool first = true;; first = false) {
    int level = 0;
    std::span<const uint8_t> view = input.from(byte, kStreamHeaderBits / 8);
    switch (classify_stream_start(view, 0, &level)) {
      case StreamStart::kStream: break;
      case StreamStart::kEnd:
        if (first) return {ErrorCode::kTruncated, 0};
        return {};
      case StreamStart::kTruncated: return {ErrorCode::kTruncated, (byte + view.size()) * 8};
      case StreamStart::kNotBzip2:
        if (first) return {ErrorCode::kBadStreamHeader, 0};
        if (sink.warn) sink.warn("trailing garbage after the last stream ignored (" +
                                 std::to_string(input.size() > byte ? input.size() - byte : view.size()) +
                                 " bytes at byte " + std::to_string(byte) + ")");
        return {};
    }
    uint64_t bit = byte * 8 + kStreamHeaderBits;
    uint32_t combined = 0;
    for (;;) {
      // Each step sees the input from the byte holding `bit`; offsets in `view` are relative to it.
      const uint64_t base = bit / 8 * 8;
      view = input.from(bit / 8, kEndOfStreamBits / 8 + 2);
      const uint64_t magic = read48_at(view, bit - base);
      if (magic == kBlockMagic) {
        view = input.from(bit / 8, kMaxBlockBytes);
        BlockResult r;
        block.clear();
        if (Error e = decoder.decode(view, bit - base, level, block, r)) {
          e.bit_offset += base;
          return e;
        }
        combined = combine_stream_crc(combined, r.stored_crc);
        if (sink.write && !sink.write(block.data(), block.size())) return {};
        bit = base + r.end_bit;
      } else if (magic == kEndOfStreamMagic) {
        if (bit - base + kEndOfStreamBits > view.size() * uint64_t{8}) return {ErrorCode::kTruncated, bit};
        BitReader br(view, bit - base + 48);
        if (br.read(32) != combined) return {ErrorCode::kStreamCrcMismatch, bit + 48};
        bit += kEndOfStreamBits;
        break;
      } else {
        if (bit - base + 48 > view.size() * uint64_t{8}) return {ErrorCode::kTruncated, bit};
        return {ErrorCode::kBadBlockMagic, bit};
      }
    }
    byte = (bit + 7) / 8;  // streams are padded to a byte boundary
  }
}

}  // namespace mibz2::bz2
