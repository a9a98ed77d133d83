// How the programs ask the C library for memory. Decoded blocks are large (about 1 MB, up to
// 46 MB) and live as long as the cache keeps them, freed in LRU order across threads: allocated
// from glibc's heaps and per-thread arenas they leave holes that stay resident, and glibc raises
// its mmap threshold on every large free (up to 32 MiB), so more of them land in arenas. Seen in
// a soak with cache_size=64M: two 64 MiB thread arenas and a 52 MiB heap fully resident. With a
// fixed threshold of 256 KiB every block buffer is its own mapping, returned to the system when
// freed, so resident memory follows the cache's bound. The cost, a page fault per 4 KiB of a fresh
// block and a TLB shootdown per unmapping, is mostly avoided by base/buffer_memory.h, which keeps up
// to 16 MiB of freed block buffers for the next blocks.
#pragma once

#include <malloc.h>

namespace mibz2::base {

inline void use_mappings_for_large_buffers() { mallopt(M_MMAP_THRESHOLD, 256 * 1024); }

}  // namespace mibz2::base
