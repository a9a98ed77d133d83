// Machine places: the turns on the CPUs that one user's mibz2 processes share. A decoder pool runs
// no more jobs at once than its process has CPUs (decoder_pool.h), but four processes of -j 2 on
// two cores (four Dask workers, a mount and a `mibz2 cat`) each ran two decodes at once: eight on
// two cores, sharing the cores and pushing each other's 3.6 MB tables out of the caches, at 0.82
// to 0.88 of one process alone (measured on a 2-vCPU AMD EPYC with 1 MiB of L2 a core; 1.01 on a
// Xeon with 2 MiB and 260 MiB of L3). With machine places, a worker runs jobs only while it holds
// one of the places of the machine as well as one of its process's (decoder_pool.h says for how
// long), so that the processes together run about as many decodes at once as there are CPUs.
//
// The places are a System V semaphore, because the kernel keeps everything this needs: a count
// that is shared by name (the key), waited on with a timeout (semtimedop), handed to a waiter in
// the order they came, and given back when a process ends while holding places (SEM_UNDO), be it
// killed or crashed; so a dead process never keeps a place, and there is no file to map, truncate
// or clean up. One set per user and set of CPUs: the key is a hash of the user id and of the
// CPUs the process may run on (its affinity mask; taskset and cpusets make other sets), and the
// set holds one place more than those CPUs: a place given back is taken by a thread of another
// process that must first be scheduled, and with as many places as CPUs the CPU its giver left
// often stood idle meanwhile (four processes of -j 2 on two CPUs: idle 3 to 5% of the time with
// two places, 0 to 1% with three). One decode beside the CPUs' keeps them busy; the eight of
// four unshared processes pushed each other's tables out of the caches.
//
// Nothing from outside is believed without a check: the set must have been made by this user
// (its creator's uid, which no one can change, and its owner's) with no access for anyone else,
// and carry the marks this code writes (three semaphores: the places, a magic and a version,
// written at once by the first process, atomically: whichever gets there first initialises it,
// no other can). A set that fails them turns sharing off for the process, with a warning. Nothing
// ever depends on the places for correct bytes, only for speed.
//
// Off unless MIBZ2_SHARE_CPUS=1 (in the environment of every process that is to share): where the
// caches hold every process's tables, sharing costs more than it saves. Four processes of -j 2
// on two CPUs of a Xeon (2 MiB of L2 a core, 260 MiB of L3) ran at 0.98 of one process unshared
// and at 0.92 shared, with 2 to 5% more CPU time (scripts/bench-threads); on the EPYC above, a
// first version of the places (one lock file a place, given back after every job) took the
// same from 0.81 to 0.95.
//
// A wait is bounded: a process stopped with ^Z while it holds places holds them until it goes on,
// and no one else's decode may wait for that. A job that waits `wait` for a place runs without
// one (as without sharing), and the process stops waiting (it only tries) until a try succeeds
// again: its decodes then share the CPUs as they did before places, no worse.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <string>

namespace mibz2::engine {

class MachinePlaces {
 public:
  struct Settings {
    key_t key = 0;         // the semaphore set's key (not IPC_PRIVATE)
    unsigned places = 1;   // how many, when this process makes the set (1 to 32767)
    std::chrono::milliseconds wait{1000};  // the longest a job waits for a place
  };

  // The process's own, shared by every pool in it, when MIBZ2_SHARE_CPUS=1 asks for them (else
  // null): the user's places for the CPUs this process may run on; every turn unheld when the set
  // fails its checks. Made at the first call, never destroyed.
  static MachinePlaces* for_this_process();
  // The key of this user's set for these CPUs (a hash; the same in every build).
  static key_t key_for(uid_t uid, const void* cpu_mask, size_t mask_bytes);

  explicit MachinePlaces(const Settings& settings);
  MachinePlaces(const MachinePlaces&) = delete;
  MachinePlaces& operator=(const MachinePlaces&) = delete;

  // A place held, given back when the turn goes (or by give_back). An unheld turn (no place:
  // sharing off, or the wait ran out) gives back nothing.
  class Turn {
   public:
    Turn() = default;
    Turn(Turn&& other) noexcept : owner_(other.owner_) { other.owner_ = nullptr; }
    Turn& operator=(Turn&& other) noexcept {
      if (this != &other) {
        give_back();
        owner_ = other.owner_;
        other.owner_ = nullptr;
      }
      return *this;
    }
    ~Turn() { give_back(); }
    bool held() const { return owner_ != nullptr; }
    // Gives the place back now (nothing when none is held).
    void give_back();

   private:
    friend class MachinePlaces;
    explicit Turn(MachinePlaces* owner) : owner_(owner) {}
    MachinePlaces* owner_ = nullptr;
  };

  // Waits for a free place, at most the settings' `wait` (not at all after a wait ran out, until
  // a place is free again: see above).
  Turn take();
  bool sharing() const { return id_.load(std::memory_order_relaxed) >= 0; }
  // Why not, when the checks turned sharing off (empty otherwise).
  const std::string& why_not() const { return why_not_; }
  // Whether the last wait ran out, so that takes only try.
  bool waits_ran_out() const { return only_try_.load(std::memory_order_relaxed); }

 private:
  void give_back();
  // The set went away while in use (ipcrm): no more sharing, said once.
  void set_removed();

  std::atomic<int> id_{-1};            // the semaphore set; -1: not sharing
  std::chrono::milliseconds wait_;     // set once
  std::atomic<bool> only_try_{false};  // a wait ran out and no try has succeeded since
  std::string why_not_;                // set once, before any take
};

}  // namespace mibz2::engine
