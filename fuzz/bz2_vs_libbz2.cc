// Fuzz target: the whole decoder against libbz2, the reference (differential).
//
// Input: a would-be .bz2 file. Seeds: bzip2 files of every level and shape, damaged ones too.
//
// Both sides are the test suite's own (tests/test_support.cc): libbz2_decompress is what `bzip2
// -dc` makes of the bytes (every stream in turn, trailing garbage after a complete stream ignored,
// an empty input an error), decode_ours is bz2::decode_sequential. Checked: both accept with the
// same bytes, or both reject; on a rejection our bytes (written only once a block's CRC matched) are
// a prefix of what libbz2 produced before it stopped.
//
// fuzz-args: -dict=bzip2.dict -max_len=65536
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "bz2/errors.h"
#include "fuzz_support.h"
#include "test_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t size) {
  using namespace mibz2;
  static fuzz::GuardedBuffer guarded;
  static bz2::BlockDecoder decoder;
  const std::span<const uint8_t> data = guarded.place({input, size});

  const test::LibResult lib = test::libbz2_decompress(data);
  const test::OurResult ours = test::decode_ours(data, &decoder);
  const std::string both = "libbz2 " + (lib.ok ? std::string("accepts") : "rejects (error " + std::to_string(lib.error) + ")") +
                           " with " + std::to_string(lib.out.size()) + " bytes; ours " +
                           (ours.ok() ? std::string("accepts") : "rejects (" + bz2::to_string(ours.error) + ")") +
                           " with " + std::to_string(ours.out.size()) + " bytes";
  FUZZ_CHECK(lib.ok == ours.ok(), both);
  if (lib.ok) {
    FUZZ_CHECK(ours.out == lib.out, "different bytes: " + both);
  } else {
    FUZZ_CHECK(ours.out.size() <= lib.out.size() && std::equal(ours.out.begin(), ours.out.end(), lib.out.begin()),
               "our bytes are not a prefix of libbz2's: " + both);
  }
  return 0;
}
