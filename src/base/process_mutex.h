// A mutex for state that the whole process shares (the block allocator's free list, the log sink),
// kept usable across fork(). fork() copies only the thread that calls it: a mutex that another
// thread held at that moment stays held in the child for ever, and the child's first thread that
// wants it waits for ever. That is what a child forked while the parent decodes met (as
// multiprocessing's and Dask's fork start method fork, then make an engine of their own and read):
// its decoder threads waited on the allocator's free list. So the thread that forks takes every
// ProcessMutex just before the fork (pthread_atfork) and lets them go just after it, in the parent
// and in the child, as glibc does for malloc's arenas: the child finds them free, and what they
// guard whole (never half-updated by a thread that does not exist in it).
//
// The rules that keep the fork itself from waiting for ever: a ProcessMutex is a leaf (nothing else
// is locked while one is held, another ProcessMutex included) and is held briefly, never across a
// wait for another thread. Made once and never destroyed (the fork handlers keep its address):
// `static ProcessMutex& mu = *new ProcessMutex;`.
#pragma once

#include <atomic>
#include <mutex>

namespace mibz2::base {

class ProcessMutex {
 public:
  ProcessMutex();
  ~ProcessMutex() = default;  // never run: see above
  ProcessMutex(const ProcessMutex&) = delete;
  ProcessMutex& operator=(const ProcessMutex&) = delete;

  void lock() { mu_.lock(); }
  void unlock() { mu_.unlock(); }
  bool try_lock() { return mu_.try_lock(); }

 private:
  friend struct ForkHandlers;
  std::mutex mu_;
  ProcessMutex* next_ = nullptr;  // the one before it in the list of them all (set once)
};

}  // namespace mibz2::base
