#include "engine/decoder_pool.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include <spdlog/spdlog.h>

namespace mibz2::engine {

unsigned default_decoder_threads() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  const int n = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 0;
  const unsigned count = n > 0 ? static_cast<unsigned>(n) : std::thread::hardware_concurrency();
  return std::clamp(count, 1u, kMaxDecoderThreads);
}

DecoderPool::DecoderPool(unsigned threads) {
  if (threads == 0) threads = default_decoder_threads();
  readahead_limit_ = threads > 1 ? threads - 1 : 1;
  // Workers start with signals blocked, so SIGINT/SIGTERM always reach the thread that handles
  // them (the FUSE loop), never a worker in the middle of a decode.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  for (unsigned i = 0; i < threads; ++i) workers_.emplace_back([this, i] { run(i); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

DecoderPool::~DecoderPool() {
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
  }
  work_available_.notify_all();
  for (auto& t : workers_) t.join();
}

void DecoderPool::submit(Priority priority, Job job) {
  {
    std::lock_guard lk(mu_);
    queues_[static_cast<int>(priority)].push_back(std::move(job));
  }
  work_available_.notify_one();
}

size_t DecoderPool::queued_at_or_above(Priority priority) const {
  std::lock_guard lk(mu_);
  size_t n = 0;
  for (int p = 0; p <= static_cast<int>(priority); ++p) n += queues_[p].size();
  return n;
}

int DecoderPool::next_queue() const {
  if (!queues_[0].empty()) return 0;
  if (!queues_[1].empty() && readahead_running_ < readahead_limit_) return 1;
  if (!queues_[2].empty()) return 2;
  return -1;
}

void DecoderPool::run(unsigned id) {
  char name[16];
  std::snprintf(name, sizeof name, "mibz2-dec-%u", id);
  pthread_setname_np(pthread_self(), name);
  WorkerContext ctx;
  ctx.worker_id = id;
  for (;;) {
    Job job;
    int p;
    {
      std::unique_lock lk(mu_);
      // Stopping ends a worker only once every queue is empty (read-ahead held back included).
      work_available_.wait(lk, [this] {
        return next_queue() >= 0 || (stopping_ && queues_[0].empty() && queues_[1].empty() && queues_[2].empty());
      });
      p = next_queue();
      if (p < 0) return;  // stopping and drained
      job = std::move(queues_[p].front());
      queues_[p].pop_front();
      if (p == 1) ++readahead_running_;
    }
    // Jobs handle their own failures (a reader's decode answers EIO, a build ends failed); this is
    // the last guard, so that nothing ever ends a worker, and with it the daemon.
    try {
      job(ctx);
    } catch (const std::exception& e) {
      spdlog::error("decoder {}: a job failed: {}", id, e.what());
    }
    job = nullptr;  // what the job holds goes now, not when the next one comes
    if (p == 1) {
      bool more;
      {
        std::lock_guard lk(mu_);
        --readahead_running_;
        more = !queues_[1].empty();
      }
      if (more) work_available_.notify_one();  // read-ahead held back may run now
    }
    // Give back memory after a huge block rather than hold it per worker.
    if (ctx.compressed.capacity() > (16u << 20)) base::ByteBuffer().swap(ctx.compressed);
  }
}

}  // namespace mibz2::engine
