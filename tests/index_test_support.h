// Helpers shared by the index and engine tests (on top of test_support.h): a corpus of bzip2 files
// of every shape, builds guarded by a timeout, an index checked against a sequential decode, bytes
// read back through index records, and damaged files made by flipping a chosen bit.
#pragma once

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "bz2/block_decoder.h"
#include "index/block_index.h"
#include "index/index_builder.h"
#include "index/index_store.h"
#include "io/source_bytes.h"
#include "test_support.h"

namespace mibz2::test {

// ---- scale ------------------------------------------------------------------------------------

// Sizes and repetition counts: full in plain builds, smaller (a quarter, at least `floor`) where
// the code runs several times slower, under sanitizers or emulated.
inline constexpr bool kSlowBuild = kSanitized || kEmulated;
inline size_t scaled(size_t n, size_t floor = 1) { return kSlowBuild ? std::max(floor, n / 4) : n; }

// ---- corpus -----------------------------------------------------------------------------------

struct Variant {
  std::string name;
  Bytes plain;  // what the file decompresses to
  Bytes file;   // the .bz2 bytes
};

// Text, runs and random bytes interleaved in pieces of a few kB (so blocks differ inside).
Bytes mixed_bytes(size_t n, uint64_t seed);

// Every valid shape: levels 1..9 with several blocks each, multistream files with mixed levels and
// empty streams, a lone empty stream, run-heavy files (blocks that decode to MBs), tiny files and a
// file whose compressed size spans several scanner chunks. Built once per test program.
const std::vector<Variant>& corpus();

// ---- builds with a watchdog -------------------------------------------------------------------

inline constexpr std::chrono::seconds kBuildTimeout{kSlowBuild ? 600 : 120};

// Steps `builder` on the calling thread until it finishes (a kIdle step yields to the others).
// The tests' own driver: the catalog drives builds on the decoder pool.
void drive_builder(index::IndexBuilder& builder);

// IndexBuilder on `threads` threads with the given window (0: 4 per thread). If the build does not
// finish in time the test program aborts with a message: a hung build must not hang the suite.
index::BuildResult build_guarded(std::span<const uint8_t> data, unsigned threads, size_t window = 0);
// The same over any source (one that fails reads, one too large to hold); `kept`, if given, is what
// the build keeps of an old prefix's index (IndexBuilder's), and *decodes, if given, gets the
// candidates it decoded.
index::BuildResult build_guarded(const io::SourceBytes& source, unsigned threads, size_t window = 0,
                                 const index::IndexPrefix* kept = nullptr, uint64_t* decodes = nullptr);

// ---- read errors ------------------------------------------------------------------------------

// A source whose reads fail with `error` wherever they overlap bytes [from, to) while `*fault_on`
// is true (always, when it is null), as on a flaky disk or remote storage that fails a range;
// other reads are `inner`'s. Counts the reads it failed.
class FaultyBytes final : public io::SourceBytes {
 public:
  FaultyBytes(std::unique_ptr<io::SourceBytes> inner, uint64_t from, uint64_t to,
              const std::atomic<bool>* fault_on = nullptr, int error = EIO);
  uint64_t failed_reads() const { return failed_.load(); }

 private:
  io::SourceRead read_at(uint64_t offset, size_t len, uint8_t* out) const override;

