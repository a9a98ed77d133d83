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
  uint64_t before = 0;
  for (; known_blocks_ < index.newlines.size() && index.newlines[known_blocks_] != kUnknownNewlines; ++known_blocks_) {
    before += index.newlines[known_blocks_];
    if ((known_blocks_ + 1) % kStride == 0) newlines_before_.push_back(before);
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
  // The last checkpoint before the rank-th newline, then at most kStride blocks' counts.
  if (rank == 0) return Place{0, 0};
  const auto after = std::lower_bound(newlines_before_.begin(), newlines_before_.end(), rank);
  const size_t checkpoint = static_cast<size_t>(after - newlines_before_.begin()) - 1;
  uint64_t before = newlines_before_[checkpoint];
  for (size_t i = checkpoint * kStride; i < known_blocks_; ++i) {
    if (before + index_.newlines[i] >= rank) return Place{i, rank - before};
    before += index_.newlines[i];
  }
  return std::nullopt;
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
