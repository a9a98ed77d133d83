#include "base/buffer_memory.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <iterator>
#include <mutex>
#include <new>

#include "base/process_mutex.h"
#include "base/sanitizers.h"

namespace mibz2::base::buffer_memory {
namespace {

struct Kept {
  void* p;
  size_t capacity;
};

struct FreeList {
  ProcessMutex mu;  // safe across fork(): a child forked while decoders allocate takes it too
  std::deque<Kept> kept;  // oldest first
  size_t bytes = 0;
};

// Never destroyed: buffers may be freed by static destructors of other files, after this one's.
FreeList& free_list() {
  static FreeList* const list = new FreeList;
  return *list;
}
// Made when the program (or the Python module) is loaded, before any of its threads runs: a
// function's static is initialised under a once-flag, which a fork while another thread held it
// would leave held in the child for ever. (Still a function's static, so that a static
// initialiser of another file that allocates first finds it made.)
[[maybe_unused]] FreeList& g_made_at_load = free_list();

// buffer_memory.h: no mapping of our own, nothing kept, nothing rounded under AddressSanitizer.
constexpr bool kMaps = !base::kAddressSanitizer;

// Whether a large buffer grows by mremap. Not under ThreadSanitizer, which follows mmap and munmap
// but not mremap (GCC 12's libtsan intercepts no mremap): pages moved to a new address keep the
// shadow state of what lived there before, and it reported races between two decoder threads'
// writes to one output buffer that never met (a block expanding to 135 MB, grown step by step).
// There the buffer grows as a kept one does: a new mapping, the bytes copied, the old one unmapped.
constexpr bool kMovesMappings = !base::kThreadSanitizer;

// Whether a buffer of this capacity is a mapping of its own (else it is glibc's): the capacity
// alone says it, since every large size is rounded to whole granules and mapped.
bool mapped(size_t capacity) { return kMaps && capacity >= kMinKept; }

bool keepable(size_t capacity) { return mapped(capacity) && capacity <= kMaxKept; }

size_t rounded(size_t bytes) { return kMaps && bytes >= kMinKept ? (bytes + kGranule - 1) / kGranule * kGranule : bytes; }

void* map(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return p;
}

// What allocate() returns for a size already rounded: a kept buffer, a new mapping, or glibc's.
void* obtain(size_t bytes) {
  if (!mapped(bytes)) {
    void* p = std::malloc(bytes ? bytes : 1);
    if (!p) throw std::bad_alloc();
    return p;
  }
  return map(bytes);
}

// Gives a buffer back to the system (not to the free list).
void drop(void* p, size_t capacity) {
  if (mapped(capacity)) munmap(p, capacity);
  else std::free(p);
}

// The smallest kept buffer that fits `bytes` (rounded), if it is not more than half as large
// again; of equal ones the newest, whose bytes are likeliest still in the caches. Taken off the
// list; null if none.
void* take_kept(size_t bytes, size_t* capacity) {
  FreeList& fl = free_list();
  std::lock_guard lk(fl.mu);
  auto best = fl.kept.rend();
  for (auto it = fl.kept.rbegin(); it != fl.kept.rend(); ++it)
    if (it->capacity >= bytes && it->capacity - bytes <= bytes / 2 &&
        (best == fl.kept.rend() || it->capacity < best->capacity))
      best = it;
  if (best == fl.kept.rend()) return nullptr;
  void* p = best->p;
  *capacity = best->capacity;
  fl.bytes -= best->capacity;
  fl.kept.erase(std::next(best).base());
  return p;
}

}  // namespace

bool keeps_buffers() { return kMaps; }

void* allocate(size_t bytes, size_t* capacity) {
  bytes = rounded(bytes);
  if (keepable(bytes))
    if (void* p = take_kept(bytes, capacity)) return p;
  void* p = obtain(bytes);
  *capacity = bytes;
  return p;
}

void release(void* p, size_t capacity) {
  if (!p) return;
  if (!keepable(capacity)) {
    drop(p, capacity);
    return;
  }
  // The oldest kept buffers make room; they are unmapped after the lock is let go.
  Kept dropped[kKeptBytes / kMinKept];
  size_t n_dropped = 0;
  {
    FreeList& fl = free_list();
    std::lock_guard lk(fl.mu);
    while (!fl.kept.empty() && fl.bytes + capacity > kKeptBytes) {
      dropped[n_dropped++] = fl.kept.front();
      fl.bytes -= fl.kept.front().capacity;
      fl.kept.pop_front();
    }
    fl.kept.push_back({p, capacity});
    fl.bytes += capacity;
  }
  for (size_t i = 0; i < n_dropped; ++i) drop(dropped[i].p, dropped[i].capacity);
}

void* reallocate(void* p, size_t capacity, size_t used, size_t bytes, size_t* new_capacity) {
  if (!p) return allocate(bytes, new_capacity);
  bytes = rounded(bytes);
  if (!mapped(capacity) && !mapped(bytes)) {  // glibc's, small before and after
    void* q = std::realloc(p, bytes ? bytes : 1);
    if (!q) throw std::bad_alloc();
    *new_capacity = bytes;
    return q;
  }
  if (kMovesMappings && mapped(capacity) && mapped(bytes) && !keepable(bytes)) {
    // Larger than any kept buffer: the kernel moves the pages (or extends the mapping in place).
    void* q = mremap(p, capacity, bytes, MREMAP_MAYMOVE);
    if (q == MAP_FAILED) throw std::bad_alloc();
    *new_capacity = bytes;
    return q;
  }
  // Into a kept buffer if one fits (its pages already resident), else a new one; then copied.
  size_t cap = 0;
  void* q = allocate(bytes, &cap);
  if (used) std::memcpy(q, p, used);
  release(p, capacity);
  *new_capacity = cap;
  return q;
}

size_t kept_bytes() {
  FreeList& fl = free_list();
  std::lock_guard lk(fl.mu);
  return fl.bytes;
}

}  // namespace mibz2::base::buffer_memory
