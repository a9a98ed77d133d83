#include "index/index_prefix.h"

#include "bz2/crc32.h"
#include "index/index_store.h"

namespace mibz2::index {
namespace {

std::optional<IndexPrefix> none(std::string* why, std::string words) {
  if (why) *why = std::move(words);
  return std::nullopt;
}

}  // namespace

std::optional<IndexPrefix> resumable_prefix(const BlockIndex& old, std::string* why) {
  if (!old.has_line_counts() || old.newlines.size() != old.blocks.size())
    return none(why, "its index has no line counts");
  // The old end cut the file inside a block, a stream header or an end-of-stream marker (a download
  // under way): that last record is no block, and the build looks again from where it starts.
  const size_t n = old.blocks.size();
  const bool cut = n && old.blocks.back().truncated();
  const size_t complete = n - (cut ? 1 : 0);
  // Damage before the old end is a fact about those bytes that the build would have to take over
  // blind (with the offsets an undecodable block shifted): not kept.
  if (old.damaged_blocks != (cut ? 1u : 0u) || (old.flags & ~uint32_t{BlockIndex::kHasDamage}) != 0)
    return none(why, "its index records damage");
  if (complete == 0) return none(why, "its index has no complete block");
  // Streams begun, counted from the records: an empty stream leaves none, so the count of streams
  // up to a block cannot be had from the records when there is one anywhere.
  uint64_t starts = 0;
  for (const BlockRecord& r : old.blocks) starts += r.stream_start() ? 1 : 0;
  if (starts != old.stream_count) return none(why, "its index holds an empty stream");

  IndexPrefix p;
  const size_t last = complete - 1;
  p.blocks.assign(old.blocks.begin(), old.blocks.begin() + static_cast<std::ptrdiff_t>(last));
  p.newlines.assign(old.newlines.begin(), old.newlines.begin() + static_cast<std::ptrdiff_t>(last));
  p.last = old.blocks[last];
  p.last_size = old.block_size(last);
  p.last_newlines = old.newlines[last];
  size_t first = last;
  while (first > 0 && !old.blocks[first].stream_start()) --first;
  if (!old.blocks[first].stream_start()) return none(why, "its index has no stream start");  // (never built so)
  p.stream_first_block = first;
  for (size_t i = 0; i <= first; ++i) p.stream_count += old.blocks[i].stream_start() ? 1 : 0;
  for (size_t i = first; i < last; ++i) p.stream_crc = bz2::combine_stream_crc(p.stream_crc, old.blocks[i].crc);
  return p;
}

bool grew_from(const BlockIndex& old, const SourceIdentity& now, const io::SourceBytes& source, std::string* why) {
  auto no = [why](std::string words) {
    if (why) *why = std::move(words);
    return false;
  };
  if (now.inode != old.source.inode) return no("another file");
  if (now.size <= old.source.size) return no("not larger");
  const base::Result<uint64_t> head = fingerprint_of(source, old.source.size);
  if (!head.ok()) return no(head.status().message());
  if (*head != old.source.fingerprint) return no("its first " + std::to_string(old.source.size) + " bytes are not those indexed before");
  return true;
}

}  // namespace mibz2::index
