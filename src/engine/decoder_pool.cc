#include "engine/decoder_pool.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include <spdlog/spdlog.h>

namespace mibz2::engine {

// How long a worker keeps its place of the machine while it has jobs, before it gives it back
// and waits in line again (machine_places.h): given back after every job, the places changed
// hands every block (2.4 ms of real JSON here), and each time the CPU the giver left stood idle
// until the taker, in another process, was scheduled: four processes of -j 2 on two CPUs left
// them idle 16% of the time. Held 20 ms, 0 to 1%; and a process waits in line no longer than a
// few of these.
constexpr std::chrono::milliseconds kPlaceSlice{20};

unsigned available_cpus() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  const int n = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 0;
  const unsigned count = n > 0 ? static_cast<unsigned>(n) : std::thread::hardware_concurrency();
  return std::max(count, 1u);
}

unsigned default_decoder_threads() { return std::clamp(available_cpus(), 1u, kMaxDecoderThreads); }

unsigned running_limit_for(unsigned threads) {
  return std::min(threads ? threads : default_decoder_threads(), available_cpus());
}

DecoderPool::DecoderPool(unsigned threads, unsigned cpus, MachinePlaces* machine_places)
    : machine_places_(machine_places) {
  if (threads == 0) threads = default_decoder_threads();
  running_limit_ = cpus ? std::min(threads, cpus) : running_limit_for(threads);
  readahead_limit_ = running_limit_ > 1 ? running_limit_ - 1 : 1;
  for (unsigned i = 0; i < running_limit_; ++i) {
    contexts_.push_back(std::make_unique<WorkerContext>());
    contexts_.back()->worker_id = running_limit_ - 1 - i;
    free_contexts_.push_back(contexts_.back().get());
  }
  // Workers start with signals blocked, so SIGINT/SIGTERM always reach the thread that handles
  // them (the FUSE loop), never a worker in the middle of a decode. Not the signals of a fault:
  // one raised while blocked kills the process outright, and a worker's SIGBUS in a mapped index
  // cut short is for the guard to catch (io/mapped_file.h).
  for (unsigned i = 0; i < threads; ++i) waiters_.push_back(std::make_unique<Waiter>());
  idle_.reserve(threads);
  sigset_t all, old;
  sigfillset(&all);
  for (int fault : {SIGBUS, SIGSEGV, SIGFPE, SIGILL}) sigdelset(&all, fault);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  for (unsigned i = 0; i < threads; ++i) workers_.emplace_back([this, i] { run(i); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

DecoderPool::~DecoderPool() {
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
  }
  wake_all_idle();
  for (auto& t : workers_) t.join();
}

DecoderPool::Waiter* DecoderPool::pop_idle(unsigned ahead) {
  if (idle_.empty() || !job_for_one_more(ahead)) return nullptr;
  Waiter* w = waiters_[idle_.back()].get();
  idle_.pop_back();
  w->woken = true;
  ++waking_;
  return w;
}

void DecoderPool::wake_all_idle() {
  std::vector<Waiter*> woken;
  {
    std::lock_guard lk(mu_);
    for (unsigned id : idle_) {
      waiters_[id]->woken = true;
      woken.push_back(waiters_[id].get());
    }
    waking_ += static_cast<unsigned>(idle_.size());
    idle_.clear();
  }
  for (Waiter* w : woken) w->cv.notify_one();
}

void DecoderPool::submit(Priority priority, Job job) {
  Waiter* w;
  {
    std::lock_guard lk(mu_);
    queues_[static_cast<int>(priority)].push_back(std::move(job));
    // None woken when the workers already woken take every job that may start: waking another
    // would only send it back to sleep.
    w = pop_idle(waking_);
  }
  if (w) w->cv.notify_one();
}

size_t DecoderPool::queued_at_or_above(Priority priority) const {
  std::lock_guard lk(mu_);
  size_t n = 0;
  for (int p = 0; p <= static_cast<int>(priority); ++p) n += queues_[p].size();
  return n;
}

int DecoderPool::queue_for(const size_t queued[3], unsigned running, unsigned readahead_running) const {
  if (running >= running_limit_) return -1;
  if (queued[0]) return 0;
  if (queued[1] && readahead_running < readahead_limit_) return 1;
  if (queued[2]) return 2;
  return -1;
}

int DecoderPool::next_queue() const {
  const size_t queued[3] = {queues_[0].size(), queues_[1].size(), queues_[2].size()};
  return queue_for(queued, running_, readahead_running_);
}

bool DecoderPool::job_for_one_more(unsigned ahead) const {
  size_t queued[3] = {queues_[0].size(), queues_[1].size(), queues_[2].size()};
  unsigned running = running_, readahead_running = readahead_running_;
  for (unsigned k = 0;; ++k) {
    const int q = queue_for(queued, running, readahead_running);
    if (q < 0) return false;
    if (k == ahead) return true;
    --queued[q];
    ++running;
    if (q == 1) ++readahead_running;
  }
}

void DecoderPool::run(unsigned id) {
  char name[16];
  std::snprintf(name, sizeof name, "mibz2-dec-%u", id);
  pthread_setname_np(pthread_self(), name);
  MachinePlaces::Turn turn;  // this worker's place of the machine, held from job to job
  std::chrono::steady_clock::time_point turn_since;
  for (;;) {
    Job job;
    int p;
    WorkerContext* ctx;
    {
      std::unique_lock lk(mu_);
      // Stopping ends a worker only once every queue is empty (read-ahead held back included).
      Waiter& me = *waiters_[id];
      while ((p = next_queue()) < 0) {
        if (turn.held()) {  // an idle worker holds no place of the machine
          lk.unlock();
          turn.give_back();
          lk.lock();
          continue;
        }
        if (stopping_ && queues_[0].empty() && queues_[1].empty() && queues_[2].empty()) {
          lk.unlock();
          wake_all_idle();  // the workers that waited for a place may go too
          return;
        }
        // On top of the idle stack; whoever pops it sets `woken` (a wake-up without it is
        // spurious). A worker woken for a job another took first goes back on top.
        me.woken = false;
        idle_.push_back(id);
        me.cv.wait(lk, [&me] { return me.woken; });
        --waking_;
      }
      job = std::move(queues_[p].front());
      queues_[p].pop_front();
      ++running_;
      if (p == 1) ++readahead_running_;
      ctx = free_contexts_.back();  // there is one: no more jobs run than there are contexts
      free_contexts_.pop_back();
    }
    if (machine_places_ && (!turn.held() || std::chrono::steady_clock::now() - turn_since > kPlaceSlice)) {
      turn.give_back();  // first, so that a process waiting for it gets it before this one again
      turn = machine_places_->take();
      turn_since = std::chrono::steady_clock::now();
    }
    // Jobs handle their own failures (a reader's decode answers EIO, a build ends failed); this is
    // the last guard, so that nothing ever ends a worker, and with it the daemon.
    try {
      job(*ctx);
    } catch (const std::exception& e) {
      spdlog::error("decoder {}: a job failed: {}", id, e.what());
    }
    job = nullptr;  // what the job holds goes now, not when the next one comes
    // Give back memory after a huge block rather than hold it per context.
    if (ctx->compressed.capacity() > (16u << 20)) base::ByteBuffer().swap(ctx->compressed);
    Waiter* w = nullptr;
    {
      std::lock_guard lk(mu_);
      free_contexts_.push_back(ctx);
      --running_;
      if (p == 1) --readahead_running_;
      // This worker takes the next job itself; another is woken only for a job that may start
      // beside it and beside those already woken (held-back read-ahead once this one's next job
      // is demand, say). Waking one whenever read-ahead was held back, as before, woke the other
      // worker of a pool of two after every read-ahead job, only to send it back to sleep: read-
      // ahead keeps the second place for demand.
      w = pop_idle(waking_ + 1);
    }
    if (w) w->cv.notify_one();
  }
}

}  // namespace mibz2::engine
