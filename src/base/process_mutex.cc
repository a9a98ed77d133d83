#include "base/process_mutex.h"

#include <pthread.h>

namespace mibz2::base {
namespace {

// Every ProcessMutex ever made, newest first: a list that only grows, pushed without a lock (the
// list itself must not be one more lock a fork could catch held).
constinit std::atomic<ProcessMutex*> g_all{nullptr};

// The newest of those the forking thread took: one made by another thread during the fork is not
// among them, so it is not let go either.
thread_local ProcessMutex* t_taken = nullptr;

}  // namespace

struct ForkHandlers {
  // Leaves, so any order is safe: each holder lets go without waiting for anything.
  static void before() {
    t_taken = g_all.load(std::memory_order_acquire);
    for (ProcessMutex* m = t_taken; m; m = m->next_) m->mu_.lock();
  }
  // In the parent and in the child alike (in the child, the thread that forked holds them).
  static void after() {
    for (ProcessMutex* m = t_taken; m; m = m->next_) m->mu_.unlock();
    t_taken = nullptr;
  }
};

namespace {

// Registered when the program (or the Python module) is loaded, before any thread of ours runs.
[[maybe_unused]] const int g_registered = pthread_atfork(ForkHandlers::before, ForkHandlers::after,
                                                         ForkHandlers::after);

}  // namespace

ProcessMutex::ProcessMutex() {
  ProcessMutex* head = g_all.load(std::memory_order_relaxed);
  do next_ = head;
  while (!g_all.compare_exchange_weak(head, this, std::memory_order_release, std::memory_order_relaxed));
}

}  // namespace mibz2::base
