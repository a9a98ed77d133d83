// The layer above blocks: stream headers ("BZh1".."BZh9"), end-of-stream markers with their
// combined CRC, multistream files and trailing garbage, following bzip2's own rules for what is an
// error and what is ignored. decode_sequential() walks a whole file in order on one thread; random
// access goes through the index instead.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "bz2/block_decoder.h"
#include "bz2/byte_buffer.h"
#include "bz2/errors.h"

namespace mibz2::bz2 {

inline constexpr uint64_t kStreamHeaderBits = 32;       // "BZh" + level digit
inline constexpr uint64_t kEndOfStreamBits = 48 + 32;   // marker + combined CRC

// What the bytes at a stream boundary are, by bzip2's rules.
enum class StreamStart {
  kStream,      // "BZh1".."BZh9": a stream that must decode
  kEnd,         // no bytes left
  kTruncated,   // a proper prefix of a header ("B", "BZ", "BZh"): bzip2 calls this an unexpected end
  kNotBzip2,    // anything else: "not a bzip2 file" at the start, trailing garbage after a stream
};

// Classifies the bytes at `byte`; sets *level (1..9) for kStream.
StreamStart classify_stream_start(std::span<const uint8_t> data, uint64_t byte, int* level);

// Receives the output of decode_sequential().
struct SequentialSink {
  // Decoded bytes of one block, in order. Return false to stop early (decode returns kOk).
  std::function<bool(const uint8_t* data, size_t size)> write;
  // Non-fatal conditions, such as trailing garbage after the last stream.
  std::function<void(const std::string& message)> warn;
};

// Decodes every stream of `data` in order, checking every block CRC and stream CRC. Stops at the
// first error; bytes of a block are written only after its CRC matched.
Error decode_sequential(std::span<const uint8_t> data, BlockDecoder& decoder, const SequentialSink& sink);

}  // namespace mibz2::bz2
