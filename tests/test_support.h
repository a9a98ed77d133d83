// Shared helpers of the bz2 test suite: libbz2 as the reference codec, our decoder behind the same
// shape of interface, deterministic data generators, bit fiddling, a tiny bzip2 block writer for
// hand-made blocks, temporary directories and shell commands.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "base/sanitizers.h"
#include "base/status.h"
#include "bz2/block_decoder.h"
#include "bz2/cpu_dispatch.h"
#include "bz2/errors.h"

namespace mibz2::base {
// A Status in a test's message: its words ("ok" when it is no failure).
inline std::ostream& operator<<(std::ostream& os, const Status& s) { return os << (s.ok() ? "ok" : s.message()); }
}  // namespace mibz2::base

namespace mibz2::test {

// A sanitizer build: slower, and its memory figures are the sanitizer's (ASan keeps freed memory
// in quarantine), not the program's.
inline constexpr bool kSanitized = base::kAddressSanitizer || base::kThreadSanitizer;

// A cross build's tests, run under an emulator (qemu-aarch64: tens of times slower than native;
// CMakeLists.txt defines MIBZ2_TESTS_EMULATED there).
#ifndef MIBZ2_TESTS_EMULATED
#define MIBZ2_TESTS_EMULATED 0
#endif
inline constexpr bool kEmulated = MIBZ2_TESTS_EMULATED != 0;

using Bytes = std::vector<uint8_t>;

inline std::span<const uint8_t> as_span(const Bytes& b) { return {b.data(), b.size()}; }
Bytes to_bytes(const std::string& s);
Bytes concat(std::initializer_list<const Bytes*> parts);

// The decoder's instruction-set levels this CPU runs (bz2/cpu_dispatch.h), portable first, so
// that a test can run every code path on the same inputs; and each level's name for messages.
// isa_levels() lifts any cap set before it.
std::vector<bz2::Isa> isa_levels();
const char* isa_name(bz2::Isa level);
// Caps the level for its lifetime, and lifts the cap when it ends, whatever the test asserted.
struct IsaCap {
  explicit IsaCap(bz2::Isa level) { bz2::set_max_isa(level); }
  ~IsaCap() { bz2::set_max_isa(bz2::Isa::kAvx512); }
  IsaCap(const IsaCap&) = delete;
  IsaCap& operator=(const IsaCap&) = delete;
};

// ---- libbz2, the reference --------------------------------------------------------------------

// One bzip2 stream of `data` made by BZ2_bzBuffToBuffCompress at `level` (1..9). Aborts the test
// program on failure (it cannot fail with enough room).
Bytes libbz2_compress(std::span<const uint8_t> data, int level);

// What `bzip2 -dc` makes of `data`: every stream in turn (the streaming API, re-initialised after
// each BZ_STREAM_END while input remains), trailing bytes that do not start with "BZh" plus a level
// digit after at least one complete stream ignored. ok is false where bzip2 would exit with 2.
struct LibResult {
  bool ok = false;
  int error = 0;  // the libbz2 code that ended decoding (0 when ok; -99 for an empty file)
  Bytes out;      // on failure: whatever was produced before the error
};
LibResult libbz2_decompress(std::span<const uint8_t> data);

// The libbz2 CRC (its own exported table), computed bytewise: the independent reference.
uint32_t libbz2_crc(std::span<const uint8_t> data);

// ---- our decoder ------------------------------------------------------------------------------

struct OurResult {
  bz2::Error error;
  Bytes out;
  std::vector<std::string> warnings;
  bool ok() const { return !error; }
};
// decode_sequential over `data`; uses `decoder` if given, else one kept for the whole test program
// (reusing scratch across files is part of what is tested).
OurResult decode_ours(std::span<const uint8_t> data, bz2::BlockDecoder* decoder = nullptr);

// ---- deterministic data -----------------------------------------------------------------------

// splitmix64: small, fast, good enough, the same everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next();
  uint32_t below(uint32_t n) { return static_cast<uint32_t>(next() % n); }
  uint8_t byte() { return static_cast<uint8_t>(next() >> 56); }

 private:
  uint64_t state_;
};

Bytes random_bytes(size_t n, uint64_t seed);
// Words from a small vocabulary with a skewed choice, punctuation and line breaks.
Bytes text_bytes(size_t n, uint64_t seed);
// Runs of equal bytes with lengths spread over 1..600 and the RLE1 edges (3..5, 255..260) favoured.
Bytes runs_bytes(size_t n, uint64_t seed);
// Each of the 256 byte values `copies` times, shuffled.
Bytes all_byte_values(size_t copies, uint64_t seed);
Bytes repeated_byte(size_t n, uint8_t value);
// Random bytes where no byte equals its predecessor or its predecessor with bit 0 flipped: no runs,
// before or after xoring with the randomisation mask (which only flips bit 0).
Bytes no_runs_bytes(size_t n, uint64_t seed);

// Equality of byte strings that reports sizes and the first difference instead of both dumps.
::testing::AssertionResult same_bytes(const Bytes& actual, const Bytes& expected);

// ---- bits (MSB-first, as bzip2 stores them) ---------------------------------------------------

