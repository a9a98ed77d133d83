// The decoder pool: N worker threads shared by every open file, each with its own BlockDecoder
// and buffers. Jobs come in three priorities, served strictly in that order: demand (a reader is
// waiting), read-ahead (a sequential reader will want it soon), background (index builds).
//
// One mutex guards the three FIFO queues; an idle worker waits on a condition variable of its own
// with the mutex released, so each waits independently and a push wakes exactly one (no receiver
// convoy: no worker ever sleeps while holding the queue). A job runs with no lock held.
//
// Idle workers are woken last in, first out: the one woken is the one that went idle last, whose
// stack and caches are warm and which the scheduler last ran on a CPU that was free. A shared
// condition variable wakes its waiters about in the order they came, so every worker of an
// oversubscribed pool took jobs in turn: mibz2 cat -j 32 on 2 CPUs, jobs spread over 32 threads
// the scheduler kept placing anew, left the CPUs idle a tenth of the time and ran at 0.84 of -j 2
// (4% more CPU time, 19% more wall time). Nor is a worker woken unless a job may start for it
// once the running and the already woken workers took theirs (a free place, and read-ahead's
// limit below): a woken worker can wait a millisecond for a CPU, and counted as free meanwhile,
// its place drew in one idle worker after another; and one woken for read-ahead it may not run
// only waits again.
//
// No more jobs run at once than the process has CPUs (`running_limit`), however many workers it
// was given: a decode is all CPU and cache (its inverse-BWT table is 3.6 MB), and more decodes at
// once than cores only share the cores and push each other's tables out of the cache (mibz2 cat
// -j 32 on 2 cores ran at 0.8 of -j 2). Workers beyond the limit wait for a turn, and are not
// woken when none is free: a push notifies only when a job can start, and a worker that finishes
// a job takes the next itself, so an oversubscribed pool costs no context switch per job.
//
// Processes share the CPUs too (machine_places.h): given the machine's places, a worker runs jobs
// only while it holds one of them, taken with no lock held, kept from job to job for at most 20 ms
// (kPlaceSlice says why) and given back when it goes idle, so that one user's processes together
// run about as many decodes at once as there are CPUs.
//
// Read-ahead never takes the last running place (with more than one): a decode cannot be
// interrupted, so a reader whose block is wanted now would otherwise wait behind a block nobody
// has asked for yet. The place kept back takes demand and background jobs; a sequential reader
// that catches up with its read-ahead asks for its next block at demand priority, so it is busy
// for it too.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "base/byte_buffer.h"
#include "bz2/block_decoder.h"
#include "engine/machine_places.h"

namespace mibz2::engine {

enum class Priority : uint8_t { kDemand = 0, kReadAhead = 1, kBackground = 2 };

// The one place where "no thread count given" becomes a number, for the pool, the engine and the
// programs' help texts: the CPUs this process may run on (its affinity mask, as nproc(1) counts
// them; taskset and container cpusets shrink it), at least 1 and at most kMaxDecoderThreads.
inline constexpr unsigned kMaxDecoderThreads = 1024;
unsigned default_decoder_threads();
// The CPUs this process may run on (its affinity mask), at least 1.
unsigned available_cpus();
// How many jobs a pool of `threads` workers (0 = default_decoder_threads()) runs at once here: the
// workers, or the CPUs when there are fewer. What decodes at once is what memory is sized by.
unsigned running_limit_for(unsigned threads);

// What a job gets to work with: a decoder and scratch buffers, its own for the job's time. There is
// one for each place that runs at once, not one per worker, so that workers beyond the CPUs add no
// memory (a decoder's tables are megabytes); the one used last is handed out first, warm.
struct WorkerContext {
  bz2::BlockDecoder decoder;
  base::ByteBuffer compressed;  // the bytes of a block read from the source file
  unsigned worker_id = 0;       // which of the contexts (0 to running_limit() - 1)
};

class DecoderPool {
 public:
  using Job = std::function<void(WorkerContext&)>;

  // `threads` workers (0 = default_decoder_threads()), of which at most `cpus` run jobs at once
  // (0 = available_cpus()); when `machine_places` is given (not owned: it outlives the pool), a
  // worker runs jobs only while it holds one of them.
  explicit DecoderPool(unsigned threads, unsigned cpus = 0, MachinePlaces* machine_places = nullptr);
  ~DecoderPool();                          // finishes queued jobs, then joins
  DecoderPool(const DecoderPool&) = delete;
  DecoderPool& operator=(const DecoderPool&) = delete;

  void submit(Priority priority, Job job);
  // How many jobs run at once: the workers, or the CPUs when there are fewer.
  unsigned running_limit() const { return running_limit_; }
  // How many of them may be read-ahead: all but one (1 when only one runs).
  unsigned readahead_workers() const { return readahead_limit_; }
  unsigned threads() const { return static_cast<unsigned>(workers_.size()); }
  // Jobs waiting at a priority or more urgent (for background work deciding whether to yield).
  size_t queued_at_or_above(Priority priority) const;

 private:
  void run(unsigned id);
  // The queue a free worker takes its next job from (0 demand, 1 read-ahead, 2 background), or
  // -1 when none may run now. Requires mu_.
  int next_queue() const;
  // The same rule on given counts: jobs queued at each priority, jobs and read-ahead jobs running.
  int queue_for(const size_t queued[3], unsigned running, unsigned readahead_running) const;
  // Whether a job may start for one more worker once `ahead` others (woken ones, one finishing a
  // job) took theirs, by next_queue()'s rule. Requires mu_.
  bool job_for_one_more(unsigned ahead) const;

  struct Waiter;
  // Wakes the worker that went idle last, if any is idle and a job may start for it once `ahead`
  // other workers took theirs (job_for_one_more). Requires mu_; the caller notifies the returned
  // waiter (nullptr: none) after releasing it.
  Waiter* pop_idle(unsigned ahead);
  // Wakes every idle worker (stopping). Requires mu_ not held.
  void wake_all_idle();

  mutable std::mutex mu_;  // a leaf lock: nothing else is taken under it, and no job runs under it
  struct Waiter {
    std::condition_variable cv;  // its worker waits here, with mu_ released
    bool woken = false;          // guarded by mu_: set by whoever pops it from idle_
  };
  std::vector<std::unique_ptr<Waiter>> waiters_;  // one per worker, made before the workers
  std::vector<unsigned> idle_;              // guarded by mu_: waiting workers, the last to wait on top
  unsigned waking_ = 0;                     // guarded by mu_: popped from idle_, not yet back at the queues
  std::deque<Job> queues_[3];               // guarded by mu_
  bool stopping_ = false;                   // guarded by mu_
  unsigned running_ = 0;                    // guarded by mu_: jobs being run
  unsigned readahead_running_ = 0;          // guarded by mu_: read-ahead jobs being run
  unsigned running_limit_ = 1;              // set once, before the workers start
  unsigned readahead_limit_ = 1;            // set once, before the workers start
  MachinePlaces* machine_places_ = nullptr; // set once, before the workers start; null: not shared
  std::vector<std::unique_ptr<WorkerContext>> contexts_;  // running_limit_ of them, made before the workers
  std::vector<WorkerContext*> free_contexts_;             // guarded by mu_: those no job holds, last used on top
  std::vector<std::thread> workers_;
};

}  // namespace mibz2::engine