  const std::unique_ptr<io::SourceBytes> inner_;
  const uint64_t from_, to_;
  const std::atomic<bool>* const fault_on_;
  const int error_;
  mutable std::atomic<uint64_t> failed_{0};
};

// ---- checks -----------------------------------------------------------------------------------
// Lines of `plain` as `sed -n '$='` and the index count them: its '\n' bytes, plus one when it does
// not end with one (a plain counting loop, not the index's).
uint64_t sed_lines(std::span<const uint8_t> plain);
// Where line n (1-based) starts in `plain`, by walking its bytes: its size when there is no line n.
uint64_t walked_line_start(std::span<const uint8_t> plain, uint64_t n);
// What an expected index says once record `block` is damaged with `flags`: those flags, and its
// newlines and the file's line count unknown (the damage counters are the caller's).
void mark_damaged(index::BlockIndex& want, size_t block, uint8_t flags);

// The bytes of an index file of format version 2 for `idx` (an index made before line counts:
// no line count in the header, no column of newline counts after the records), checksum and all.
Bytes version2_bytes(const index::BlockIndex& idx);

// Every field and record equal (records compared field by field, first difference reported).
::testing::AssertionResult same_index(const index::BlockIndex& actual, const index::BlockIndex& expected);

// The index of a valid file against the walk of its blocks with BlockDecoder: the same blocks at the
// same bits with the same level, CRC, stream starts and decompressed offsets; the sizes add up; no
// damage, no trailing bytes, not truncated.
::testing::AssertionResult index_matches_layout(const index::BlockIndex& idx, const FileLayout& layout,
                                                uint64_t decompressed_size);

// Reads decompressed bytes through an index alone: each block decoded from its record (start bit,
// level) with BlockDecoder, checked against the record (end bit, CRC, size), kept for later ranges.
class IndexedBytes {
 public:
  IndexedBytes(std::span<const uint8_t> file, const index::BlockIndex& idx) : file_(file), idx_(idx) {}
  // Block i, or null (with a test failure) if it does not decode as its record says. Damaged blocks
  // are never decoded: null without a failure.
  const Bytes* block(size_t i);
  // [offset, offset + length) clipped to the decompressed size; nullopt when the range touches a
  // damaged block or a block failed to decode.
  std::optional<Bytes> range(uint64_t offset, uint64_t length);

 private:
  std::span<const uint8_t> file_;
  const index::BlockIndex& idx_;
  bz2::BlockDecoder decoder_;
  std::map<size_t, Bytes> blocks_;
};

// ---- damage -----------------------------------------------------------------------------------

// A bit of the block's coded symbols whose flip keeps its structure (it still decodes to the same
// end bit and the same size) but makes its CRC fail: tried from the middle of the block onwards.
std::optional<uint64_t> find_crc_only_flip(const Bytes& file, const BlockSpan& block);
// `file` with that bit flipped: the block still decodes to its size, and fails its CRC. nullopt
// when find_crc_only_flip finds no such bit.
std::optional<Bytes> with_crc_only_damage(const Bytes& file, const BlockSpan& block);
// A bit in the block's symbol map / tables whose flip makes its decode fail before the symbols are
// read (so the block's extent is unknown).
std::optional<uint64_t> find_early_failure_flip(const Bytes& file, const BlockSpan& block);

// The file with bits [from, to) replaced by `insert` (bits [0, insert_bits) of it, MSB first), the
// rest moved up or down and the last byte zero-padded: a block cut out of a stream, or repeated.
Bytes splice_bits(const Bytes& file, uint64_t from, uint64_t to, const Bytes& insert = {}, uint64_t insert_bits = 0);
// Bits [from, to) of `file`, MSB first, in a buffer of their own.
Bytes copy_bits(const Bytes& file, uint64_t from, uint64_t to);

// ---- files of one content identity with other bytes ----------------------------------------------

// A multistream file of one level-1 block per stream, from which a twin can be made: the same file
// with one stream's content changed (same length) and its compressed size kept. When that stream
// lies outside the first and last 64 KiB, the twin has the same size and fingerprint, the same
// content identity (index/FORMAT.md, "Identity"), with other bytes: what a forged or colliding
// index looks like.
struct StreamedFile {
  std::vector<Bytes> plains;   // each stream's content
  std::vector<Bytes> streams;  // each stream compressed
  Bytes plain() const;
  Bytes file() const;
  uint64_t stream_offset(size_t k) const;  // where stream k starts in file()
  // The same file with stream k's content changed and its compressed size kept.
  StreamedFile with_stream_changed(size_t k) const;
};
// `streams` streams of `stream_plain` bytes of text each (at most 100000: one level-1 block).
StreamedFile streamed_file(size_t streams, size_t stream_plain, uint64_t seed);

// ---- files ------------------------------------------------------------------------------------

// stat() of a path (aborts the test on failure).
struct FileTimes {
  struct timespec mtime;
  uint64_t inode;
};
FileTimes stat_times(const std::string& path);
// The identity of the file at `path` as the catalog takes it (size, mtime, inode, fingerprint).
index::SourceIdentity identity_of(const std::string& path);
// Sets the mtime (and atime) back to `t` with utimensat.
void restore_mtime(const std::string& path, const struct timespec& t);

}  // namespace mibz2::test