bool get_bit(std::span<const uint8_t> data, uint64_t bit);
uint64_t get_bits(std::span<const uint8_t> data, uint64_t bit, unsigned n);  // n <= 64
void set_bits(Bytes& data, uint64_t bit, unsigned n, uint64_t value);
inline void flip_bit(Bytes& data, uint64_t bit) { data[bit / 8] ^= static_cast<uint8_t>(0x80u >> (bit % 8)); }

class BitWriter {
 public:
  void put(uint64_t value, unsigned n);  // n <= 64, most significant first
  void put_bytes(const std::string& s);
  uint64_t bits() const { return bits_; }
  // Pads with zero bits to a byte boundary and returns the bytes.
  Bytes finish();

 private:
  Bytes out_;
  uint64_t bits_ = 0;
};

// ---- layout of a valid file, walked with BlockDecoder -----------------------------------------

struct BlockSpan {
  uint64_t start_bit = 0;  // the block magic
  uint64_t end_bit = 0;    // first bit after the block
  int level = 0;
  uint32_t stored_crc = 0;
  uint32_t bwt_length = 0;
  size_t stream = 0;
  size_t out_offset = 0;   // where its bytes start in the decoded file
  size_t out_size = 0;
};
struct FileLayout {
  std::vector<BlockSpan> blocks;
  std::vector<uint64_t> eos_bits;     // end-of-stream markers
  std::vector<uint64_t> stream_bytes; // byte offset of each stream header
};
// Walks every stream and block of a file that must decode; returns false (with a gtest failure) if
// it does not.
bool walk_file(std::span<const uint8_t> data, FileLayout* layout);

// ---- bzip2's own transforms, for making blocks by hand ----------------------------------------

// RLE1 as the compressor applies it: 4..259 equal bytes become 4 copies and a count byte 0..255.
Bytes rle1_encode(std::span<const uint8_t> data);
// The randomisation mask for n bytes (bit 0 set where libbz2's BZ_RAND_MASK is 1), from BZ2_rNums.
Bytes randomisation_mask(size_t n);

// A block built from its pre-RLE1 bytes (the bytes the BWT sorts). Defaults make a valid block.
struct BlockSpec {
  BlockSpec() = default;
  explicit BlockSpec(Bytes pre) : pre_rle1(std::move(pre)) {}

  Bytes pre_rle1;                       // what the inverse BWT must produce
  std::optional<uint32_t> crc;          // stored CRC; default: CRC of the RLE1-decoded bytes
  bool randomised = false;              // pre_rle1 is xored with the mask before the BWT
  std::optional<uint32_t> orig_ptr;     // overrides the origin pointer
  std::optional<Bytes> bwt;             // overrides the BWT column (with orig_ptr): need not be
                                        // the transform of anything
  int tables = 2;                       // Huffman tables written (all alike)
  std::optional<uint32_t> selectors;    // selector count written (default: as many as needed)
  // Code lengths of each table (alphabet size entries each, 1..20; need not make a prefix code:
  // codes are assigned canonically as bzip2 does, whatever they collide with). When set, they
  // replace `tables` flat tables.
  std::vector<std::vector<uint8_t>> code_lengths;
  // The table of group g is group_tables[g % size] (default: table 0 for every group).
  std::vector<uint8_t> group_tables;
};
// The alphabet size (symbols in use + 2) of the block the spec makes.
int block_alphabet_size(const BlockSpec& spec);
// Appends the block (magic to end-of-block symbol) to `w`; returns the stored CRC.
uint32_t write_block(BitWriter& w, const BlockSpec& spec);
// "BZh<level>", the blocks, the end-of-stream marker with the combined CRC, byte padding.
Bytes make_stream(int level, const std::vector<BlockSpec>& blocks);
// The bytes a decoder must produce from pre-RLE1 bytes (RLE1 undone), or nullopt if the bytes end
// inside a run of four with no count byte.
std::optional<Bytes> rle1_decode(std::span<const uint8_t> pre_rle1);

// ---- waiting ----------------------------------------------------------------------------------

// Polls `condition` (after 100 us, then less often, at least every millisecond) until it holds or
// `timeout` passes; returns whether it held. The bound only ends a wait for something that never
// comes: a test asserts what happens, never when.
bool eventually(const std::function<bool()>& condition,
                std::chrono::milliseconds timeout = std::chrono::seconds(kSanitized ? 60 : 20));

// ---- files and programs -----------------------------------------------------------------------

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path file(const std::string& name) const { return path_ / name; }
  std::filesystem::path write(const std::string& name, std::span<const uint8_t> data) const;

 private:
  std::filesystem::path path_;
};

Bytes read_file(const std::filesystem::path& path);
void write_file(const std::filesystem::path& path, std::span<const uint8_t> data);

struct CommandResult {
  int status = -1;  // exit status, or 128 + signal, or -1 if it could not run
  Bytes out;        // standard output
  std::string err;  // standard error, when captured (the run_command with an err_path)
  std::string out_text() const { return std::string(out.begin(), out.end()); }
  std::vector<std::string> err_lines() const;
};
// Runs `command` with /bin/sh; standard error is left alone unless the command redirects it.
CommandResult run_command(const std::string& command);
// The same with standard error captured, through the file `err_path` (written over, left behind):
// `command` must be one that its own 2> can follow (a simple command, or one in braces).
CommandResult run_command(const std::string& command, const std::filesystem::path& err_path);
std::string shell_quote(const std::string& s);
bool have_program(const std::string& name);

}  // namespace mibz2::test
