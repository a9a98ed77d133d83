// Builds the block index of one bzip2 file: a full decode of every block, in parallel.
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
// A read of the source that fails is none of these: nothing is known of the bytes it did not read,
// so the build ends at once, failed, with the read's errno (BuildResult::read_errno) and where it
// happened. It is never taken for the end of the file (a truncation that would be stored).
//
// The builder owns no threads. A driver (engine::Catalog, or a test) calls step() from as many
// threads as it likes; ready_work() says how many steps could start now, so a driver keeps just
// that many jobs going and never parks a thread waiting for work. With a ResolvedBlockSink the
// decoded bytes of each block are kept and handed to the sink in file order (index/block_stream.h);
// without one only their sizes are kept.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "bz2/block_decoder.h"
#include "bz2/block_scanner.h"
#include "bz2/byte_buffer.h"
#include "bz2/errors.h"
#include "bz2/stream_parser.h"
#include "index/block_index.h"
#include "index/source_bytes.h"

namespace mibz2::index {

struct BuildResult {
  bool ok = false;             // false: the file is not usable as bzip2 at all, or could not be read
                               // (error says why)
  std::string error;
  int read_errno = 0;          // !ok because a read of the source failed: its errno (nothing is
                               // known of the file's content then: not a fact to keep)
  BlockIndex index;            // source identity is left for the caller to fill
  std::vector<std::string> notes;  // damage and warnings, one line each, in file order
};

// Receives every block as resolution fixes it, in file order. Its calls but blocks_handed() are made
// with the builder's lock held: they must not block and must not call back into the builder.
class ResolvedBlockSink {
 public:
  virtual ~ResolvedBlockSink() = default;
  // False while the consumer is behind: decoders then claim no new candidates (backpressure).
  // `unresolved_bytes`: what the builder holds for the sink besides, decoded ahead of resolution;
  // `decoding`: decodes under way. With none under way and nothing queued a sink must say yes
  // whatever the bytes, or a build whose resolution waits for one more decode would stall.
  virtual bool has_room(uint64_t unresolved_bytes, size_t decoding) const = 0;
  // Block number `block` with its record; `bytes` holds its decoded bytes, empty when the record
  // is damaged (never serve those).
  virtual void on_block(size_t block, const BlockRecord& record, bz2::ByteBuffer bytes) = 0;
  // The build finished (completed, failed or cancelled): no more blocks come.
  virtual void on_finished() = 0;
  // Called without the builder's lock after a step that handed it blocks: the time to wake a
  // consumer. Woken under the lock, the consumer preempted the decoder that held it and at once
  // waited for that lock, two context switches more a block (`mibz2 cat -j 2`: 460 -> 325 a run).
  virtual void blocks_handed() = 0;
};

class IndexBuilder {
 public:
  enum class Step { kWorked, kIdle, kFinished };

  // `source` (and `sink`, if given) must outlive the build. `window`: candidates in flight ahead of
  // the resolution point (bounds memory and wasted work); a few per thread is enough.
  IndexBuilder(const SourceBytes& source, size_t window, ResolvedBlockSink* sink = nullptr);

  // Does one unit of work (scan a piece, or decode one candidate) with the caller's decoder and
  // scratch buffer (a thread's own, kept from call to call: the piece scanned or the block decoded).
  // kIdle: nothing to do now (others are decoding what resolution waits for).
  Step step(bz2::BlockDecoder& decoder, bz2::ByteBuffer& scratch);
  // How many step() calls could do something right now (0 once finished).
  size_t ready_work() const;

  bool finished() const;
  // Stops the build: it finishes at once with the error `why`.
  static constexpr const char* kCancelled = "cancelled";
  void cancel(const std::string& why = kCancelled);
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
  // The result; call once, after finished().
  BuildResult take_result();

