// Thread-safe random reads of one indexed .bz2 file, through the engine's pool and cache.
//
// A read maps the range to blocks, takes what the cache has (hit path: one shard lock, nothing
// else), and for the rest goes to the slow path: under this file's in-flight mutex it re-checks
// the cache, then joins the decode already under way for that block or starts one on the pool.
// So a block is decoded once however many readers want it, and nobody holds a lock while a block
// is decoded or the source is read. A sequential reader also gets read-ahead (readahead.h).
//
// read_async() never waits for a decode: a reader waiting for a block is a continuation of the
// block's decode, run by the decoder thread that finished it, so the caller's thread (a FUSE
// request thread) goes back to serve other requests, hits first among them. read() and
// read_slices() are read_async() and a wait.
//
// Memory: a block the cache admits counts against its capacity until freed, wherever it is held
// (block_ledger.h). A block the cache declines (readers hold its room) counts against no budget but
// its decoder thread's (one block a thread: man mibz2fs, MEMORY), so it must be gone when that
// thread has run its waiters (and offered it to the cache once more): a read waiting for other
// blocks keeps counted copies of its parts, never whole blocks (PendingRead::take), and mibz2fs's
// `done` writes its reply before returning. Only a caller of read_slices() that keeps slices after
// `done` keeps a declined block longer.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/block_cache.h"
#include "engine/decoder_pool.h"
#include "engine/read_failure.h"
#include "engine/readahead.h"
#include "index/block_index.h"
#include "io/source.h"
#include "io/source_bytes.h"
#include "io/source_stamp.h"

