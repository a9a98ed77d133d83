// What the programs' command lines share: the rules for sizes and thread counts (the same in
// mibz2 and mibz2fs, written down in man/mibz2.1 and man/mibz2fs.1), the cache size limits, the
// words of their messages, and the progress display.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mibz2::tools {

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

// TEXT made fit for a one-line message: control characters (a newline or escape sequence in an
// argument the user or a script passed) written as \n, \t, \r or \xNN, so that a message never
// spans lines or drives the terminal.
std::string one_line(std::string_view text);

// TEXT made fit for a log line (the daemon's syslog and stderr, every message: names in it come
// from SOURCE, where anyone may have chosen them): as one_line, and also a backslash as \\ (so
// that an escape in the log always stands for one byte of the text, never for itself) and the
// C1 control characters in UTF-8 (U+0080 to U+009F, which some terminals obey like ESC) as
// \u0080 to \u009f. Everything else, other UTF-8 or bytes that are not UTF-8, is kept.
std::string escape_for_log(std::string_view text);

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

// --- words ---

// "1.5 GiB", "512 B".
std::string human_bytes(uint64_t bytes);
// "1 block", "2 blocks", "0 blocks": `noun` is the singular, its plural takes an "s".
std::string plural(uint64_t n, std::string_view noun);

struct ProgressFigures;

// A progress bar on stderr when it is a terminal (compressed position, MB/s, ETA), fitted to its
// width and redrawn in place; silent otherwise.
class Progress {
 public:
  explicit Progress(std::string label);
  ~Progress();
  // `overall`, if given, is drawn as a second line under the bar (mibz2fs -o wait_index's total).
  void update(uint64_t done, uint64_t total, const ProgressFigures* overall = nullptr);
  void finish();  // clears the bar's lines
  bool enabled() const { return enabled_; }

 private:
  std::string label_;
  bool enabled_;
  bool drawn_ = false;
  double start_;
};

}  // namespace mibz2::tools
