// Decides what the marks of a bzip2 file are, in file order, from what the scan and the decoders of
// an index build found out about them (index/candidate.h): which are blocks, where streams start and
// end, what is damaged; and builds the index and its notes. It owns no thread, takes no lock and
// reads nothing: the builder (index_builder.h) feeds it candidates and runs it under its own lock;
// a test feeds it candidates made by hand.
//
// The truth is decided here: a candidate is a real block only if the previous block (or the stream
// header) ends exactly where it starts, so false magics inside compressed data are never taken for
// blocks.
//
// Damage: a block whose CRC fails keeps its place and decoded size and is marked; a block that
// cannot be decoded at all is skipped to the next candidate that decodes (resynchronisation) and
// stands in the index with a nominal size (its level's block size), marked undecodable; a file cut
// inside a block ends at its last complete block. The build always finishes and reports all of it.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "base/byte_buffer.h"
#include "base/status.h"
#include "index/block_index.h"
#include "index/candidate.h"
#include "index/index_prefix.h"

namespace mibz2::index {

struct BuildResult {
  // Why there is no index (ok when there is one): EILSEQ, the file is not usable as bzip2 at all;
  // ECANCELED, the build was stopped (IndexBuilder::cancel); or the machine's, such as the errno of
  // a read of the source that failed (Status::os_error: nothing is known of the file's content
  // then, not a fact to keep) or ENOMEM.
  base::Status error;
  BlockIndex index;                // source identity is left for the caller to fill
  std::vector<std::string> notes;  // damage and warnings, one line each, in file order
  // A build that kept an old prefix's index (BlockResolver::resume) found that prefix's last
  // complete block not as its record says (error: ESTALE): nothing it made is usable, and the file
  // is indexed from its start.
  bool prefix_changed = false;

  bool ok() const { return error.ok(); }
};

// Receives every block as resolution fixes it, in file order. Its calls but blocks_handed() come from
// the resolver, which the builder runs with its lock held: they must not block and must not call
// back into the builder.
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
  virtual void on_block(size_t block, const BlockRecord& record, base::ByteBuffer bytes) = 0;
  // The build finished (completed, failed or cancelled): no more blocks come.
  virtual void on_finished() = 0;
  // Called without the builder's lock after a step that handed it blocks: the time to wake a
  // consumer. Woken under the lock, the consumer preempted the decoder that held it and at once
  // waited for that lock, two context switches more a block (`mibz2 cat -j 2`: 460 -> 325 a run).
  virtual void blocks_handed() = 0;
};

class BlockResolver {
 public:
  // What resolution waits for (after resolve()).
  struct Need {
    enum class Kind { kScan, kDecode, kNothing } kind = Kind::kScan;
    uint64_t candidate = 0;  // kDecode: the sequence number of the candidate to decode
  };

  // With a sink, each resolved block is handed to it with its decoded bytes (Candidate::bytes).
  explicit BlockResolver(ResolvedBlockSink* sink = nullptr) : sink_(sink) {}

  // Before anything is fed: the file is one that grew, and `kept` is what the index of its old
  // prefix gives (index_prefix.h). Resolution starts at the old prefix's last complete block, which
  // must decode to exactly its record (else the build fails: BuildResult::prefix_changed), with the
  // records before it, their stream and the count of streams as they were. No sink: a sink's
  // consumer wants every block.
  void resume(const IndexPrefix& kept);

  // --- fed by the scan and the decoders ---
  // A piece scanned: the marks found in it (in file order, after those fed before), numbered on
  // from the last (the first ever is 0); how many bytes of the file are scanned now and whether
  // that is all of it; with the piece at byte 0, what is there.
  void add_scanned(std::vector<Candidate> found, uint64_t scanned_bytes, bool scan_complete,
                   const StreamBoundary* file_start);
  // Candidate number `seq`, while it is unresolved (to claim it, and to fill in its decode: state
  // kDone); null once resolution has passed it (dropped, or the build finished).
  Candidate* candidate(uint64_t seq);
  const Candidate* candidate(uint64_t seq) const;
  // Resolves as far as the candidates allow. `file_size`: the source's size now
  // (SourceBytes::kUnknownSize for a source read once whose end has not been met).
  void resolve(uint64_t file_size);
  // Ends the build, failed with `error` (a cancel; a read that failed, with its errno).
  void fail(base::Status why);

