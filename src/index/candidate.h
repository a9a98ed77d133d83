// What an index build learns about one mark of the file (a block magic or an end-of-stream marker
// found by the scan): filled in by the builder (index_builder.h), which reads the file, and read by
// the resolver (block_resolver.h), which decides what the marks are and reads nothing. Everything
// resolution needs of the bytes around a mark is found out here, before it is resolved.
#pragma once

#include <cstdint>

#include "base/byte_buffer.h"
#include "bz2/block_decoder.h"
#include "bz2/block_scanner.h"
#include "bz2/errors.h"
#include "bz2/stream_parser.h"

namespace mibz2::index {

// What is at a stream boundary (its 4 bytes classified).
struct StreamBoundary {
  bz2::StreamStart kind = bz2::StreamStart::kEnd;
  int level = 0;  // kStream: 1..9
};

struct Candidate {
  uint64_t bit = 0;  // where its 48-bit magic starts, in file bits
  bz2::MarkKind kind = bz2::MarkKind::kBlock;
  // Blocks wait for their decode (claimed: kDecoding); end-of-stream marks are done when scanned.
  enum class State : uint8_t { kPending, kDecoding, kDone } state = State::kPending;
  // Blocks, by their decode (with the largest block size: the stream's level is applied when the
  // candidate is resolved):
  bz2::Error error;
  bz2::BlockResult block;     // end_bit in file bits
  uint64_t size = 0;          // decoded bytes (valid when block.bytes_produced)
  bool next_is_mark = false;  // a block or end-of-stream mark starts at block.end_bit
  uint32_t newlines = 0;      // '\n' bytes among the decoded bytes (FORMAT.md, newline counts)
  bool ends_with_newline = false;  // the last decoded byte is '\n'
  base::ByteBuffer bytes;      // with a sink: the decoded bytes
  // Blocks, by the scan: a stream header right before it (a stream that starts after damage).
  bz2::StreamStart header_before = bz2::StreamStart::kNotBzip2;
  int header_level = 0;
  // End-of-stream marks, by the scan:
  bool eos_complete = false;  // its 80 bits are in the file
  uint32_t eos_crc = 0;
  StreamBoundary after_eos;  // what follows it
};

}  // namespace mibz2::index
