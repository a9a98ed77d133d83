// Where a compressed file's index comes from, and who waits for it: the Catalog is the one owner of
// every file's index life. Everything that needs an index asks it (the FUSE operations, mibz2fs
// -o wait_index, every mibz2 subcommand); nothing else loads, builds or saves an index, or opens a
// Reader for a file.
//
// A file's life (IndexState; one mutex per file guards it):
//
//   kUnknown/kStale --prepare--> kLoading --stored index current, or of the same content--> kReady
//                                    |
//                                    +--none, stale or invalid--> kQueued --> kBuilding --> kReady
//                                                                                   \----> kFailed
//   kReady/kFailed --refresh() sees the source changed (size, mtime, inode)--> kStale
//
// Loading runs on the caller's thread: it reads a small index file, from the index directory by the
// content's name, else the sidecar next to the source; one of the same content (size and
// fingerprint) but another mtime or inode (a copy, a sidecar) is used once a sample of 8 blocks
// spread over the file decodes exactly as its records say (decoded side by side on the pool, at
// demand priority, while the loading thread waits: tens of milliseconds).
//
// Builds run on the engine's decoder pool, several at once: each job is one IndexBuilder step (a
// scan or one block's decode), so a build never holds a worker for longer than a block; the driver
// keeps as many jobs queued as the builder has work ready (IndexBuilder::ready_work), never more
// than the pool's width, and no worker ever waits for build work. The jobs of the builds under way
// share the pool's queues in turn, so those builds share the workers job by job. Which builds are
// under way is the BuildScheduler's (build_scheduler.h; a tiny file can expand 900000:1, and no
// file may hold up another):
//  - a file someone asks for (stat, open, lookup: kNow) starts its build at once, whatever else is
//    building, and its jobs go at demand priority, ahead of every background job: it gets a worker
//    within about one block's decode (past kUrgentBuilds such files at once, a new one waits for a
//    slot at most about a quantum);
//  - files of the tree walk (kSoon) are built as many at once as there are workers, newest request
//    first; a build that has had its quantum (kBuildQuantum of decoder time) steps aside for a file
//    that has not had a turn yet: parked, its progress kept and its source closed, it resumes when
//    a slot is free (and ends, as for a source that changed, if the file is not the one it was).
// Reads go before background builds (demand and read-ahead jobs). Streams (stream(), stream_once())
// are builds of their own, at demand priority, outside the scheduler. A waiter can be stopped
// (std::stop_token: a FUSE interrupt) and the build goes on. shutdown() cancels every build, parked
// ones too, and settles every file still waiting as failed, so no thread stays blocked at unmount.
//
// What builds hold: at most kUrgentBuilds + the pool's width are under way at once (a few more for
// a moment: one that yields gives its slot up while its last jobs end), each with its descriptor
// and a bounded window of candidates (IndexBuilder::candidates_held); a parked build keeps no
// descriptor, only its index so far. Decoded bytes are the workers' own (a block each), never a
// build's: builds take no more memory than one block a decoder thread, however many are under way.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <vector>

#include "engine/build_scheduler.h"
#include "engine/catalog_file.h"
#include "engine/catalog_report.h"
#include "engine/engine.h"
#include "engine/source_access.h"
#include "engine/stored_index.h"
#include "index/block_check.h"
#include "index/block_index.h"
#include "index/block_stream.h"
#include "index/index_builder.h"
#include "index/index_store.h"
#include "index/source_bytes.h"

namespace mibz2::engine {

class Reader;

class Catalog {
 public:
  // Sources are reached only through `access` (which must outlive the catalog); the default opens
  // the paths as given.
  Catalog(Engine& engine, index::IndexStore& store, const SourceAccess* access = nullptr);
  ~Catalog();  // shutdown(), then waits until no build job of its is left on the pool
  Catalog(const Catalog&) = delete;
  Catalog& operator=(const Catalog&) = delete;

