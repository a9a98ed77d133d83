// Builds the block index of one bzip2 file: a full decode of every block, in parallel, without
// keeping decoded bytes.
//
// Pipeline: the file is scanned for candidate marks (block magics, end-of-stream markers) a few
// MB at a time; candidates are decoded by any number of threads, at most `window` candidates ahead
// of the resolution point; results are resolved strictly in file order, which is where the truth
// is decided: a candidate is a real block only if the previous block (or the stream header) ends
// exactly where it starts, so false magics inside compressed data are never taken for blocks.
//
// Damage: a block whose CRC fails keeps its place and decoded size and is marked; a block that
// cannot be decoded at all is skipped to the next candidate that decodes (resynchronisation) and
// stands in the index with a nominal size (its level's block size), marked undecodable; a file cut
// inside a block ends at its last complete block. The build always finishes and reports all of it.
//
// Threads call step() until it returns kFinished; a thread that gets kIdle calls wait(). The
// builder owns no threads itself, so a caller's thread pool can drive it (run() spawns threads).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "bz2/block_decoder.h"
#include "bz2/block_scanner.h"
#include "bz2/byte_buffer.h"
#include "bz2/errors.h"
#include "index/block_index.h"

namespace mibz2::index {

struct BuildResult {
  bool ok = false;             // false: the file is not usable as bzip2 at all (error says why)
  std::string error;
  BlockIndex index;            // source identity is left for the caller to fill
  std::vector<std::string> notes;  // damage and warnings, one line each, in file order
};

class IndexBuilder {
 public:
  enum class Step { kWorked, kIdle, kFinished };

  // `data` must stay valid until the build finishes. `window`: candidates in flight ahead of the
  // resolution point (bounds memory and wasted work); a few per thread is enough.
  // With `keep_output`, decoded bytes are kept and handed out in file order by next_output(): a
  // parallel streaming decompressor that leaves the index behind. At most `window` decoded blocks
  // wait for the consumer (backpressure: decoding pauses while the consumer is behind).
  IndexBuilder(std::span<const uint8_t> data, size_t window, bool keep_output = false);

  // One block of output, in file order (keep_output mode).
  struct OutputBlock {
    bz2::ByteBuffer bytes;  // the decoded bytes (empty for a damaged block)
    size_t block = 0;       // its number in the index
    bool damaged = false;   // CRC mismatch or undecodable: its bytes must not be served
  };
  // Waits for the next block of output; false when there is no more (the build finished).
  bool next_output(OutputBlock* out);

  // Does one unit of work (scan a piece, or decode one candidate) with the caller's decoder.
  Step step(bz2::BlockDecoder& decoder, bz2::ByteBuffer& scratch);
  // Blocks until step() would find work, or the build finished (the predicate is checked under the
  // same lock that every change takes, so no wake-up is lost).
  void wait();
  // One worker: steps (with its own decoder) until the build is finished.
  void work();
  // Runs the build on `threads` threads (the caller's included) and returns the result.
  BuildResult run(unsigned threads);

  bool finished() const;
  // Stops the build: it finishes at once with an error ("cancelled"); waiting threads return.
  void cancel();
  // Waits up to `timeout` for the build to finish; returns finished().
  bool wait_finished(std::chrono::milliseconds timeout);
  // Compressed bytes resolved so far (for progress display); any thread may call it.
  uint64_t bytes_done() const;
  uint64_t bytes_total() const { return data_.size(); }
  // The result; call once, after finished().
  BuildResult take_result();

 private:
  struct Candidate {
    uint64_t bit = 0;
    bz2::MarkKind kind = bz2::MarkKind::kBlock;
    enum class State : uint8_t { kPending, kDecoding, kDone } state = State::kPending;
    bz2::Error error;
    bz2::BlockResult block;
    uint64_t size = 0;      // decoded bytes (valid when block.bytes_produced)
    bz2::ByteBuffer bytes;  // keep_output mode: the decoded bytes
  };
  enum class Phase { kStreamStart, kInStream, kResync, kFinished };

  bool has_work_locked() const;  // a step() could do something now (or the build is over)
  bool should_scan_locked() const;
  Candidate* front_candidate();  // first unresolved candidate, or null (may set need_scan_)
  void resolve_locked();
  bool resolve_block_locked(Candidate& c);
  void resync_locked();
  bool plausible_end_of_stream(uint64_t bit) const;
  // Records a resolved block; in keep_output mode also queues its bytes (moved) for the consumer.
  void add_block(uint64_t start_bit, uint64_t flags, uint64_t size, uint64_t end_bit, uint32_t crc,
                 bz2::ByteBuffer* bytes);
  void finish_locked();
  void note(std::string line) { result_.notes.push_back(std::move(line)); }

  const std::span<const uint8_t> data_;
  const size_t window_;
  const bool keep_output_;

  mutable std::mutex mu_;
  std::condition_variable changed_;  // idle workers wait here for new work or the end
  // --- guarded by mu_ ---
  std::deque<Candidate> candidates_;  // unresolved candidates in file order
  uint64_t front_seq_ = 0;            // sequence number of candidates_.front()
  uint64_t next_claim_seq_ = 0;       // first candidate never claimed
  uint64_t scan_pos_ = 0;             // bytes scanned
  bool scanning_ = false;
  bool scan_done_ = false;
  bool need_scan_ = false;            // resolution waits for candidates not scanned yet
  Phase phase_ = Phase::kStreamStart;
  uint64_t stream_byte_ = 0;          // where the next stream header should be
  uint64_t cursor_ = 0;               // bit where the next block or end-of-stream must start
  int level_ = 9;                     // level of the current stream
  uint32_t combined_crc_ = 0;
  bool stream_crc_unverifiable_ = false;
  bool first_in_stream_ = false;
  uint64_t out_offset_ = 0;
  BuildResult result_;
  std::deque<OutputBlock> output_;    // resolved blocks the consumer has not taken (keep_output)
  std::condition_variable output_ready_;  // the consumer waits here
  // written under mu_, read without it for progress
  std::atomic<uint64_t> resolved_bits_{0};
};

// Convenience: builds with `threads` threads (0 = all cores).
BuildResult build_index(std::span<const uint8_t> data, unsigned threads);

}  // namespace mibz2::index
