// Where ByteBuffer's memory comes from: every large buffer (a decoded block) is a mapping of its
// own, freed buffers are kept up to a bound in bytes for the next buffer that needs about as much,
// and a buffer larger than those is grown by moving its pages.
//
// Why mappings of their own: decoded blocks are large (about 1 MB, up to 46 MB) and live as long
// as the cache keeps them, freed in LRU order across threads. Allocated from glibc's heaps and
// per-thread arenas they leave holes that stay resident, and glibc raises its mmap threshold on
// every large free (up to 32 MiB), so more of them land in arenas: seen in a soak with
// cache_size=64M, two 64 MiB thread arenas and a 52 MiB heap fully resident. A mapping is returned
// to the system when it is unmapped, so resident memory follows the cache's bound. This is done
// here, for these buffers only: glibc's policy (mallopt) is the host's, and a library must not
// change it for the whole process (the Python module lives in an interpreter with numpy and
// pandas). Buffers below kMinKept come from glibc as any allocation.
//
// Why keep freed ones: a fresh mapping costs a page fault per 4 KiB written and its unmapping a
// TLB shootdown on every thread of the process: measured on `mibz2 cat -j 2` of 130 MB of JSON,
// 0.14 s of system time beside 0.78 s of decoding (none with a single thread, which reuses one
// buffer). A block is freed about as often as one is decoded (the cache evicts one, a stream's
// consumer is done with one), so a few kept buffers serve nearly every allocation, already
// resident.
//
// The bound: at most kKeptBytes are kept (the oldest go first), only buffers of kMinKept to
// kMaxKept bytes, and a kept buffer is handed out only for a request it exceeds by at most half,
// so that a cache's accounting (by capacity) stays close to what blocks need. Of kept buffers that
// fit alike the newest goes out first: its bytes are likeliest still in the caches (handing out
// the oldest, `mibz2 cat -j 2` of 130 MB of JSON wrote every block into cold memory: 0.246 s of
// wall time against 0.226 s, 21 paired runs). Thread-safe (one mutex, taken once per buffer
// allocated or freed: a few hundred times per second of decoding), and safe across fork() (the
// mutex is a base::ProcessMutex: a child forked while the parent decodes finds it free).
#pragma once

#include <cstddef>

namespace mibz2::base::buffer_memory {

inline constexpr size_t kMinKept = size_t{256} << 10;  // from here on a mapping of its own; below, glibc's
inline constexpr size_t kMaxKept = size_t{8} << 20;    // larger ones are rare (long runs): freed
inline constexpr size_t kKeptBytes = size_t{16} << 20;  // within the memory rule's fixed 64 MiB
inline constexpr size_t kGranule = size_t{64} << 10;   // large sizes round up to this

// False under AddressSanitizer: there every buffer is glibc's (the sanitizer's) allocation of
// exactly the size asked, freed at once, so that a write past a buffer or a use after its release
// is still seen (a kept, rounded-up or mapped buffer would hide both).
bool keeps_buffers();

// At least `bytes` bytes (rounded up when large; the size given in *capacity); throws
// std::bad_alloc when there is no memory.
void* allocate(size_t bytes, size_t* capacity);
// Gives back what allocate() returned, with the capacity it said; null is ignored.
void release(void* p, size_t capacity);
// Makes `p` (from allocate() or reallocate(), with its capacity, or null) at least `bytes` bytes,
// keeping its first `used` bytes; the new capacity in *new_capacity. A buffer larger than any kept
// one is grown by mremap, which moves a mapping's pages instead of copying them: the old and the
// new buffer are never resident together. Growing a block that expands to 46 MB by
// half again each time, allocate-copy-free held 37 MB and 56 MB at once (an index build's decode:
// 93 MB a thread, against the memory rule's 64 MiB). Throws std::bad_alloc with `p` unchanged.
void* reallocate(void* p, size_t capacity, size_t used, size_t bytes, size_t* new_capacity);

// Bytes kept for reuse now (for tests and accounting).
size_t kept_bytes();

}  // namespace mibz2::base::buffer_memory