  // --- asked by the builder ---
  Need need() const;
  bool finished() const { return phase_ == Phase::kFinished; }
  uint64_t first_seq() const { return front_seq_; }                     // the first unresolved
  uint64_t end_seq() const { return front_seq_ + candidates_.size(); }  // after the last fed
  uint64_t scanned_bytes() const { return scanned_bytes_; }
  bool scan_complete() const { return scan_complete_; }
  // How far resolution has come, in compressed bits (progress; not moved to the end by finishing).
  uint64_t resolved_bits() const { return phase_ == Phase::kStreamStart ? stream_byte_ * 8 : cursor_; }
  size_t blocks_resolved() const { return result_.index.blocks.size(); }
  // The result; call once, after finished().
  BuildResult take_result();

 private:
  enum class Phase { kStreamStart, kInStream, kResync, kFinished };

  Candidate* front_candidate();  // first candidate not before the cursor, or null (may set need_scan_)
  void resolve_stream_start();
  void resolve_in_stream();
  // A resumed build's first block (resume()): `c` is the candidate at or after the cursor, if any.
  void resolve_kept_last(Candidate* c);
  void resolve_end_of_stream(const Candidate& eos);
  void resolve_block(Candidate& c);
  void resync();
  // A stream of `level` starts at the cursor `first_bit` (just after its header).
  void begin_stream(int level, uint64_t first_bit);
  static bool plausible_end_of_stream(const Candidate& c);
  // Records a resolved block; `decoded`: the candidate whose decode it is, for a sound block (its
  // newline count; with a sink its bytes are handed on, moved), or null.
  void add_block(uint64_t start_bit, uint8_t flags, uint64_t size, uint64_t end_bit, uint32_t crc,
                 Candidate* decoded);
  void count_damage(const BlockRecord& record);
  void end_truncated(uint64_t bit, std::string why);
  void stream_crc_mismatch(uint32_t stored);
  void finish();
  void note(std::string line) { result_.notes.push_back(std::move(line)); }
  uint64_t size_bits() const { return file_size_ * 8; }

  ResolvedBlockSink* const sink_;

  std::deque<Candidate> candidates_;  // unresolved candidates in file order
  uint64_t front_seq_ = 0;            // sequence number of candidates_.front()
  uint64_t scanned_bytes_ = 0;        // every mark that starts before it is a candidate
  bool scan_complete_ = false;
  bool need_scan_ = true;   // resolution waits for candidates not scanned yet
  uint64_t file_size_ = 0;  // as resolve() was last told
  Phase phase_ = Phase::kStreamStart;
  uint64_t stream_byte_ = 0;   // where the next stream header should be
  StreamBoundary file_start_;  // what is at byte 0 (from the first scan)
  bool file_start_known_ = false;
  StreamBoundary next_stream_;  // what is at stream_byte_ after an end-of-stream marker
  uint64_t cursor_ = 0;         // bit where the next block or end-of-stream must start
  int level_ = 9;               // level of the current stream
  uint32_t combined_crc_ = 0;
  bool stream_crc_unverifiable_ = false;
  bool first_in_stream_ = false;
  size_t stream_first_block_ = 0;  // the first record of the current stream
  uint64_t out_offset_ = 0;
  bool ends_with_newline_ = false;  // the last sound block's last byte is '\n'
  // resume(): the old prefix's last complete block, until it is decoded again and found the same.
  bool checking_kept_last_ = false;
  BlockRecord kept_last_{};
  uint64_t kept_last_size_ = 0;
  uint32_t kept_last_newlines_ = 0;
  BuildResult result_;
};

}  // namespace mibz2::index
