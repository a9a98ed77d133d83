// Decodes one bzip2 block, starting at the bit where its magic is, independently of the rest of
// the file: header, Huffman tables, selectors, symbols with MTF and zero-runs (RLE2), inverse BWT,
// RLE1, CRC. Every field is validated as libbz2 validates it, so we accept exactly what it accepts.
//
// A BlockDecoder owns ~6 MB of reusable scratch (for a 900k block); keep one per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "base/byte_buffer.h"
#include "bz2/errors.h"

namespace mibz2::bz2 {

struct BlockResult {
  uint64_t end_bit = 0;        // first bit after the block (valid once the symbols were read)
  uint32_t stored_crc = 0;     // CRC recorded in the block header
  uint32_t computed_crc = 0;   // CRC of the decoded bytes (valid when the bytes were produced)
  uint32_t bwt_length = 0;     // bytes before RLE1 (the block's "nblock")
  bool randomised = false;
  bool symbols_read = false;   // end_bit is known (the block's extent is certain)
  bool bytes_produced = false; // `out` holds the decoded bytes (CRC may still mismatch)
};

class BlockDecoder {
 public:
  BlockDecoder();
  ~BlockDecoder();
  BlockDecoder(const BlockDecoder&) = delete;
  BlockDecoder& operator=(const BlockDecoder&) = delete;

  // Decodes the block whose 48-bit magic starts at `start_bit` of `data`, for a stream of the given
  // level (1..9: the block holds at most level * 100000 bytes before RLE1). The decoded bytes are
  // appended to `out`. Returns an error with its bit offset; kBlockCrcMismatch leaves the bytes in
  // `out` and result.bytes_produced set so a caller can measure the block, never to serve them.
  Error decode(std::span<const uint8_t> data, uint64_t start_bit, int level, base::ByteBuffer& out,
               BlockResult& result);

  // Scratch memory currently held (bytes).
  size_t memory_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mibz2::bz2
