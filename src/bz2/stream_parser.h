// The layer above blocks: stream headers ("BZh1".."BZh9"), end-of-stream markers with their
// combined CRC, multistream files and trailing garbage, following bzip2's own rules for what is an
// error and what is ignored. decode_sequential() walks a whole file in order on one thread; random
// access goes through the index instead.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "base/byte_buffer.h"
#include "bz2/block_decoder.h"
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

// The most compressed bytes one block can take: 900000 symbols of up to 20 bits, 18001 selectors
// of up to 7 bits, six tables of 258 codes of up to 41 bits, and the headers (2.3 MB; 3 MiB is a
// safe ceiling). A reader that holds this much from a block's start holds all of the block.
inline constexpr uint64_t kMaxBlockBytes = 3 << 20;

// The compressed bytes decode_sequential() walks, front to back: a buffer in memory, or a file read
// a piece at a time (index/source_window.h), so that a file is never mapped whole and a file that
// shrinks while it is read is only an input that ends early.
class SequentialInput {
 public:
  virtual ~SequentialInput() = default;
  // The bytes from `byte` on: at least `want` of them, or all that is left when the input ends
  // sooner (an empty span at its end). Valid until the next call; `byte` never goes backwards.
  virtual std::span<const uint8_t> from(uint64_t byte, size_t want) = 0;
  // Its length as far as known (a file's size when it was opened): for messages only.
  virtual uint64_t size() const = 0;
};

// A whole buffer as a SequentialInput.
class SpanInput final : public SequentialInput {
 public:
  explicit SpanInput(std::span<const uint8_t> data) : data_(data) {}
  std::span<const uint8_t> from(uint64_t byte, size_t) override {
    return byte >= data_.size() ? std::span<const uint8_t>() : data_.subspan(static_cast<size_t>(byte));
  }
  uint64_t size() const override { return data_.size(); }

 private:
  const std::span<const uint8_t> data_;
};

// Decodes every stream of `input` in order, checking every block CRC and stream CRC. Stops at the
// first error; bytes of a block are written only after its CRC matched. Error offsets are bits
// from the start of the input.
Error decode_sequential(SequentialInput& input, BlockDecoder& decoder, const SequentialSink& sink);
inline Error decode_sequential(std::span<const uint8_t> data, BlockDecoder& decoder, const SequentialSink& sink) {
  SpanInput input(data);
  return decode_sequential(input, decoder, sink);
}

}  // namespace mibz2::bz2
