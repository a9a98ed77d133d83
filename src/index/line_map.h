// Line numbers of a decompressed file, from its index's newline counts (index/FORMAT.md, version 3):
// how many lines it has, and where line N starts, found by reading the one block that holds that
// line's start, never the blocks before it. Lines are counted as `sed` and `wc -l` count them: line
// N starts after the (N-1)-th '\n', and a last line without its newline is a line too.
//
// What the index cannot tell is said as such (ENODATA, with why), never guessed: an index without
// line counts (format version 2), and every line after a damaged block (its newlines, and after an
// undecodable one even its size, are unknown). Lines before the first damage are known. What it
// tells is the index's counts, checked as FORMAT.md says ("What is checked about line numbers"):
// their sum when the index is parsed, each count (and the last line) when its block is decoded;
// the block holding line N is checked here, the blocks before it are not.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "index/block_index.h"

namespace mibz2::index {

class LineMap {
 public:
  // Copies up to `length` bytes at decompressed `offset` into `out`: the count, fewer at a damaged
  // block, or -errno (engine::Reader::read).
  using ReadAt = std::function<ssize_t(uint64_t offset, size_t length, uint8_t* out)>;

  // `index` must outlive the map. Costs one pass over the newline counts, and keeps a checkpoint
  // every kStride blocks.
  explicit LineMap(const BlockIndex& index);

  // Lines of the file, or nullopt when the index cannot tell (unknown_why() says why).
  std::optional<uint64_t> line_count() const;
  // Why lines from some block on cannot be numbered: kNone, all can; kNotCounted, the index never
  // counted them (format version 2, or written again from one); kDamaged, a damaged block.
  enum class Gap { kNone, kNotCounted, kDamaged };
  Gap gap() const;
  // Where the lines the index can number end: the first byte of the first block whose newlines are
  // unknown, or the file's size. Lines that start before it can be found; a range of lines runs
  // into the gap there.
  uint64_t known_end() const;
  // Why the line count is unknown ("the index has no line counts (...)", "block 7 is damaged: ..."),
  // or empty when it is known.
  std::string unknown_why() const;

  // The decompressed offset where line `n` (1-based) starts: the file's size when n is past its
  // last line. Reads (through `read`) at most the one block that holds the start. Fails with
  // EINVAL for n = 0, ENODATA when the index cannot tell (the start lies after a damaged block, or
  // the index has no line counts; the message says which), EBADMSG when the block holds fewer
  // newlines than its record says, or the read's error.
  base::Result<uint64_t> line_start(uint64_t n, const ReadAt& read) const;

 private:
  // Which block holds the start of the line after `rank` newlines, and how many of that block's
  // newlines come before it: nullopt when it lies past the known blocks.
  struct Place {
    size_t block;
    uint64_t rank_in_block;
  };
  std::optional<Place> place_of(uint64_t rank) const;
  // Why the lines from the first block without a known newline count on are unknown, ending with
  // `consequence` when that block is damaged.
  std::string unknown_from(const std::string& consequence) const;
  base::Result<uint64_t> find_in_block(const Place& place, uint64_t n, const ReadAt& read) const;

  // Every LineMap (one per getxattr, `mibz2 info`, open file) would otherwise hold 8 bytes a block
  // beside the index's 36: 26 MB for the 3 million blocks of Wikidata's 1.4 TB of JSON. A line
  // start walks at most 64 counts from its checkpoint, nothing beside a block's decode.
  static constexpr size_t kStride = 64;
  const BlockIndex& index_;
  // newlines_before_[j]: the '\n' bytes of blocks [0, j * kStride), for the known blocks.
  std::vector<uint64_t> newlines_before_;
  size_t known_blocks_ = 0;  // blocks before the first whose newline count is unknown
};

}  // namespace mibz2::index
