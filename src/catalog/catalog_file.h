// One source file's entry in the Catalog: its path and identity, and its index life, the state
// machine of catalog.h. The state changes only through the transitions below, each a method that
// takes the entry's lock, checks the state it leaves (MIBZ2_INVARIANT where no other state can be
// met; a false or empty answer where another thread may have settled the file meanwhile) and
// wakes the waiters when it settles the file or makes it stale.
//
// Locks: the entry's mutex is a leaf (catalog.h's lock order): no method calls out while holding
// it (no I/O, no engine, no other lock), and none waits except the wait_* methods, on it alone.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>

#include "base/status.h"
#include "catalog/catalog_report.h"
#include "index/block_index.h"
#include "index/index_builder.h"
#include "io/source_url.h"

namespace mibz2::engine {
class Reader;
}  // namespace mibz2::engine

namespace mibz2::catalog {

// What a file's index is needed for (Catalog::prepare).
enum class Need {
  kSoon,     // load or queue its build (the tree walk at mount)
  kNow,      // someone waits: its build starts at once, at demand priority; a file failed for
             // an environmental reason (base::is_environment) is tried once more
  kRebuild,  // build it again even if an index is current (mibz2 verify, index --force)
};

class CatalogFile {
 public:
  // `device` and `inode`, when not 0, are the identity of the file the entry stands for: a
  // SourceAccess refuses a path that holds another file now.
  explicit CatalogFile(std::string path, uint64_t device = 0, uint64_t inode = 0)
      : path_(std::move(path)), name_(io::is_url(path_) ? io::redacted_url(path_) : path_), device_(device), inode_(inode) {}
  // What the source is opened by: a path, or a URL as given (with its password or signature).
  const std::string& path() const { return path_; }
  // What messages and logs call it: its path, or its URL without its secrets (io/source_url.h).
  const std::string& name() const { return name_; }
  uint64_t device() const { return device_; }
  uint64_t inode() const { return inode_; }

  // ---- what it is now (never waits) ----

  // A snapshot; the build's progress is read from its builder after the lock is released.
  IndexStatus status() const;
  IndexState state() const;
  bool wanted_now() const;
  // What CatalogSummary counts of it.
  struct Tally {
    IndexState state = IndexState::kUnknown;
    std::shared_ptr<const index::IndexBuilder> builder;  // kBuilding
    uint64_t source_size = 0;                            // compressed size when last opened
  };
  Tally tally() const;

  // ---- waiting ----

  // Until it is ready or failed, or stale or unknown (nobody indexes it until asked again), or
  // `stop` is requested. Returns the state it ended in.
  IndexState wait_settled_or_stale(std::stop_token stop);
  // Until it is ready or failed; false when `timeout` passed first.
  bool wait_settled_for(std::chrono::milliseconds timeout);
  // Until it is ready or failed (a stream's own build settles it). Returns whether it is ready.
  bool wait_settled();

  // ---- transitions ----

  // What prepare() leaves to the caller (never under the lock).
  struct Next {
    enum Kind { kNothing, kLoad, kQueue, kPromote } kind = kNothing;
    bool now = false;        // kQueue: someone waits (urgent)
    uint64_t forget_id = 0;  // the cached blocks of the content it drops (kRebuild), or 0
  };
  // Catalog::prepare's step on the entry: kUnknown/kStale -> kLoading (kLoad; kQueued when the
  // stored index is distrusted or `need` is kRebuild), kReady/kFailed -> kQueued (kRebuild),
  // kFailed (for now: the machine's) -> as kUnknown for kNow; marks it wanted now for kNow.
  Next prepare(Need need);
  // load_if_current's claim: kUnknown/kStale -> kLoading, unless its stored index is distrusted.
  enum class LoadClaim { kReady, kBusy, kClaimed };
  LoadClaim claim_load();
  // A load found no stored index it could use: kLoading -> kQueued when `build`, or when someone
  // asked for it meanwhile (returns true, with *now: someone waits), else -> kUnknown (false).
  bool after_no_stored_index(bool build, bool* now);
  // The compressed size as last opened, for the bytes left to do.
  void note_source_size(uint64_t size);
  // Why the stored indexes were not used (from the last load), for the origin of its build.
  void note_not_loaded(std::string why);
  // The scheduler's turn came: kQueued -> kBuilding. False when it was settled another way.
  bool start_building();
  // A stream (Catalog::stream, stream_once) is its file's only build: -> kBuilding.
  void start_stream();
  // Its build has begun: progress is read from `builder` until it settles.
  void building_with(std::shared_ptr<const index::IndexBuilder> builder);
  // kLoading/kBuilding -> kReady with `index`, under a new cache key (a built index's origin takes
  // the reason the stored ones were not used).
  void settle_ready(std::shared_ptr<const index::BlockIndex> index, IndexOrigin origin);
  // kLoading/kQueued/kBuilding -> kFailed for `why` (IndexStatus::error); `as_it_was` is the
  // source's identity now (empty when it cannot be had), which refresh() compares with.
  void settle_failed(base::Status why, IndexOrigin origin, index::SourceIdentity as_it_was);
  // A stream_once pass ended: kBuilding -> kReady or kFailed, with no index (the caller has it).
  void end_pass(bool ok);
  // The source changed while it was built: kBuilding -> kQueued when someone waits (true: build
  // it again now, from the file as it is), else -> kStale.
  bool rebuild_after_change();

