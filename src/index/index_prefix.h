// What the build of a file that grew keeps of the index it had before (index/FORMAT.md, "A file
// that grew"): a download, a log appended to. Indexing it from its start at every look costs a
// full decode each time (a 10 MB download looked at 15 times decoded 8 times its size); keeping
// the blocks of the old prefix costs one block a look.
//
// Nothing is kept that is not proven: the file must be the same inode, larger, with its first
// old-size bytes still of the old content's fingerprint (the first 64 KiB and the 64 KiB before
// the old end); the old index must be whole but for its end (no damage but a truncated last
// record, no empty stream, line counts); and the build decodes the old prefix's last complete
// block again first, which must match its record exactly (start, length, CRC, size, newlines), or
// the build keeps nothing and the file is indexed from its start (BuildResult::prefix_changed).
// Every block is still checked against its record when it is read, as with any index.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "index/block_index.h"
#include "io/source_bytes.h"

namespace mibz2::index {

struct IndexPrefix {
  // The records kept as they are (every block before the last complete one), with their newline
  // counts.
  std::vector<BlockRecord> blocks;
  std::vector<uint32_t> newlines;
  // The old prefix's last complete block: the build starts by decoding it again, and goes on only
  // if it decodes to exactly this (its end is where the build continues; its last byte tells
  // whether the file so far ends with a newline, which no record keeps).
  BlockRecord last{};
  uint64_t last_size = 0;
  uint32_t last_newlines = 0;
  // The stream `last` belongs to: streams begun up to it, its first record, and the combined CRC
  // of its blocks before `last` (so that the stream's CRC check still covers the whole stream).
  uint64_t stream_count = 0;
  size_t stream_first_block = 0;
  uint32_t stream_crc = 0;

  // Compressed bytes the build does not read again (those before `last`).
  uint64_t bytes_kept() const { return last.start_bit() / 8; }
};

// What a build can keep of `old`, an index of a file's first old.source.size bytes, once the file
// has grown; or nothing, with *why, when `old` records damage (other than a last record cut by the
// old end), has no line counts, holds an empty stream, or has no complete block.
std::optional<IndexPrefix> resumable_prefix(const BlockIndex& old, std::string* why = nullptr);

// Whether `source` (identity `now`) is the file `old` was made from, grown: the same inode, larger,
// and its first old.source.size bytes of old's fingerprint (the content identity of what it was).
// Then `old` is superseded, and resumable_prefix() says what a build may keep of it. False, with
// *why, otherwise (a read that fails too: the build from the start meets it again).
bool grew_from(const BlockIndex& old, const SourceIdentity& now, const io::SourceBytes& source,
               std::string* why = nullptr);

}  // namespace mibz2::index
