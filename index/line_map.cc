#include "index/line_map.h"

#include <algorithm>
#include <cerrno>

#include "index/newline_count.h"

namespace mibz2::index {
namespace {

// A block is read for the line it holds in pieces of this size, so that one line seek holds at most
// this much beside the block cache, even in a block that expands to 46 MB.
constexpr size_t kPieceBytes = 1 << 20;

std::string no_counts_why() {
  return "the index has no line counts (it was made by an older mibz2: `mibz2 index --force FILE` "
         "makes a new one)";
}

}  // namespace

LineMap::LineMap(const BlockIndex& index) : index_(index) {
  newlines_before_.push_back(0);
  if (!index.has_line_counts()) return;
  for (size_t i = 0; i < index.newlines.size() && index.newlines[i] != kUnknownNewlines; ++i) {
    newlines_before_.push_back(newlines_before_.back() + index.newlines[i]);
    known_blocks_ = i + 1;
  }
}

std::optional<uint64_t> LineMap::line_count() const {
  if (index_.line_count == kUnknownLines) return std::nullopt;
  return index_.line_count;
}

std::string LineMap::unknown_why() const {
  if (line_count()) return {};
  return unknown_from("the lines in it and after it are unknown");
}

LineMap::Gap LineMap::gap() const {
  if (known_blocks_ == index_.blocks.size()) return index_.line_count == kUnknownLines ? Gap::kNotCounted : Gap::kNone;
  return index_.has_line_counts() && index_.blocks[known_blocks_].damaged() ? Gap::kDamaged : Gap::kNotCounted;
}

uint64_t LineMap::known_end() const {
  return known_blocks_ < index_.blocks.size() ? index_.blocks[known_blocks_].out_offset : index_.decompressed_size;
}

std::string LineMap::unknown_from(const std::string& consequence) const {
  if (gap() == Gap::kDamaged)
    return describe_block(index_, known_blocks_) + " is damaged (" + describe_damage(index_.blocks[known_blocks_]) +
           "): " + consequence;
  return no_counts_why();
}

std::optional<LineMap::Place> LineMap::place_of(uint64_t rank) const {
  // The first block whose newlines reach `rank`: the line starts just after its rank-th newline
  // counted from the file's start (or, with rank 0, at the first byte).
  if (rank == 0) return Place{0, 0};
  const auto end = newlines_before_.begin() + static_cast<ptrdiff_t>(known_blocks_) + 1;
  const auto it = std::lower_bound(newlines_before_.begin() + 1, end, rank);
  if (it == end) return std::nullopt;
  const size_t block = static_cast<size_t>(it - newlines_before_.begin()) - 1;
  return Place{block, rank - newlines_before_[block]};
}

base::Result<uint64_t> LineMap::line_start(uint64_t n, const ReadAt& read) const {
  MIBZ2_RETURN_ERROR_IF(n == 0, EINVAL, "line numbers start at 1");
  if (n == 1) return uint64_t{0};
  // Past the last line: where a line after it would start, the end of the file.
  if (const auto count = line_count(); count && n > *count) return index_.decompressed_size;
  const std::optional<Place> place = place_of(n - 1);
  if (!place)
    return base::Status::error(ENODATA, "line " + std::to_string(n) + ": " +
                                            unknown_from("line numbers from there on are unknown"));
  return find_in_block(*place, n, read);
}

base::Result<uint64_t> LineMap::find_in_block(const Place& place, uint64_t n, const ReadAt& read) const {
  const uint64_t begin = index_.blocks[place.block].out_offset;
  const uint64_t end = begin + index_.block_size(place.block);
  std::vector<uint8_t> piece(static_cast<size_t>(std::min<uint64_t>(kPieceBytes, end - begin)));
  uint64_t rank = place.rank_in_block;
  for (uint64_t at = begin; at < end;) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(piece.size(), end - at));
    const ssize_t got = read(at, want, piece.data());
    if (got < 0) return base::Status::os_error(static_cast<int>(-got), "reading " + describe_block(index_, place.block));
    MIBZ2_RETURN_ERROR_IF(got == 0, EIO, describe_block(index_, place.block) + " ended early");
    const size_t count = static_cast<size_t>(got);
    const uint64_t here = count_newlines(piece.data(), count);
    if (here >= rank) return at + after_nth_newline(piece.data(), count, rank);
    rank -= here;
    at += count;
  }
  return base::Status::error(EBADMSG, describe_block(index_, place.block) + " holds fewer newlines than its index " +
                                          "record says, looking for line " + std::to_string(n));
}

}  // namespace mibz2::index