  // refresh()'s comparison of the index (or the failed attempt) with the source as it is now.
  enum class Change {
    kNone,       // not settled, or the same (ctime included)
    kCtimeOnly,  // ready, and only the ctime moved: *confirming is the index to check by its fingerprint
    kChanged,    // size, mtime or inode differ (or a failed attempt's ctime)
  };
  Change compare(const index::SourceIdentity& now, std::shared_ptr<const index::BlockIndex>* confirming) const;
  // The source of `confirming` was opened as `opened` (null: it could not be): true when nothing
  // more is to be done: the file was settled again meanwhile, or it is the same content (its ctime
  // is then taken as confirmed).
  bool confirm(const std::shared_ptr<const index::BlockIndex>& confirming, const index::SourceIdentity* opened);
  // kReady/kFailed -> kStale (the source changed, to `now`; with `confirming`, only if that index
  // is still current). Returns whether it went stale, with the cache key of the content it drops.
  // A ready file whose source only grew keeps its index as previous().
  bool go_stale(const std::shared_ptr<const index::BlockIndex>& confirming, const index::SourceIdentity& now,
                uint64_t* forget_id);
  // A Reader found a block that does not match the index with cache key `file_id`: kReady -> kStale,
  // and its stored index is never loaded again (built instead). False if already handled.
  bool distrust(uint64_t file_id);

  // ---- the index it had before its source changed, for a build of it grown ----

  // What go_stale() took from a ready file whose source grew (the same inode, larger): its index
  // and the index directory's file holding it (IndexOrigin::stored_file). A build of the file that grew keeps what it proves of it
  // (index/index_prefix.h) and removes that file once it stores the new index. Kept until the
  // file settles again; never after a distrust, a failure or a forced rebuild.
  struct Previous {
    std::shared_ptr<const index::BlockIndex> index;
    index::StoredFile stored;
  };
  Previous previous() const;
  // Its old prefix turned out not to be what the previous index says: nothing more is kept of it.
  void forget_previous();

  // ---- the Reader shared by the opens of one content ----

  struct Current {
    std::shared_ptr<engine::Reader> reader;                  // the shared one, if it lives
    std::shared_ptr<const index::BlockIndex> index;  // else the index to open one with (null: not ready)
    uint64_t file_id = 0;
  };
  Current current() const;
  // The first Reader stored for content `file_id` is the one every open gets: `reader` unless one
  // was stored meanwhile (or the content changed: then `reader` alone).
  std::shared_ptr<engine::Reader> share_reader(std::shared_ptr<engine::Reader> reader, uint64_t file_id);

 private:
  // Wakes the waiters; called after the lock is released.
  void notify() { settled_.notify_all(); }

  const std::string path_;
  const std::string name_;
  const uint64_t device_;
  const uint64_t inode_;
  // A leaf lock; guards everything below.
  mutable std::mutex mu_;
  std::condition_variable_any settled_;  // settled, or stale: the waiters look again
  IndexState state_ = IndexState::kUnknown;
  bool wanted_now_ = false;               // someone waits: build it first, at demand priority
  std::shared_ptr<const index::BlockIndex> index_;  // kReady
  base::Status error_;                    // kFailed: why, and its kind
  index::SourceIdentity failed_identity_; // the source as it was when it failed
  uint64_t confirmed_ctime_ns_ = 0;       // the source's ctime when its identity was last confirmed
  uint64_t file_id_ = 0;                  // cache key of the indexed content (new id when it changes)
  IndexOrigin origin_;                    // of the current index, or of the failed attempt
  std::string not_loaded_reason_;         // from the last load, for the build's origin
  bool distrust_stored_ = false;          // a stored index failed a read: build, never load
  std::weak_ptr<engine::Reader> reader_;          // shared by the open handles of this content
  std::shared_ptr<const index::IndexBuilder> builder_;  // kBuilding: for progress
  Previous previous_;                     // (previous())
  uint64_t source_size_ = 0;              // compressed size when last opened (for the bytes to do)
};
using FileRef = std::shared_ptr<CatalogFile>;

}  // namespace mibz2::catalog
