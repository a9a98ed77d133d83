// Fuzz target: the stream walker, bz2::decode_sequential (stream headers, blocks, end-of-stream
// markers and combined CRCs, multistream files, trailing garbage).
//
// Input: a would-be .bz2 file. Seeds: bzip2 files of every level and shape, damaged ones too.
//
// Checked: an error lies inside the data; warnings only on success; a walk stopped by the sink after
// its first block returns success with exactly that block; a second walk with another decoder (its
// scratch holding other blocks) gives the same bytes and the same result.
//
// fuzz-args: -dict=bzip2.dict -max_len=65536
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "bz2/block_decoder.h"
#include "bz2/errors.h"
#include "bz2/stream_parser.h"
#include "fuzz_support.h"

namespace {

using namespace mibz2;

struct Walk {
  bz2::Error error;
  std::vector<std::vector<uint8_t>> blocks;
  size_t warnings = 0;
};

// Walks `data`; the sink stops the walk after `stop_after` blocks (0: never).
Walk walk(std::span<const uint8_t> data, bz2::BlockDecoder& decoder, size_t stop_after) {
  Walk w;
  bz2::SequentialSink sink;
  sink.write = [&](const uint8_t* p, size_t n) {
    w.blocks.emplace_back(p, p + n);
    return stop_after == 0 || w.blocks.size() < stop_after;
  };
  sink.warn = [&](const std::string&) { ++w.warnings; };
  w.error = bz2::decode_sequential(data, decoder, sink);
  return w;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t size) {
  static fuzz::GuardedBuffer guarded;
  static bz2::BlockDecoder decoder;
  static bz2::BlockDecoder other;  // decodes every input second
  const std::span<const uint8_t> data = guarded.place({input, size});
  const uint64_t bits = data.size() * uint64_t{8};

  const Walk w = walk(data, decoder, 0);
  const std::string what = bz2::to_string(w.error);
  FUZZ_CHECK(w.error.bit_offset <= bits, "error past the end of the data: " + what);
  FUZZ_CHECK(!w.error || w.warnings == 0, "a warning on a failed walk: " + what);
  for (const auto& b : w.blocks) FUZZ_CHECK(!b.empty(), "an empty block was written");

  const Walk again = walk(data, other, 0);
  FUZZ_CHECK(again.error.code == w.error.code && again.error.bit_offset == w.error.bit_offset,
             "another decoder says " + bz2::to_string(again.error) + ", the first " + what);
  FUZZ_CHECK(again.blocks == w.blocks, "another decoder writes other bytes");

  if (w.blocks.size() >= 2) {
    const Walk first = walk(data, other, 1);
    FUZZ_CHECK(!first.error, "a walk stopped by its sink fails: " + bz2::to_string(first.error));
    FUZZ_CHECK(first.blocks.size() == 1 && first.blocks[0] == w.blocks[0], "a stopped walk writes other bytes");
  }
  return 0;
}
