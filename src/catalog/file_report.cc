#include "catalog/file_report.h"

#include "index/block_index.h"
#include "index/line_map.h"

namespace mibz2::catalog {
namespace {

const char* damage_kind(const index::BlockRecord& r) {
  if (r.truncated()) return "truncated";
  if (r.undecodable() && r.stream_crc_mismatch()) return "empty_stream_crc_mismatch";
  if (r.undecodable()) return "undecodable";
  if (r.crc_mismatch()) return "crc_mismatch";
  return "stream_crc_mismatch";
}

}  // namespace

const char* index_state(const IndexOrigin& origin) {
  if (origin.validated) return origin.sidecar ? "sidecar, validated for this file" : "validated for this copy";
  if (!origin.built) return "current";
  return origin.saved ? "built now" : "built now, in memory only (not saved)";
}

FileReport report_file(const std::string& file, const IndexStatus& got) {
  const index::BlockIndex& idx = *got.index;
  FileReport r;
  r.file = file;
  r.compressed_size = idx.source.size;
  r.decompressed_size = idx.decompressed_size;
  const index::LineMap lines(idx);
  r.lines = lines.line_count();
  if (!r.lines) r.lines_unknown = lines.unknown_why();
  r.streams = idx.stream_count;
  r.blocks = idx.blocks.size();
  for (size_t i = 0; i < idx.blocks.size(); ++i) {
    const index::BlockRecord& b = idx.blocks[i];
    if (!b.damaged()) continue;
    r.damaged_blocks.push_back({i, b.start_bit(), b.end_bit(), b.out_offset, idx.block_size(i), damage_kind(b),
                                index::describe_damage(b), index::describe_block(idx, i)});
  }
  r.offsets_shifted = idx.flags & index::BlockIndex::kHasUndecodable;
  r.stream_crc_mismatch = idx.flags & index::BlockIndex::kStreamCrcMismatch;
  r.truncated_at_bit = idx.truncated_at_bit;
  r.trailing_bytes = idx.trailing_bytes;
  r.index_path = got.origin.index_path;
  r.index_state = index_state(got.origin);
  return r;
}

}  // namespace mibz2::catalog
