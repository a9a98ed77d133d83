// How a file's index is built: the Catalog's builds on the engine's decoder pool, from the queue to
// the stored index file, and the one-pass streams of mibz2 cat.
//
// Builds run several at once: each job is one IndexBuilder step (a scan or one block's decode), so
// a build never holds a worker for longer than a block; the driver keeps as many jobs queued as the
// builder has work ready (IndexBuilder::ready_work), never more than the pool's width, and no worker
// ever waits for build work. The jobs of the builds under way share the pool's queues in turn, so
// those builds share the workers job by job. Which builds are under way is the BuildScheduler's
// (build_scheduler.h; a tiny file can expand 900000:1, and no file may hold up another):
//  - a file someone asks for (stat, open, lookup: kNow) starts its build at once, whatever else is
//    building, and its jobs go at demand priority, ahead of every background job: it gets a worker
//    within about one block's decode (past kUrgentBuilds such files at once, a new one waits for a
//    slot at most about a quantum);
//  - files of the tree walk (kSoon) are built as many at once as there are workers, newest request
//    first; a build that has had its quantum (kBuildQuantum of decoder time) steps aside for a file
//    that has not had a turn yet: parked, its progress kept and its source closed, it resumes when
//    a slot is free (and ends, as for a source that changed, if the file is not the one it was).
// Reads go before background builds (demand and read-ahead jobs). Streams (stream(), stream_once())
// are builds of their own, at demand priority, outside the scheduler.
//
// A build that ends is finished here: one whose source changed while it was read is never stored
// nor served (built again when someone waits, else the file is stale); a built index is saved in
// the store and logged; then the Catalog settles the file (Outcomes). stop() cancels every build,
// parked ones too, and hands back the files that were still waiting, for the Catalog to settle.
//
// What builds hold: at most kUrgentBuilds + the pool's width are under way at once (a few more for
// a moment: one that yields gives its slot up while its last jobs end), each with its descriptor
// and a bounded window of candidates (IndexBuilder::candidates_held); a parked build keeps no
// descriptor, only its index so far. Decoded bytes are the workers' own (a block each), never a
// build's: builds take no more memory than one block a decoder thread, however many are under way.
//
// Locks (catalog.h's order): the driver's mutex, a build's, the scheduler's and a CatalogFile's are
// never held together; under a build's mutex its IndexBuilder's lock is taken (to see its ready
// work), and under that a stream's (BlockStream), never the reverse. None is held across I/O, a
// decode, a call into the engine's pool, or a call to Outcomes.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "catalog/build_scheduler.h"
#include "catalog/catalog_file.h"
#include "catalog/catalog_report.h"
#include "catalog/grown_file.h"
#include "catalog/source_access.h"
#include "engine/engine.h"
#include "index/block_stream.h"
#include "index/index_builder.h"
#include "index/index_store.h"
#include "io/source_bytes.h"

namespace mibz2::catalog {

class BuildDriver {
 public:
  // What becomes of a file when its build ends: the Catalog's part (it counts and settles the file;
  // each is called on the thread that finished the build, with no lock held).
  class Outcomes {
   public:
    // Built (and saved if it could be): counted, then the file is ready with `index`.
    virtual void built(const FileRef& file, std::shared_ptr<const index::BlockIndex> index, IndexOrigin origin) = 0;
    // The file is settled failed for `why`, nothing logged (the driver said what it had to).
    virtual void failed(const FileRef& file, base::Status why, IndexOrigin origin) = 0;
    // The file cannot be had now for a reason of the machine's (base::is_environment): logged, failed.
    virtual void failed_for_now(const FileRef& file, base::Status why, IndexOrigin origin) = 0;

   protected:
    ~Outcomes() = default;
  };

  // `engine`'s pool runs the builds, `store` keeps what they make, sources are reached through
  // `access`; all of them and `outcomes` must outlive the driver, whose owner waits (wait_idle)
  // before it goes.
  BuildDriver(engine::Engine& engine, index::IndexStore& store, const SourceAccess& access, Outcomes& outcomes);
  BuildDriver(const BuildDriver&) = delete;
  BuildDriver& operator=(const BuildDriver&) = delete;

  // The file (kQueued) waits for its build (`now`: someone asked for it: urgent), which starts
  // when the scheduler has a slot for it. Once stopped it fails at once ("unmounting").
  void queue(const FileRef& file, bool now);
  // Someone asked for a file being built now: its next jobs go at demand priority, and a parked
  // build of it waits among the urgent.
  void promote(const FileRef& file);

  // Decodes the whole file (kBuilding: CatalogFile::start_stream) in one parallel pass, handing each
  // block to `sink` in file order on the calling thread; the index built on the way is stored and
  // the file settled as for any build. A sink that returns false stops the pass: nothing is
  // stored. Returns false when it stopped or the file could not be decoded at all.
  bool stream(const FileRef& file, const std::function<bool(const index::BlockStream::Block&)>& sink);
  // The same pass over a source read once (a pipe): nothing stored, no file entry kept. Returns
  // the build's result (a sink that stopped it: "cancelled").
  index::BuildResult stream_once(const io::SourceBytes& source,
                                 const std::function<bool(const index::BlockStream::Block&)>& sink);

