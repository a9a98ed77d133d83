// The threads that fetch ahead of readers: each job is one blocking range request (a read-ahead
// piece, or a piece of a large read fetched beside the reader's own). Shared by every remote
// source of a process (the HTTP client owns one), so that the requests in flight are bounded for
// the process, not per file.
//
// Jobs run in the order they were given. A job must not wait for another job (it would wait for
// a thread that may be its own). The threads start with the first job; the destructor runs the
// jobs still queued (jobs of closed sources end at once: they are cancelled) and joins them.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace mibz2::io {

class FetchPool {
 public:
  explicit FetchPool(size_t threads);
  ~FetchPool();
  FetchPool(const FetchPool&) = delete;
  FetchPool& operator=(const FetchPool&) = delete;

  void submit(std::function<void()> job);
  size_t threads() const { return threads_; }

 private:
  void work();

  const size_t threads_;
  std::mutex mu_;                  // a leaf lock: guards the queue, never held while a job runs
  std::condition_variable queued_;  // a job was queued, or the pool stops
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  size_t idle_ = 0;  // threads waiting for a job
  std::vector<std::thread> workers_;  // started by the first submit
};

}  // namespace mibz2::io
