#include "index/block_index.h"

#include <algorithm>
#include <cstdio>

namespace mibz2::index {

size_t BlockIndex::block_at(uint64_t offset) const {
  // The last block whose out_offset <= offset.
  auto it = std::upper_bound(blocks.begin(), blocks.end(), offset,
                             [](uint64_t off, const BlockRecord& r) { return off < r.out_offset; });
  return it == blocks.begin() ? 0 : static_cast<size_t>(it - blocks.begin()) - 1;
}

std::string describe_block(const BlockIndex& index, size_t i) {
  const BlockRecord& r = index.blocks[i];
  char buf[200];
  std::snprintf(buf, sizeof buf, "block %zu (compressed bits %llu..%llu, decompressed bytes %llu..%llu)", i,
                static_cast<unsigned long long>(r.start_bit()), static_cast<unsigned long long>(r.end_bit()),
                static_cast<unsigned long long>(r.out_offset),
                static_cast<unsigned long long>(r.out_offset + index.block_size(i)));
  return buf;
}

std::string describe_damage(const BlockRecord& r) {
  if (r.truncated()) return "truncated: the file ends inside it; its size is nominal";
  if (r.undecodable() && r.stream_crc_mismatch())
    return "an empty stream whose combined CRC does not match; its size is nominal";
  if (r.undecodable()) return "undecodable: its size is nominal and offsets after it are shifted";
  if (r.crc_mismatch()) return "CRC mismatch";
  if (r.stream_crc_mismatch()) return "ends a stream whose combined CRC does not match";
  return {};
}

std::vector<std::string> damage_report(const BlockIndex& index) {
  std::vector<std::string> lines;
  for (size_t i = 0; i < index.blocks.size(); ++i) {
    const BlockRecord& r = index.blocks[i];
    if (!r.damaged()) continue;
    char where[160];
    std::snprintf(where, sizeof where, "; decompressed bytes %llu..%llu; compressed bits %llu..%llu",
                  static_cast<unsigned long long>(r.out_offset),
                  static_cast<unsigned long long>(r.out_offset + index.block_size(i)),
                  static_cast<unsigned long long>(r.start_bit()), static_cast<unsigned long long>(r.end_bit()));
    lines.push_back("block " + std::to_string(i) + ": " + describe_damage(r) + where);
  }
  return lines;
}

}  // namespace mibz2::index