  // No build starts from now on; every build (parked ones too) is cancelled and ends on its own.
  // Returns the files that were waiting for their build to start, for the caller to settle (none
  // the second time).
  std::vector<FileRef> stop();
  // Until no build is left (the owner's destructor, after stop()).
  void wait_idle();
  // Files waiting for their build, and builds under way (for the logs).
  size_t pending() const;

  // What indexing did, for CatalogSummary.
  struct Activity {
    double seconds = 0;         // since indexing last became busy (0 when idle)
    uint64_t bytes_done = 0;    // compressed bytes of builds finished since then
    double build_seconds = 0;   // time during which at least one build ran, in all
    uint64_t blocks_decoded = 0;  // by the builds, finished or under way
  };
  Activity activity() const;

  // Test hooks (Catalog::hold_builds_while, set_build_quantum).
  void hold_builds_while(std::function<bool()> held) { hold_ = std::move(held); }
  void set_build_quantum(std::chrono::nanoseconds quantum) { sched_.set_quantum(quantum); }

 private:
  struct Build;
  // Starts and resumes builds while the scheduler has slots free for those waiting.
  void schedule();
  // `once`: the bytes of a source read once (stream_once), instead of opening the file's source.
  // `slot`: the scheduler's start of a queued file (it gives the slot back if the build cannot begin).
  std::shared_ptr<Build> start_build(const FileRef& file, std::unique_ptr<index::BlockStream> stream,
                                     const io::SourceBytes* once = nullptr,
                                     const BuildScheduler::Start* slot = nullptr);
  // A build that yielded and whose last job ended (its count held by the caller, and given back
  // here): its source closed, it waits in the scheduler for a slot.
  void park_build(const std::shared_ptr<Build>& build);
  // A parked build the scheduler gave a slot: its source reopened (if it is still the file it was,
  // else the build ends as for a source that changed), its jobs queued again.
  void resume_build(const std::shared_ptr<Build>& build);
  // The block queue of a stream (stream(), stream_once()), with the decoded bytes it may hold
  // ahead of its consumer; it pumps `build` (the caller's, set once started) as room frees.
  std::unique_ptr<index::BlockStream> make_block_stream(std::shared_ptr<Build>& build);
  // Hands the stream's blocks to `sink` until it ends or the sink stops it (then cancelled), and
  // lets the build settle (it waits for its consumer); returns whether the sink stopped it.
  bool consume(const std::shared_ptr<Build>& build, index::BlockStream& stream,
               const std::function<bool(const index::BlockStream::Block&)>& sink);
  // Keeps as many jobs queued as the builder has work ready, up to the pool's width.
  void pump(const std::shared_ptr<Build>& build);
  engine::Priority job_priority(const Build& build) const;
  unsigned claim_jobs_locked(Build& build);
  void submit_jobs(const std::shared_ptr<Build>& build, unsigned n, engine::Priority priority);
  // Out of memory (`e`) in one of the build's steps: it ends, failed (ENOMEM), once its jobs end.
  void fail_build(Build& build, const std::exception& e);
  void run_job(const std::shared_ptr<Build>& build, engine::WorkerContext& ctx);
  bool claim_finish_locked(Build& build);
  // After a cancel from outside the pool: finishes the build if no job is left to do it.
  void finish_if_done(const std::shared_ptr<Build>& build);
  // The build ended (its last job, or its consumer): what it made goes where it belongs.
  void finish_build(const std::shared_ptr<Build>& build);
  // Its end, by how it went: the source changed under it (`why`); it failed; it made an index.
  void end_changed(const Build& build, const std::string& why);
  void end_failed(const Build& build, index::BuildResult r, bool stopping, int cancelled_as);
  void end_built(const Build& build, index::BuildResult r);
  // Last of all: the build leaves builds_ (`bytes`: its bytes count as done in this busy period).
  void release(const std::shared_ptr<Build>& build, bool bytes);
  bool source_changed(const Build& build) const;

  engine::Engine& engine_;
  index::IndexStore& store_;
  const SourceAccess& access_;
  Outcomes& outcomes_;
  BuildScheduler sched_;             // the files waiting for a build, and which builds run

  mutable std::mutex mu_;            // a leaf lock (see the top)
  std::condition_variable idle_;     // builds_ became empty (wait_idle)
  // --- guarded by mu_ ---
  std::vector<std::shared_ptr<Build>> builds_;  // every build under way (parked ones too, and streams)
  bool stopping_ = false;
  bool warned_unsaved_ = false;      // "indexes kept in memory only" was logged
  std::chrono::steady_clock::time_point busy_since_;  // builds_ last became non-empty
  uint64_t busy_bytes_ = 0;          // compressed bytes of builds finished since busy_since_
  std::chrono::steady_clock::duration busy_total_{};  // earlier busy periods, summed
  uint64_t blocks_decoded_ = 0;      // by the builds that left builds_

  std::function<bool()> hold_;       // test hook: builds wait while it returns true
};

}  // namespace mibz2::catalog
