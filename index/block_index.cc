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

}  // namespace mibz2::index
