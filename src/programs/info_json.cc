#include "programs/info_json.h"

#include <cstdio>


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

std::string u64(uint64_t v) { return std::to_string(v); }

const char* boolean(bool b) { return b ? "true" : "false"; }

}  // namespace

std::string info_json(const catalog::FileReport& r) {
  std::string out = "{\"file\":" + json_string(r.file) + ",\"compressed_size\":" + u64(r.compressed_size) +
                    ",\"decompressed_size\":" + u64(r.decompressed_size);
  // When the index cannot tell (an index without line counts, damage): null, and why.
  out += r.lines ? ",\"lines\":" + u64(*r.lines) : ",\"lines\":null,\"lines_unknown\":" + json_string(r.lines_unknown);
  out += ",\"streams\":" + u64(r.streams) + ",\"blocks\":" + u64(r.blocks) + ",\"damaged_blocks\":[";
  bool first = true;
  for (const catalog::DamagedBlockReport& d : r.damaged_blocks) {
    out += std::string(first ? "" : ",") + "{\"block\":" + u64(d.block) + ",\"start_bit\":" + u64(d.start_bit) +
           ",\"end_bit\":" + u64(d.end_bit) + ",\"offset\":" + u64(d.offset) + ",\"size\":" + u64(d.size) +
           ",\"kind\":\"" + d.kind + "\"}";
    first = false;
  }
  out += std::string("],\"offsets_shifted\":") + boolean(r.offsets_shifted) +
         ",\"stream_crc_mismatch\":" + boolean(r.stream_crc_mismatch) + ",\"truncated_at_bit\":" +
         u64(r.truncated_at_bit) + ",\"trailing_bytes\":" + u64(r.trailing_bytes) + ",";
  out += "\"index\":{\"path\":" + json_string(r.index_path) + ",\"state\":" + json_string(r.index_state) + "}}";
  return out;
}

}  // namespace mibz2::programs
