// Counting and finding newline bytes ('\n') in decoded bytes: the line counts of the index
// (index/FORMAT.md, "newline counts") are made and checked with these, at every build and at every
// decode of a block for a read, so counting must run at memory speed beside the decoder's ~60 MB/s
// a core.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mibz2::index {

// The number of '\n' bytes in [data, data + size).
uint64_t count_newlines(const uint8_t* data, size_t size);

// The offset just past the `rank`-th '\n' (1-based) in [data, data + size), or SIZE_MAX when there
// are fewer.
size_t after_nth_newline(const uint8_t* data, size_t size, uint64_t rank);

}  // namespace mibz2::index
