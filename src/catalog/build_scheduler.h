// Which index builds run, and when one steps aside for another: how the Catalog shares the
// decoders between files. A tiny file can expand 900000:1 (a 5 KB file of 100 streams of zeros is
// 4.5 GB, seconds of every decoder), so no build may hold up a file someone waits for, and small
// files must not queue behind a large or expanding one.
//
// Two classes of build: urgent (someone asked for the file: a stat, an open, a lookup; their jobs
// go at demand priority, ahead of every background job) and background (the tree walk's). At most
// `slots` builds are under way at once, and at most `background` of them background ones, so that
// urgent files always find slots free. A free slot goes, in this order, to the newest urgent file
// waiting, the urgent build parked longest, the newest background file waiting, the background
// build parked longest (newest request first, as files were always served).
//
// A build that has had its quantum of decoder time in its turn steps aside when a file that has
// not had a turn yet waits for a slot it could take (an urgent build only for an urgent file): it
// yields its slot at once, takes no new jobs, and once its last job ends it is parked, its
// progress kept and its source closed, until a slot is free for it again. So a new file waits for
// a slot at most about one quantum, never for another file's whole build; and a large file is not
// switched out for another large one (no rotation among parked builds: they end one by one).
//
// Pure bookkeeping under one leaf lock: the Catalog asks and acts (opens, starts, parks) with no
// lock of its own held.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace mibz2::catalog {

class CatalogFile;

// What the scheduler keeps of one build under way (the Catalog's builds are these).
struct BuildTurn {
  explicit BuildTurn(std::shared_ptr<CatalogFile> f) : file(std::move(f)) {}
  const std::shared_ptr<CatalogFile> file;
  // Decoder time its jobs took in this turn, in ns (each job adds its own; the turn resets it).
  std::atomic<int64_t> served_ns{0};

 private:
  friend class BuildScheduler;
  // --- guarded by the scheduler's mutex ---
  bool active_ = false;  // holds a slot
  bool urgent_ = false;  // its class
};

class BuildScheduler {
 public:
  // `background` <= `slots`, both at least 1.
  BuildScheduler(unsigned slots, unsigned background, std::chrono::nanoseconds quantum);

  // A file waits for its build to start, newest request first; `urgent` moves one already waiting
  // in the background to the urgent files (and an urgent one to their newest end). False once
  // stopped: the caller settles it.
  bool queue(const std::shared_ptr<CatalogFile>& file, bool urgent);
  // Someone asked for the file now: a parked background build of it becomes urgent.
  void promote(const std::shared_ptr<CatalogFile>& file);

  // The next build to start or resume, with its slot taken for it.
  struct Start {
    std::shared_ptr<CatalogFile> file;  // a file to start building (then started() or give_back()),
    std::shared_ptr<BuildTurn> parked;  // or a parked build to resume (its turn has begun)
    bool urgent = false;
  };
  // Nothing when no slot is free for what waits, or nothing waits, or stopped.
  std::optional<Start> next();
  // The build of a file next() handed out has begun (before its first job): it holds the slot.
  void started(BuildTurn& turn, bool urgent);
  // It could not begin (settled meanwhile, unreadable): the slot next() took for it is free again.
  void give_back(bool urgent);

  enum class Verdict {
    kGoOn,       // nothing changes
    kYield,      // it gave its slot up: it must claim no new job, and park() once the last ends
    kSlotFreed,  // it became urgent and so left a background slot
  };
  // After each job of a build; `urgent`: whether someone asked for its file by now. Unless kGoOn,
  // another build may start now (next()).
  Verdict job_done(BuildTurn& turn, bool urgent);
  // A build that yielded has no job left: it waits for a slot again (`urgent`: someone asked for
  // its file). False once stopped (the caller's shutdown ends it).
  bool park(const std::shared_ptr<BuildTurn>& turn, bool urgent);
  // A build ended: its slot, if it held one, is free.
  void ended(BuildTurn& turn);

  // No build starts from now on. Returns the files that were waiting, for the caller to settle;
  // parked builds are forgotten (the caller cancels every build it has).
  std::vector<std::shared_ptr<CatalogFile>> stop();
  // Files waiting for their build to start.
  size_t waiting() const;
  // The decoder time a build has in its turn before it steps aside (tests set it short).
  void set_quantum(std::chrono::nanoseconds quantum);

 private:
  enum : int { kUrgent = 0, kBackground = 1 };
  void release_locked(BuildTurn& turn);

  const unsigned slots_;
  const unsigned background_slots_;
  mutable std::mutex mu_;  // a leaf lock: nothing is taken under it
  // --- guarded by mu_ ---
  int64_t quantum_ns_;
  std::deque<std::shared_ptr<CatalogFile>> waiting_[2];  // by class; back = newest request
  std::deque<std::shared_ptr<BuildTurn>> parked_[2];     // by class; front = parked longest
  unsigned active_ = 0;                                   // slots held
  unsigned background_active_ = 0;                        // of them, by background builds
  bool stopped_ = false;
};

}  // namespace mibz2::catalog
