#include "base/buffer_memory.h"

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

// buffer_memory.h: nothing kept under AddressSanitizer.
constexpr bool kKeeps = !base::kAddressSanitizer;

bool keepable(size_t capacity) { return kKeeps && capacity >= kMinKept && capacity <= kMaxKept; }

size_t rounded(size_t bytes) { return kKeeps && bytes >= kMinKept ? (bytes + kGranule - 1) / kGranule * kGranule : bytes; }

}  // namespace

bool keeps_buffers() { return kKeeps; }

void* allocate(size_t bytes, size_t* capacity) {
  bytes = rounded(bytes);
  if (keepable(bytes)) {
    FreeList& fl = free_list();
    std::lock_guard lk(fl.mu);
    // The smallest kept buffer that fits, if it is not more than half as large again; of equal
    // ones the newest, whose bytes are likeliest still in the caches.
    auto best = fl.kept.rend();
    for (auto it = fl.kept.rbegin(); it != fl.kept.rend(); ++it)
      if (it->capacity >= bytes && it->capacity - bytes <= bytes / 2 &&
          (best == fl.kept.rend() || it->capacity < best->capacity))
        best = it;
    if (best != fl.kept.rend()) {
      void* p = best->p;
      *capacity = best->capacity;
      fl.bytes -= best->capacity;
      fl.kept.erase(std::next(best).base());
      return p;
    }
  }
  void* p = std::malloc(bytes ? bytes : 1);
  if (!p) throw std::bad_alloc();
  *capacity = bytes;
  return p;
}

void release(void* p, size_t capacity) {
  if (!p) return;
  if (!keepable(capacity)) {
    std::free(p);
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
  for (size_t i = 0; i < n_dropped; ++i) std::free(dropped[i].p);
}

void* reallocate(void* p, size_t capacity, size_t used, size_t bytes, size_t* new_capacity) {
  if (!p) return allocate(bytes, new_capacity);
  bytes = rounded(bytes);
  if (!keepable(bytes)) {
    void* q = std::realloc(p, bytes ? bytes : 1);
    if (!q) throw std::bad_alloc();
    *new_capacity = bytes;
    return q;
  }
  // A size kept buffers serve: one of them, if one fits (its pages already resident).
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