  // A new entry for the source at `path` (named by that path, which the caller makes absolute, and
  // reached through the catalog's SourceAccess), standing for the file with that device and inode
  // when they are given. The caller keeps the reference; one entry per source is its rule.
  FileRef add(std::string path, uint64_t device = 0, uint64_t inode = 0);

  using Need = engine::Need;  // (catalog_file.h)
  // Starts what the file needs, unless it is under way or settled (kRebuild: unless under way).
  void prepare(const FileRef& file, Need need);
  // prepare(kNow) and wait until the index is ready (true) or failed (false). A stop request ends
  // the wait at once (false, the build goes on): status() tells the two apart.
  bool wait(const FileRef& file, std::stop_token stop = {});
  // Whether a wait that returned false was stopped rather than settled (failed): then the build
  // goes on and the caller answers EINTR.
  bool stopped_waiting(const FileRef& file, const std::stop_token& stop) const;
  // Waits up to `timeout` for the file to settle (ready or failed); returns whether it did.
  bool wait_for(const FileRef& file, std::chrono::milliseconds timeout);
  // Loads the stored index if it is current (ready: true); otherwise leaves the file as it was.
  bool load_if_current(const FileRef& file);
  IndexStatus status(const FileRef& file) const;
  // Every file's state and the indexing counters; never waits.
  CatalogSummary summary() const;

  // Marks the file stale if its source no longer matches its index (or the failed attempt): size,
  // mtime or inode changed. Returns true if it did. Call before serving an open.
  bool refresh(const FileRef& file);

  // The file's Reader, shared by every open of the same content: waits for the index, opens the
  // source and checks it is the file the index describes. Null with *error when there is none.
  // A stop request ends the wait for the index (null, with status() not settled).
  std::shared_ptr<Reader> open(const FileRef& file, std::string* error, std::stop_token stop = {});

  // Decodes the whole file in one parallel pass, handing each block to `sink` in file order on the
  // calling thread, and keeps the index built on the way (stored, and the file ready). A sink
  // that returns false stops the pass: nothing is stored. Returns false when it stopped or the
  // file could not be decoded at all (status() says why).
  bool stream(const FileRef& file, const std::function<bool(const index::BlockStream::Block&)>& sink);
  // The same pass over a source that is read once and has no index life (a pipe: mibz2 cat -):
  // nothing is stored, no file entry kept. Returns the build's result: its index says how the input
  // ended (damage, truncation, CRC), or !ok with why it is not bzip2. A sink that returns false
  // stops the pass (the result then says "cancelled").
  index::BuildResult stream_once(const index::SourceBytes& source,
                                 const std::function<bool(const index::BlockStream::Block&)>& sink);

  // Cancels every build and settles every file still waiting for one as failed ("unmounting").
  void shutdown();
  // Files queued or building (for the logs).
  size_t pending() const;

  // Called once each time an index the catalog handed out is found not to describe its file (a
  // Reader met a block that does not match its record): whoever showed the file from that index
  // (the mount: the kernel's pages and attributes) drops what it showed. It runs on the thread
  // that found the mismatch, a decoder thread, while a read of the file may wait for its reply: it
  // must not wait for anything (the mount queues its notifications, fs/kernel_notifier.h). Set
  // before the first open.
  void set_distrust_listener(std::function<void(const FileRef&)> listener) { distrust_listener_ = std::move(listener); }

  // Test hook (mibz2fs's MIBZ2FS_TEST_HOLD_BUILDS): while `held` returns true, every build stays at
  // its start (building 0%; no quantum passes) and the files waiting behind those under way wait;
  // its jobs step aside every few ms so that reads still run. Set before the first build.
  void hold_builds_while(std::function<bool()> held) { hold_ = std::move(held); }
  // Test hook: the decoder time a build has in its turn before it steps aside for a file that has
  // not had one (kBuildQuantum in catalog.cc); 0 makes builds park and resume at every job.
  void set_build_quantum(std::chrono::nanoseconds quantum) { sched_.set_quantum(quantum); }

