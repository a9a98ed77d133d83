#include "io/fetch_pool.h"

#include <algorithm>

namespace mibz2::io {

FetchPool::FetchPool(size_t threads) : threads_(std::max<size_t>(threads, 1)) {}

FetchPool::~FetchPool() {
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
  }
  queued_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void FetchPool::submit(std::function<void()> job) {
  {
    std::lock_guard lk(mu_);
    jobs_.push_back(std::move(job));
    // A thread more while every thread is busy, up to the pool's size.
    if (workers_.size() < threads_ && idle_ < jobs_.size()) workers_.emplace_back([this] { work(); });
  }
  queued_.notify_one();
}

void FetchPool::work() {
  std::unique_lock lk(mu_);
  for (;;) {
    ++idle_;
    queued_.wait(lk, [this] { return stopping_ || !jobs_.empty(); });
    --idle_;
    if (jobs_.empty()) return;  // stopping, and every job ran
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    lk.unlock();
    job();  // a job catches what it throws (no exception leaves a thread)
    job = nullptr;  // what it holds goes before the lock is taken again
    lk.lock();
  }
}

}  // namespace mibz2::io