 private:
  // What is at a stream boundary (its 4 bytes classified).
  struct Classified {
    bz2::StreamStart kind = bz2::StreamStart::kEnd;
    int level = 0;
  };
  struct Candidate {
    uint64_t bit = 0;
    bz2::MarkKind kind = bz2::MarkKind::kBlock;
    enum class State : uint8_t { kPending, kDecoding, kDone } state = State::kPending;
    // Blocks, by their decode:
    bz2::Error error;
    bz2::BlockResult block;  // end_bit in file bits
    uint64_t size = 0;       // decoded bytes (valid when block.bytes_produced)
    bool next_is_mark = false;  // a block or end-of-stream mark starts at block.end_bit
    bz2::ByteBuffer bytes;   // with a sink: the decoded bytes
    // Blocks, by the scan: a stream header right before it (a stream that starts after damage).
    bz2::StreamStart header_before = bz2::StreamStart::kNotBzip2;
    int header_level = 0;
    // End-of-stream marks, by the scan:
    bool eos_complete = false;  // its 80 bits are in the file
    uint32_t eos_crc = 0;
    Classified after_eos;       // what follows it
  };
  struct Decoded {
    bz2::Error error;
    bz2::BlockResult result;
    uint64_t size = 0;
    bool next_is_mark = false;
    SourceRead read;  // a read of the block's bytes that failed (nothing else is then set)
  };
  enum class Phase { kStreamStart, kInStream, kResync, kFinished };

  bool should_scan_locked() const;
  bool can_claim_locked() const;  // room in the window and at the sink
  bool sink_has_room_locked() const;  // the sink's room, given what is decoded ahead of it
  Step scan_locked(std::unique_lock<std::mutex>& lk, bz2::ByteBuffer& scratch);
  Step decode_locked(std::unique_lock<std::mutex>& lk, bz2::BlockDecoder& decoder, bz2::ByteBuffer& scratch);
  Decoded decode_candidate(uint64_t bit, uint64_t guess_end_bit, bz2::BlockDecoder& decoder, bz2::ByteBuffer& bytes,
                           bz2::ByteBuffer& out) const;
  static Classified classify(std::span<const uint8_t> bytes, uint64_t byte, bool at_file_end);
  static void describe_mark(std::span<const uint8_t> bytes, uint64_t base, bool at_file_end, const bz2::Mark& m,
                            Candidate* c);
  Candidate* front_candidate();  // first unresolved candidate, or null (may set need_scan_)
  void resolve_locked();
  void resolve_stream_start_locked();
  void resolve_in_stream_locked();
  void resolve_end_of_stream_locked(const Candidate& eos);
  void resolve_block_locked(Candidate& c);
  void resync_locked();
  // A stream of `level` starts at the cursor `first_bit` (just after its header).
  void begin_stream_locked(int level, uint64_t first_bit);
  static bool plausible_end_of_stream(const Candidate& c);
  // Records a resolved block; with a sink also hands it its bytes (moved).
  void add_block(uint64_t start_bit, uint8_t flags, uint64_t size, uint64_t end_bit, uint32_t crc,
                 bz2::ByteBuffer* bytes);
  void count_damage(const BlockRecord& record);
  void end_truncated_locked(uint64_t bit, std::string why);
  // A read of the source failed: the build ends, failed, with its errno. Finishes the build.
  void fail_read_locked(const SourceRead& failed);
  void stream_crc_mismatch_locked(uint32_t stored);
  void finish_locked();
  void note(std::string line) { result_.notes.push_back(std::move(line)); }

  // The source's size in bits: a source read once (a pipe) learns it at its end, before the scan
  // reaches it, so every decision about the end of the file is made with the real size.
  uint64_t size_bits() const { return source_.size() * 8; }

  const SourceBytes& source_;
  const size_t window_;
  ResolvedBlockSink* const sink_;

  // Lock order: mu_, then the sink's own (its calls come under mu_). Never held across a decode
  // or a scan.
  mutable std::mutex mu_;
  std::condition_variable finished_cv_;  // wait_finished() waits here
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
  Classified first_header_;           // what is at byte 0 (from the first scan)
  bool first_scanned_ = false;
  Classified next_stream_;            // what is at stream_byte_ after an end-of-stream marker
  uint64_t cursor_ = 0;               // bit where the next block or end-of-stream must start
  int level_ = 9;                     // level of the current stream
  uint32_t combined_crc_ = 0;
  bool stream_crc_unverifiable_ = false;
  bool first_in_stream_ = false;
  size_t stream_first_block_ = 0;     // the first record of the current stream
  uint64_t out_offset_ = 0;
  BuildResult result_;
  // written under mu_, read without it for progress
  std::atomic<uint64_t> resolved_bits_{0};
};

}  // namespace mibz2::index