 private:
  struct Build;
  // Loads the file's stored index (stored_index.h). True: settled (ready with it, or failed for
  // now); false: there is none it can use (the reasons kept for its build's origin).
  bool load_stored(const FileRef& file);
  // The file waits for its build (`now`: someone asked for it: urgent); schedule() starts it.
  void queue_build(const FileRef& file, bool now);
  // Starts and resumes builds while the scheduler has slots free for those waiting.
  void schedule();
  // `once`: the bytes of a source read once (stream_once), instead of opening the file's source.
  // `slot`: the scheduler's start of a queued file (it gives the slot back if the build cannot begin).
  std::shared_ptr<Build> start_build(const FileRef& file, std::unique_ptr<index::BlockStream> stream,
                                     const index::SourceBytes* once = nullptr,
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
  void pump(const std::shared_ptr<Build>& build);
  Priority job_priority(const Build& build) const;
  unsigned claim_jobs_locked(Build& build);
  void submit_jobs(const std::shared_ptr<Build>& build, unsigned n, Priority priority);
  // Out of memory (`e`) in one of the build's steps: it ends, failed (kEnvironment), once its jobs end.
  void fail_build(Build& build, const std::exception& e);
  void run_job(const std::shared_ptr<Build>& build, WorkerContext& ctx);
  bool claim_finish_locked(Build& build);
  void finish_if_done(const std::shared_ptr<Build>& build);
  void finish_build(const std::shared_ptr<Build>& build);
  bool source_changed(const Build& build) const;
  // A Reader found a block that does not match the index with this cache key (`what`: which, how).
  void distrust(const FileRef& file, uint64_t file_id, const std::string& what);
  void settle_ready(const FileRef& file, std::shared_ptr<const index::BlockIndex> index, IndexOrigin origin);
  void settle_failed(const FileRef& file, IndexFailure failure, std::string error, IndexOrigin origin = {});
  // The file cannot be had now for a reason of the machine's (`error` names it, with the errno):
  // logged, settled failed as kEnvironment, nothing stored; prepare(kNow) tries it again.
  void fail_for_now(const FileRef& file, const std::string& error, IndexOrigin origin = {});

  Engine& engine_;
  index::IndexStore& store_;
  const PlainSourceAccess plain_access_;
  const SourceAccess& access_;
  StoredIndexLoader stored_;          // loads stored indexes and sidecars (stored_index.h)

  // Lock order: Catalog::mu_, a CatalogFile's mu_, a build's mu and the scheduler's are never held
  // together. Under a build's mu its IndexBuilder's lock is taken (to see its ready work), and under
  // that a stream's (BlockStream) — never the reverse. None is held across I/O, a decode, or a call
  // into the engine's cache or pool.
  mutable std::mutex mu_;
  std::condition_variable idle_;     // builds_ became empty (for the destructor)
  BuildScheduler sched_;             // the files waiting for a build, and which builds run
  // --- guarded by mu_ ---
  std::vector<std::shared_ptr<Build>> builds_;  // every build under way (parked ones too, and streams)
  bool stopping_ = false;
  bool warned_unsaved_ = false;      // "indexes kept in memory only" was logged
  std::vector<std::weak_ptr<CatalogFile>> files_;  // every entry add() made (for summary())
  size_t files_pruned_at_ = 0;       // files_.size() after the last pruning of expired entries
  std::chrono::steady_clock::time_point busy_since_;  // builds_ last became non-empty
  uint64_t busy_bytes_ = 0;          // compressed bytes of builds finished since busy_since_
  std::chrono::steady_clock::duration busy_total_{};  // earlier busy periods, summed
  uint64_t built_ = 0, loaded_ = 0, failures_ = 0, bytes_indexed_ = 0;  // CatalogSummary's counters

  std::function<bool()> hold_;       // test hook: builds wait while it returns true
  std::function<void(const FileRef&)> distrust_listener_;  // set_distrust_listener
};

}  // namespace mibz2::engine