namespace mibz2::engine {

class Engine;

// A piece of a read: bytes inside a decoded block, valid while `block` is held.
struct Slice {
  BlockRef block;
  const uint8_t* data = nullptr;
  size_t size = 0;
};

class Reader : public std::enable_shared_from_this<Reader> {
 public:
  // Use Engine::open.
  Reader(Engine& engine, uint64_t file_id, std::string path, std::unique_ptr<io::Source> source,
         std::shared_ptr<const index::BlockIndex> index);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Copies up to `length` bytes at decompressed `offset` into `out`. Returns the byte count (0 at
  // or past the end; fewer than asked when the range runs into a damaged block, which is never
  // served) or -EIO when the read starts in a damaged block, meets a block that does not match
  // the index, or the source cannot be read (a read error: logged as one, never taken for damage
  // or for a wrong index; the next read tries again), -ENOMEM when memory ran out. Why it failed
  // goes to *why, if given (read_failure.h).
  ssize_t read(uint64_t offset, size_t length, uint8_t* out, ReadFailure* why = nullptr);
  // The same read without copying: appends to *out the pieces of the decoded blocks that hold the
  // bytes, in order (each keeps its block alive, also if evicted meanwhile, until *out lets it go),
  // and returns their byte count or -errno as read() does. read() is this plus one copy.
  ssize_t read_slices(uint64_t offset, size_t length, std::vector<Slice>* out, ReadFailure* why = nullptr);

  // What a read ends with: the byte count or -errno as read() returns, the slices holding the
  // bytes (empty on error), valid during the call, and why it failed (null when it did not).
  using ReadDone = std::function<void(ssize_t result, std::vector<Slice>& slices, const ReadFailure* why)>;
  // The same read without waiting: `done` runs exactly once, on this thread before read_async
  // returns when nothing had to be decoded, else on the decoder thread that finished the last
  // block the read needed. Throws (out of memory) only before it started anything, and then
  // `done` never runs.
  void read_async(uint64_t offset, size_t length, ReadDone done);

  uint64_t size() const { return index_->decompressed_size; }
  const index::BlockIndex& index() const { return *index_; }
  const std::shared_ptr<const index::BlockIndex>& shared_index() const { return index_; }
  // The source as it was when it was opened (which file, and which content of it: io/source.h).
  const io::SourceStamp& opened_stamp() const { return source_->stamp(); }
  // Whether the source still is that content (a file: its descriptor's fstat gives the same stamp;
  // false also when that cannot be told). A rewrite in place changes the mtime and the ctime (also
  // one that puts the mtime back), so a true answer means nothing was written since; a file
  // replaced by a rename keeps its stamp here (the descriptor reads the old file) and is told by
  // its path.
  bool source_unchanged() const { return source_->unchanged(); }
  const std::string& path() const { return path_; }
  uint64_t file_id() const { return file_id_; }

  // Called (on a decoder thread) when a block does not match its index record: the index belongs
  // to another file, was crafted, or the source changed in place. `what` names the block and what
  // was found. Set once, before the Reader is shared; the handler reports it (the Reader then logs
  // nothing).
  void set_mismatch_handler(std::function<void(const std::string& what)> handler) { on_mismatch_ = std::move(handler); }
  // Whether a block was found not to match the index: from then on every read fails with EIO. An
  // index that is wrong in one place may be wrong anywhere (a crafted one shifts blocks whose own
  // records match), so nothing more is served from it: the blocks that matched their records may
  // sit at the wrong offsets.
  bool distrusted() const { return distrusted_.load(std::memory_order_acquire); }
  // The failure of every read of a distrusted Reader: which block first did not match, and how.
  // Only once distrusted() is true.
  ReadFailure distrust_failure() const;

  // For tests of the hit path: the lock the slow path takes.
  std::mutex& inflight_mutex_for_testing() { return inflight_mu_; }

 private:
  struct Outcome {
    BlockRef block;        // null on error
    ReadFailure failure;   // why, when block is null
  };
  // An Outcome that failed; none of these allocates (they run where memory may have run out).
  static Outcome failed(ReadFailure::Kind kind, uint64_t block, int error,
                        std::shared_ptr<const std::string> detail = nullptr) {
    return Outcome{nullptr, ReadFailure{kind, block, error, std::move(detail)}};
  }
  using Waiter = std::function<void(const Outcome&)>;
  struct InFlight {
    std::vector<Waiter> waiters;        // guarded by inflight_mu_; run when the decode ends
    std::atomic<bool> started{false};   // a worker claimed the decode (jobs may be queued twice)
    std::atomic<bool> demanded{false};  // a reader is waiting for it
    bool readahead = false;             // queued ahead of any reader
  };

  // Feeds the read to the read-ahead policy and queues what it plans.
  void plan_readahead(uint64_t offset, uint64_t end, uint64_t first, uint64_t last);
  struct PendingRead;
  // Runs `waiter` with the block: at once (with no lock held) when the cache has it, else when its
  // decode ends, starting or joining the decode at demand priority (a reader waits for it).
  void request(uint64_t block, Waiter waiter);
  // Ends a decode: takes it out of the in-flight table and runs its waiters, with no lock held.
  // With `finish` false the decode stays in the table after its waiters ran, so that readers who
  // come meanwhile join it (they are run by the complete() that finishes it).
  void complete(const std::shared_ptr<InFlight>& f, uint64_t block, const Outcome& outcome, bool finish = true);
  // Under inflight_mu_: the nearest read-ahead block after `block` that is queued and not yet
  // wanted, now marked demanded (its block number in *promoted), or null. The caller queues it
  // again at demand priority (whichever copy a worker takes first decodes it).
  std::shared_ptr<InFlight> promote_next_readahead_locked(uint64_t block, uint64_t* promoted);
  // Queues a read-ahead decode unless the block is cached or under way; false, without waiting,
  // when the in-flight mutex is busy (read-ahead is a hint; the reader that planned it goes on),
  // or when the job could not be queued (out of memory).
  bool request_readahead(uint64_t block);
  void queue_decode(const std::shared_ptr<InFlight>& f, uint64_t block, Priority priority);
  Outcome decode(uint64_t block, WorkerContext& ctx);
  Outcome mismatch(uint64_t block, const std::string& why);
  // A read found the index changed since a block was checked (a mapped index rewritten or cut
  // short under it: io/mapped_file.h): the Reader is distrusted as for a mismatch.
  ReadFailure index_changed(uint64_t block) noexcept;
  // Distrusts the Reader for good (the first caller's block and words are every later read's
  // failure) and has it reported (`why`: `what` without the block's description): what
  // mismatch() and index_changed() share.
  Outcome distrust(uint64_t block, std::shared_ptr<const std::string> what, const std::string& why);
  void report_damage(uint64_t block, const std::string& why);
  // A read of the source for `block` failed (`why`: where, and its errno): logged as a read error.
  void report_read_error(uint64_t block, const std::string& why);
  // The same where an exception must not escape (a decode job's failure path): `what` + `detail`.
  void report_damage_noexcept(uint64_t block, const char* what, const char* detail) noexcept;

  Engine& engine_;
  const uint64_t file_id_;
  const std::string path_;
  const std::shared_ptr<const index::BlockIndex> index_;
  const std::unique_ptr<io::Source> source_;  // read by position, up to the size the index describes
  std::function<void(const std::string& what)> on_mismatch_;
  std::atomic<bool> distrusted_{false};  // distrusted(): set once, never cleared
  // The first mismatch found (block and what), for the reads failed after it: written once, by the
  // thread that set distrusted_ first, before it set it (readers load distrusted_ with acquire).
  std::atomic<bool> mismatch_claimed_{false};
  uint64_t mismatch_block_ = 0;
  std::shared_ptr<const std::string> mismatch_what_;

  // Lock order (each line: held while taking the next ones, never the reverse):
  //   inflight_mu_  ->  a BlockCache shard mutex (the re-check under the slow path)
  //   readahead_mu_, report_mu_: leaves, taken alone (readahead_mu_ only tried by a read, but
  //   waited for to give back a plan it could not queue: see plan_readahead).
  // No lock here is held across a decode, a source read or a pool submit.
  std::mutex inflight_mu_;  // the slow path: guards inflight_
  std::unordered_map<uint64_t, std::shared_ptr<InFlight>> inflight_;

  std::mutex readahead_mu_;  // guards readahead_ (pure bookkeeping, no work under it)
  ReadAheadPolicy readahead_;

  // What was logged, by block: sets, not a flag per block, so that a Reader costs the same
  // whatever the size of its file (a dump of millions of blocks is opened by every Dask worker).
  std::mutex report_mu_;                            // guards the two sets
  std::unordered_set<uint64_t> damage_reported_;    // each damaged block is logged once
  // Blocks whose read error was logged, with no good read of them since; and their count, so
  // that a decode looks at the set only when one is there.
  std::unordered_set<uint64_t> read_error_reported_;
  std::atomic<size_t> read_errors_reported_{0};
};

}  // namespace mibz2::engine
