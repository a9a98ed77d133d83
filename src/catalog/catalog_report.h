// What the Catalog says about its files: the snapshot of one file's index life (IndexStatus, with
// how its index came to be), the summary of every file and of indexing so far (CatalogSummary),
// and their words: user.mibz2fs.index and user.mibz2fs.stats show them, mibz2 reports from them,
// and each file's damage is logged in one line when it becomes ready. Plain values: no lock.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "index/block_index.h"
#include "index/index_store.h"

namespace mibz2::catalog {

enum class IndexState : uint8_t {
  kUnknown,   // nothing done yet
  kLoading,   // one thread reads its stored index
  kQueued,    // waits for a build (no current stored index)
  kBuilding,  // being built on the decoder pool (progress in its status)
  kReady,     // an index that describes the source as it is (it may record damage)
  kFailed,    // no index can be made (unreadable, not bzip2, unmounting): the status says why
  kStale,     // the source changed since its index was made: indexed again at the next need
};
const char* to_string(IndexState state);

// How the current index came to be (or why the last attempt failed), for mibz2's reports.
struct IndexOrigin {
  bool built = false;             // built in this process (false: loaded from the store)
  bool saved = false;             // built and stored
  bool validated = false;         // loaded for content that matched by size and fingerprint but not
                                  // by mtime or inode (a copy; a sidecar), after checking a sample
  bool sidecar = false;           // loaded from the sidecar next to the source
  double validation_seconds = 0;  // validated: the time the sample took
  size_t blocks_validated = 0;    // validated: the blocks checked
  std::string index_path;         // where it is (or would be) stored, or the sidecar it came from;
                                  // empty without an index dir
  std::string not_loaded_reason;  // why a stored index was not used (stale, invalid), if any
  std::string save_error;         // why it was not stored, if it was built and not stored
  std::vector<std::string> notes; // damage and warnings found by the build, in file order
  // The index directory's file that holds it, when this process wrote it there or read it there as
  // the file's own (kCurrent): the one removed once the file grows and its new index is stored.
  index::StoredFile stored_file;
  // Built for a file that grew (index/index_prefix.h): records kept from the index of its old
  // prefix, and the compressed bytes they cover, which the build did not read again.
  uint64_t blocks_kept = 0;
  uint64_t bytes_kept = 0;
};

// A snapshot of one file's index life; taking it never waits.
struct IndexStatus {
  IndexState state = IndexState::kUnknown;
  std::shared_ptr<const index::BlockIndex> index;  // kReady
  // kFailed: why, in words, and of which kind (what the programs' exit status tells apart, bzip2's
  // 1 for an environmental problem and 2 for bad input, without reading the words):
  //  - base::is_environment: the machine's problem, not the file's: the source cannot be opened,
  //    read or mapped (missing, permission, I/O: its errno), or memory ran out (ENOMEM), or it
  //    changed while it was read (ESTALE). Never stored; the next request that needs the file now
  //    (Need::kNow) tries once more;
  //  - base::is_bad_input (EILSEQ): its content is not usable bzip2 (not bzip2, empty, ends in the
  //    header);
  //  - base::is_stopped (ECANCELED): the build was cancelled or the catalog shut down (unmounting).
  base::Status error;
  uint64_t build_done = 0;                          // kBuilding: compressed bytes resolved
  uint64_t build_total = 0;                         // kBuilding: compressed bytes in all
  IndexOrigin origin;

  bool ready() const { return state == IndexState::kReady; }
  bool settled() const { return state == IndexState::kReady || state == IndexState::kFailed; }
  // "ready", "building 42%", "queued" or "failed: <why>" (user.mibz2fs.index shows it).
  std::string describe() const;
};

// Every file of the catalog at one moment, and what indexing did so far in this process; taking it
// never waits (user.mibz2fs.index on the mount's root, user.mibz2fs.stats).
struct CatalogSummary {
  // Files by state; `queued` counts every file not yet settled and not building (unknown, loading,
  // queued, stale).
  uint64_t ready = 0, building = 0, queued = 0, failed = 0;
  uint64_t bytes_done = 0;   // compressed bytes indexed since indexing last became busy (running builds included)
  uint64_t bytes_to_do = 0;  // compressed bytes left: of the running builds, and of the files queued
  double seconds = 0;        // since indexing last became busy (0 when idle)
  // Counters of the whole process.
  uint64_t built = 0;          // indexes built
  uint64_t loaded = 0;         // stored indexes loaded
  uint64_t failures = 0;       // files that could not be indexed (unmounting not counted)
  uint64_t bytes_indexed = 0;  // compressed bytes the finished builds read (a grown file's: what
                               // follows the blocks kept from its old prefix's index)
  uint64_t blocks_decoded = 0; // blocks the builds decoded (false marks and cut ends too): their
                               // decode work
  double build_seconds = 0;    // time during which at least one build ran

  // Compressed bytes per second of the current busy period (0 when unknown).
  double rate() const { return seconds > 0 ? static_cast<double>(bytes_done) / seconds : 0; }
  // Seconds until everything known is indexed at that rate; negative when unknown.
  double eta() const { return rate() > 0 ? static_cast<double>(bytes_to_do) / rate() : (bytes_to_do ? -1 : 0); }
  // "files_ready=3 files_building=1 ... eta_s=12" (user.mibz2fs.index on the root).
  std::string describe() const;
  // "indexes_built=2 indexes_loaded=1 ..." (appended to user.mibz2fs.stats).
  std::string counters() const;
};

// One line per file, each time it becomes ready (so at every mount): its damage and where it is,
// and trailing garbage.
void log_damage(const std::string& path, const index::BlockIndex& index);

}  // namespace mibz2::catalog
