// Where a compressed file's index comes from, and who waits for it: the Catalog is the one owner of
// every file's index life. Everything that needs an index asks it (the FUSE operations, mibz2fs
// -o wait_index, every mibz2 subcommand); nothing else loads, builds or saves an index, or opens a
// Reader for a file.
//
// A file's life (IndexState; CatalogFile's transitions change it, catalog_file.h):
//
//   kUnknown/kStale --prepare--> kLoading --stored index current, or of the same content--> kReady
//                                    |
//                                    +--none, stale or invalid--> kQueued --> kBuilding --> kReady
//                                                                                   \----> kFailed
//   kReady/kFailed --refresh() sees the source changed (size, mtime, inode)--> kStale
//   kReady --a Reader finds a block that does not match its record (distrust)--> kStale
//   kFailed for a reason of the machine's (cannot open, a read error, out of memory) --kNow--> kUnknown
//
// Where each step is: loading, on the caller's thread, is the StoredIndexLoader's (stored_index.h:
// when a stored index or a sidecar is believed); building, on the decoder pool, is the BuildDriver's
// (build_driver.h: the queue, the pool jobs, parking and resuming, finishing and saving, and the
// streams of mibz2 cat); what the catalog reports is catalog_report.h. The Catalog keeps the
// registry of files, each file's state machine, the counters, and the Readers (open()).
//
// A waiter can be stopped (std::stop_token: a FUSE interrupt) and the build goes on. shutdown()
// cancels every build, parked ones too, and settles every file still waiting as failed, so no thread
// stays blocked at unmount; the destructor then waits until no build job of its is left on the pool.
//
// Lock order: the Catalog's mutex, the driver's, a build's, the scheduler's and a CatalogFile's are
// never held together (each is taken alone); under a build's mutex its IndexBuilder's lock is taken
// (to see its ready work), and under that a stream's (BlockStream), never the reverse. None is held
// across I/O, a decode, or a call into the engine's cache or pool.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <vector>

#include "catalog/build_driver.h"
#include "catalog/catalog_file.h"
#include "catalog/catalog_report.h"
#include "catalog/source_access.h"
#include "catalog/stored_index.h"
#include "engine/engine.h"
#include "index/block_index.h"
#include "index/block_stream.h"
#include "index/index_builder.h"
#include "index/index_store.h"
#include "io/source_bytes.h"

namespace mibz2::engine {
class Reader;
}  // namespace mibz2::engine

namespace mibz2::catalog {

class Catalog : private BuildDriver::Outcomes {
 public:
  // Sources are reached only through `access` (which must outlive the catalog); the default opens
  // the paths as given.
  Catalog(engine::Engine& engine, index::IndexStore& store, const SourceAccess* access = nullptr);
  ~Catalog();  // shutdown(), then waits until no build job of its is left on the pool
  Catalog(const Catalog&) = delete;
  Catalog& operator=(const Catalog&) = delete;

  // A new entry for the source at `path` (named by that path, which the caller makes absolute, and
  // reached through the catalog's SourceAccess), standing for the file with that device and inode
  // when they are given. The caller keeps the reference; one entry per source is its rule.
  FileRef add(std::string path, uint64_t device = 0, uint64_t inode = 0);

  using Need = catalog::Need;  // (catalog_file.h)
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
  // source and checks it is the file the index describes. Fails with the file's failure
  // (IndexStatus::error) when it has no index, or with why its source could not be opened as the
  // indexed file (the machine's; ESTALE when it keeps changing). A stop request ends the wait for
  // the index: EINTR ("interrupted"), with status() not settled.
  base::Result<std::shared_ptr<engine::Reader>> open(const FileRef& file, std::stop_token stop = {});

  // Decodes the whole file in one parallel pass, handing each block to `sink` in file order on the
  // calling thread, and keeps the index built on the way (stored, and the file ready). A sink
  // that returns false stops the pass: nothing is stored. Returns false when it stopped or the
  // file could not be decoded at all (status() says why).
  bool stream(const FileRef& file, const std::function<bool(const index::BlockStream::Block&)>& sink);
  // The same pass over a source that is read once and has no index life (a pipe: mibz2 cat -):
  // nothing is stored, no file entry kept. Returns the build's result: its index says how the input
  // ended (damage, truncation, CRC), or !ok with why it is not bzip2. A sink that returns false
  // stops the pass (the result then says "cancelled").
  index::BuildResult stream_once(const io::SourceBytes& source,
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
  void hold_builds_while(std::function<bool()> held) { builds_.hold_builds_while(std::move(held)); }
  // Test hook: the decoder time a build has in its turn before it steps aside for a file that has
  // not had one (kBuildQuantum in build_driver.cc); 0 makes builds park and resume at every job.
  void set_build_quantum(std::chrono::nanoseconds quantum) { builds_.set_build_quantum(quantum); }

 private:
  // Loads the file's stored index (stored_index.h). True: settled (ready with it, or failed for
  // now); false: there is none it can use (the reasons kept for its build's origin).
  bool load_stored(const FileRef& file);
  // A Reader found a block that does not match the index with this cache key (`what`: which, how).
  void distrust(const FileRef& file, uint64_t file_id, const std::string& what);
  // The file's damage logged, then ready.
  void settle_ready(const FileRef& file, std::shared_ptr<const index::BlockIndex> index, IndexOrigin origin);
  // Failed for `why` (counted unless stopped), with the source's identity as it is now, for refresh().
  void settle_failed(const FileRef& file, base::Status why, IndexOrigin origin = {});
  // The file cannot be had now for a reason of the machine's (`why` names it, with the errno):
  // logged, settled failed, nothing stored; prepare(kNow) tries it again.
  void fail_for_now(const FileRef& file, base::Status why, IndexOrigin origin = {});
  // BuildDriver::Outcomes: how a build's end settles its file.
  void built(const FileRef& file, std::shared_ptr<const index::BlockIndex> index, IndexOrigin origin) override;
  void failed(const FileRef& file, base::Status why, IndexOrigin origin) override;
  void failed_for_now(const FileRef& file, base::Status why, IndexOrigin origin) override;

  engine::Engine& engine_;
  const PlainSourceAccess plain_access_;
  const SourceAccess& access_;
  StoredIndexLoader stored_;  // loads stored indexes and sidecars
  BuildDriver builds_;        // builds indexes (it calls back: Outcomes)

  mutable std::mutex mu_;  // a leaf lock (see the top)
  // --- guarded by mu_ ---
  std::vector<std::weak_ptr<CatalogFile>> files_;  // every entry add() made (for summary())
  size_t files_pruned_at_ = 0;       // files_.size() after the last pruning of expired entries
  uint64_t built_ = 0, loaded_ = 0, failures_ = 0, bytes_indexed_ = 0;  // CatalogSummary's counters

  std::function<void(const FileRef&)> distrust_listener_;  // set_distrust_listener
};

}  // namespace mibz2::catalog
