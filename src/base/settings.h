// The rules of the values every front end takes for its settings (mibz2, mibz2fs and the Python
// module alike, written down in man/mibz2.1 and man/mibz2fs.1): sizes, thread counts, the least
// cache. One parser for each, so that a size means the same bytes at every door.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mibz2::base {

// --- sizes ---
//
// A SIZE is a whole number of bytes ("4096"), or a number with a unit: K, M, G or T, powers of
// 1024, in either case, optionally followed by "i" and "B" ("64K", "64k", "64KiB", "64KB" are all
// 65536). With a unit the number may have a fraction, and the result is rounded down to whole
// bytes ("1.5K" is 1536, "0.3K" is 307). A plain number of bytes has no fraction ("100.5" is not a
// size: no unit makes it whole), no sign, no spaces. Zero is a size; where it makes no sense the
// option says so. Sizes above 2^64 - 1 bytes are not sizes.
std::optional<uint64_t> parse_size(std::string_view text);
// "'TEXT' is not a size (...)": the one wording of a bad SIZE, for both programs.
std::string not_a_size(std::string_view text);

// --- thread counts ---
//
// A thread count is a whole number from 1 to 1024 in decimal digits. No count given means
// engine::default_decoder_threads() (the CPUs this process may run on): the programs pass 0 on,
// and that function alone decides.
std::optional<unsigned> parse_threads(std::string_view text);
// "'TEXT' is not a thread count (1 to 1024)".
std::string not_a_thread_count(std::string_view text);

// --- the decoded-block cache (mibz2fs -o cache_size) ---
//
// At least 1 MiB: a full block of bzip2 -9 decodes to about 900 kB or more (runs expand it further),
// and a cache that cannot hold the block being read decodes it again for every read.
inline constexpr uint64_t kMinCacheBytes = uint64_t{1} << 20;
// Empty when `bytes` is a usable cache size, else why not (one line). When it is usable but above
// `physical_memory` (0: unknown), *warning says so (one line); otherwise it is cleared.
std::string check_cache_size(uint64_t bytes, uint64_t physical_memory, std::string* warning);
// The machine's physical memory in bytes, 0 if unknown.
uint64_t physical_memory();

}  // namespace mibz2::base
