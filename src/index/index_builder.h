// Builds the block index of one bzip2 file: a full decode of every block, in parallel.
//
// Pipeline: the file is scanned for candidate marks (block magics, end-of-stream markers) a few
// MB at a time; candidates are decoded by any number of threads, at most `window` candidates ahead
// of the resolution point; results are resolved strictly in file order by a BlockResolver
// (index/block_resolver.h), which is where the truth is decided and where damage is taken in. This
// class keeps the pipeline: the window, the lock, the reads, the scans and decodes (made with the
// lock released), the sink's backpressure, progress and cancelling.
//
// A read of the source that fails is not damage: nothing is known of the bytes it did not read,
// so the build ends at once, failed, with the read's errno and where it happened (BuildResult::error,
// a Status::os_error). It is never taken for the end of the file (a truncation that would be stored).
//
// The builder owns no threads. A driver (catalog::Catalog, or a test) calls step() from as many
// threads as it likes; ready_work() says how many steps could start now, so a driver keeps just
// that many jobs going and never parks a thread waiting for work. With a ResolvedBlockSink the
// decoded bytes of each block are kept and handed to the sink in file order (index/block_stream.h);
// without one only their sizes are kept.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>

#include "base/byte_buffer.h"
#include "bz2/block_decoder.h"
#include "bz2/block_scanner.h"
#include "bz2/errors.h"
#include "index/block_resolver.h"
#include "index/candidate.h"
#include "io/source_bytes.h"

namespace mibz2::index {

class IndexBuilder {
 public:
  enum class Step { kWorked, kIdle, kFinished };

  // `source` (and `sink`, if given) must outlive the build. `window`: candidates in flight ahead of
  // the resolution point (bounds memory and wasted work); a few per thread is enough. `kept`, for
  // a file that grew (never with a sink): what the index of its old prefix gives, so that only
  // the old prefix's last complete block and what follows it are decoded (index_prefix.h).
  IndexBuilder(const io::SourceBytes& source, size_t window, ResolvedBlockSink* sink = nullptr,
               const IndexPrefix* kept = nullptr);

  // Does one unit of work (scan a piece, or decode one candidate) with the caller's decoder and
  // scratch buffer (a thread's own, kept from call to call: the piece scanned or the block decoded).
  // kIdle: nothing to do now (others are decoding what resolution waits for).
  Step step(bz2::BlockDecoder& decoder, base::ByteBuffer& scratch);
  // How many step() calls could do something right now (0 once finished).
  size_t ready_work() const;

  bool finished() const;
  // Stops the build: it finishes at once with the error `why` (stopped: ECANCELED "cancelled").
  static base::Status cancelled() { return base::Status::error(ECANCELED, "cancelled"); }
  void cancel(base::Status why = cancelled());
  // Waits up to `timeout` for the build to finish; returns finished().
  bool wait_finished(std::chrono::milliseconds timeout);
  // Compressed bytes resolved so far (for progress display); any thread may call it.
  uint64_t bytes_done() const;
  // Candidates held (scanned and not yet resolved): at most about 2 x window + kMaxScanMarks,
  // however dense the file is with marks.
  size_t candidates_held() const;
  // Marks kept from one scanned piece: one dense with them (a file of tiny streams has 40,000 a
  // MiB, one crafted of block magics 170,000) is cut short, and the next scan starts at the first
  // mark left out. An ordinary file has a few marks a MiB, a multistream dump a few dozen.
  static constexpr size_t kMaxScanMarks = 1024;
  uint64_t bytes_total() const { return source_.size(); }
  // Compressed bytes taken from the index of an old prefix, never read (0 without one): counted
  // in bytes_done() from the start.
  uint64_t bytes_kept() const { return bytes_kept_; }
  // Candidates decoded so far (blocks, false marks and cut ends alike): the decode work of the build.
  uint64_t decodes() const { return decodes_.load(std::memory_order_relaxed); }
  // The result; call once, after finished().
  BuildResult take_result();

 private:
  struct Decoded {
    bz2::Error error;
    bz2::BlockResult result;
    uint64_t size = 0;
    bool next_is_mark = false;
    uint32_t newlines = 0;
    bool ends_with_newline = false;
    io::SourceRead read;  // a read of the block's bytes that failed (nothing else is then set)
  };
  bool should_scan_locked() const;
  bool can_claim_locked() const;  // room in the window and at the sink
  bool sink_has_room_locked() const;  // the sink's room, given what is decoded ahead of it
  Step scan_locked(std::unique_lock<std::mutex>& lk, base::ByteBuffer& scratch);
  Step decode_locked(std::unique_lock<std::mutex>& lk, bz2::BlockDecoder& decoder, base::ByteBuffer& scratch);
  Decoded decode_candidate(uint64_t bit, uint64_t guess_end_bit, bz2::BlockDecoder& decoder, base::ByteBuffer& bytes,
                           base::ByteBuffer& out) const;
  static StreamBoundary classify(std::span<const uint8_t> bytes, uint64_t byte, bool at_file_end);
  static void describe_mark(std::span<const uint8_t> bytes, uint64_t base, bool at_file_end, const bz2::Mark& m,
                            Candidate* c);
  // Resolves what the candidates now allow, then follows the resolver: the claim point, progress,
  // and the build's end.
  void resolve_locked();
  // A read of the source failed: the build ends, failed, with its errno. Finishes the build.
  void fail_read_locked(const io::SourceRead& failed);
  // The claim point, progress and the wake-up of waiters, after the resolver moved or finished.
  void after_resolver_locked();

  // The source's size in bits: a source read once (a pipe) learns it at its end, before the scan
  // reaches it, so every decision about the end of the file is made with the real size.
  uint64_t size_bits() const { return source_.size() * 8; }

  const io::SourceBytes& source_;
  const size_t window_;
  ResolvedBlockSink* const sink_;
  uint64_t bytes_kept_ = 0;
  std::atomic<uint64_t> decodes_{0};

  // Lock order: mu_, then the sink's own (its calls come under mu_). Never held across a decode
  // or a scan.
  mutable std::mutex mu_;
  std::condition_variable finished_cv_;  // wait_finished() waits here
  // --- guarded by mu_ ---
  BlockResolver resolver_;            // the unresolved candidates (numbered), and all that is resolved
  uint64_t next_claim_seq_ = 0;       // first candidate never claimed
  bool scanning_ = false;
  // written under mu_, read without it for progress
  std::atomic<uint64_t> resolved_bits_{0};
};

}  // namespace mibz2::index
