// Fuzz target: the value parsers of the command lines (src/base/settings.h): parse_size,
// parse_threads, and human_bytes on what they return.
//
// Input: the text of one value. Seeds: sizes and thread counts, plain and with every suffix.
//
// Checked: no crash or undefined behaviour (a float-to-integer conversion out of range is one);
// a thread count is 1..1024 and reads back from its decimal form; a size below 2^53 (exact in a
// double) reads back from its decimal form.
//
// fuzz-args: -dict=options.dict -max_len=64
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/settings.h"
#include "base/words.h"
#include "fuzz_support.h"
#include "programs/cli_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t size) {
  using namespace mibz2;
  const std::string text(reinterpret_cast<const char*>(input), size);
  if (const auto n = base::parse_threads(text)) {
    FUZZ_CHECK(*n >= 1 && *n <= 1024, "'" + text + "' gives " + std::to_string(*n) + " threads");
    FUZZ_CHECK(base::parse_threads(std::to_string(*n)) == n, "thread count " + std::to_string(*n) + " does not read back");
  }
  if (const auto v = base::parse_size(text)) {
    (void)base::human_bytes(*v);
    if (*v < (uint64_t{1} << 53))
      FUZZ_CHECK(base::parse_size(std::to_string(*v)) == v, "size " + std::to_string(*v) + " does not read back");
  }
  return 0;
}
