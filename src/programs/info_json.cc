#include "programs/info_json.h"

#include <cstdio>

#include "index/block_index.h"
#include "index/line_map.h"

namespace mibz2::programs {
namespace {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += static_cast<char>(ch);
    } else if (ch < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", ch);
      out += buf;
    } else {
      out += static_cast<char>(ch);
    }
  }
  return out + "\"";
}

// The kind of a damaged record.
const char* damage_kind(const index::BlockRecord& r) {
  if (r.truncated()) return "truncated";
  if (r.undecodable() && r.stream_crc_mismatch()) return "empty_stream_crc_mismatch";
  if (r.undecodable()) return "undecodable";
  if (r.crc_mismatch()) return "crc_mismatch";
  return "stream_crc_mismatch";
}

std::string u64(uint64_t v) { return std::to_string(v); }

// ",\"lines\":N", or when the index cannot tell, null and why (an index without line counts, damage).
std::string lines_fields(const index::BlockIndex& idx) {
  const index::LineMap lines(idx);
  if (const auto count = lines.line_count()) return ",\"lines\":" + u64(*count);
  return ",\"lines\":null,\"lines_unknown\":" + json_string(lines.unknown_why());
}
const char* boolean(bool b) { return b ? "true" : "false"; }

}  // namespace

const char* index_state(const catalog::IndexOrigin& origin) {
  if (origin.validated) return origin.sidecar ? "sidecar, validated for this file" : "validated for this copy";
  if (!origin.built) return "current";
  return origin.saved ? "built now" : "built now, in memory only (not saved)";
}

std::string info_json(const std::string& path, const catalog::IndexStatus& got) {
  const index::BlockIndex& idx = *got.index;
  std::string out = "{\"file\":" + json_string(path) + ",\"compressed_size\":" + u64(idx.source.size) +
                    ",\"decompressed_size\":" + u64(idx.decompressed_size) + lines_fields(idx) +
                    ",\"streams\":" + u64(idx.stream_count) +
                    ",\"blocks\":" + u64(idx.blocks.size()) + ",\"damaged_blocks\":[";
  bool first = true;
  for (size_t i = 0; i < idx.blocks.size(); ++i) {
    const index::BlockRecord& r = idx.blocks[i];
    if (!r.damaged()) continue;
    out += std::string(first ? "" : ",") + "{\"block\":" + u64(i) + ",\"start_bit\":" + u64(r.start_bit()) +
           ",\"end_bit\":" + u64(r.end_bit()) + ",\"offset\":" + u64(r.out_offset) + ",\"size\":" +
           u64(idx.block_size(i)) + ",\"kind\":\"" + damage_kind(r) + "\"}";
    first = false;
  }
  out += std::string("],\"offsets_shifted\":") + boolean(idx.flags & index::BlockIndex::kHasUndecodable) +
         ",\"stream_crc_mismatch\":" + boolean(idx.flags & index::BlockIndex::kStreamCrcMismatch) +
         ",\"truncated_at_bit\":" + u64(idx.truncated_at_bit) + ",\"trailing_bytes\":" + u64(idx.trailing_bytes) + ",";
  out += "\"index\":{\"path\":" + json_string(got.origin.index_path) + ",\"state\":" +
         json_string(index_state(got.origin)) + "}}";
  return out;
}

}  // namespace mibz2::programs
