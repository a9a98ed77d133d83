#include "index/index_builder.h"

#include <algorithm>
#include <cstdio>

#include "bz2/bit_reader.h"
#include "bz2/crc32.h"
#include "bz2/stream_parser.h"
#include "base/invariant.h"

namespace mibz2::index {
namespace {

// Scan up to 1 MiB at a time: long enough to amortise the hand-off (a piece takes about 0.5 ms to
// read and scan), short enough that the thread's scratch it is read into stays small and warm
// (4 MiB pieces into fresh vectors were half of `mibz2 cat -j 2`'s page faults; 1 MiB into the
// scratch: 0.974 of its wall time, 21 paired runs on 130 MB of JSON). The first pieces are
// shorter, as long as what was scanned before them, so that the first decodes start at once:
// every decoder but the scanner idles until the first piece is scanned, and a 4 MB piece (read
// and scanned, ~3 ms) took as long as decoding a block.
constexpr uint64_t kFirstScanBytes = 256 << 10;
constexpr uint64_t kScanChunkBytes = 1 << 20;
// Candidates are decoded before their stream is known, so with the largest block size; the
// stream's real level is applied when the candidate is resolved.
constexpr int kDecodeLevel = 9;
// Bytes read around a scanned chunk: 4 before it (the stream header a block may follow) and 16 after
// it (a mark's 48 bits, an end-of-stream marker's CRC and the next stream's header).
constexpr uint64_t kScanBefore = 4;
constexpr uint64_t kScanAfter = 16;
// A block's compressed bytes are read in one request, as far as the next candidate (where the block
// most likely ends) plus a little; a block longer than that is read again, larger, up to the most
// a block can take (bz2::kMaxBlockBytes).
constexpr uint64_t kBlockSlackBytes = 16;
constexpr uint64_t kFirstGuessBytes = 1 << 20;
using bz2::kMaxBlockBytes;
constexpr size_t kScratchKeptBytes = 8 << 20;

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

std::string bits_where(uint64_t bit) {
  return "bit " + std::to_string(bit) + " (byte " + std::to_string(bit / 8) + ")";
}

}  // namespace

IndexBuilder::IndexBuilder(const SourceBytes& source, size_t window, ResolvedBlockSink* sink)
    : source_(source), window_(std::max<size_t>(window, 1)), sink_(sink) {}

bool IndexBuilder::finished() const {
  std::lock_guard lk(mu_);
  return phase_ == Phase::kFinished;
}

void IndexBuilder::cancel(const std::string& why) {
  std::lock_guard lk(mu_);
  if (phase_ == Phase::kFinished) return;
  result_.error = why;
  finish_locked();
}

bool IndexBuilder::wait_finished(std::chrono::milliseconds timeout) {
  std::unique_lock lk(mu_);
  return finished_cv_.wait_for(lk, timeout, [this] { return phase_ == Phase::kFinished; });
}

size_t IndexBuilder::candidates_held() const {
  std::lock_guard lk(mu_);
  return candidates_.size();
}

uint64_t IndexBuilder::bytes_done() const { return resolved_bits_.load(std::memory_order_relaxed) / 8; }

BuildResult IndexBuilder::take_result() {
  std::lock_guard lk(mu_);
  MIBZ2_INVARIANT(phase_ == Phase::kFinished);
  return std::move(result_);
}

// Scan ahead when candidates run short or resolution waits for them; one scanner at a time.
bool IndexBuilder::should_scan_locked() const {
  return !scan_done_ && !scanning_ && (need_scan_ || candidates_.size() < 2 * window_);
}

bool IndexBuilder::can_claim_locked() const {
  return next_claim_seq_ < front_seq_ + candidates_.size() && next_claim_seq_ < front_seq_ + window_ &&
         (!sink_ || sink_has_room_locked());
}

// Bytes and decodes summed over the claimed part of the window (a few candidates per thread), so
// that no count can drift from the candidates as they are decoded, resolved or dropped.
bool IndexBuilder::sink_has_room_locked() const {
  uint64_t bytes = 0;
  size_t decoding = 0;
  const uint64_t end = std::min<uint64_t>(next_claim_seq_, front_seq_ + candidates_.size());
  for (uint64_t seq = front_seq_; seq < end; ++seq) {
    const Candidate& c = candidates_[seq - front_seq_];
    bytes += c.bytes.size();
    decoding += c.state == Candidate::State::kDecoding;
  }
  return sink_->has_room(bytes, decoding);
}

size_t IndexBuilder::ready_work() const {
  std::lock_guard lk(mu_);
  if (phase_ == Phase::kFinished) return 0;
  size_t n = should_scan_locked() ? 1 : 0;
  if (can_claim_locked()) {
    const uint64_t end = std::min<uint64_t>(front_seq_ + candidates_.size(), front_seq_ + window_);
    for (uint64_t seq = next_claim_seq_; seq < end; ++seq)
      if (candidates_[seq - front_seq_].state == Candidate::State::kPending) ++n;
  }
  return n;
}

IndexBuilder::Step IndexBuilder::step(bz2::BlockDecoder& decoder, bz2::ByteBuffer& scratch) {
  std::unique_lock lk(mu_);
  if (phase_ == Phase::kFinished) return Step::kFinished;
  const size_t blocks_before = result_.index.blocks.size();
  const Step s = should_scan_locked() ? scan_locked(lk, scratch) : decode_locked(lk, decoder, scratch);
  const bool handed = sink_ && result_.index.blocks.size() != blocks_before;
  lk.unlock();
  if (handed) sink_->blocks_handed();
  return s;
}

// Scans the next chunk with the lock released; its marks become candidates, with what resolution
// will want to know around them (so that resolution, under the lock, never reads the file).
IndexBuilder::Step IndexBuilder::scan_locked(std::unique_lock<std::mutex>& lk, bz2::ByteBuffer& scratch) {
  scanning_ = true;
  const uint64_t from = scan_pos_;
  const uint64_t piece = std::clamp(from, kFirstScanBytes, kScanChunkBytes);
  const uint64_t to = std::min<uint64_t>(from + piece, source_.size());
  lk.unlock();
  const uint64_t base = from >= kScanBefore ? from - kScanBefore : 0;
  const uint64_t end = std::min<uint64_t>(to + kScanAfter, source_.size());
  bz2::ByteBuffer& buf = scratch;  // what it held is done with: growing it need not copy
  buf.clear();
  buf.resize_uninitialized(end - base);
  const SourceRead got = source_.read(base, buf.size(), buf.data());
  if (got.failed()) {
    lk.lock();
    scanning_ = false;
    fail_read_locked(got);
    return Step::kWorked;
  }
  buf.resize_uninitialized(got.count);  // a file that shrank: what is left
  // Whether the buffer ends where the file ends, so that a short look past a mark means the file
  // really ends there.
  const bool at_file_end = base + buf.size() >= source_.size() || got.count < end - base;
  const std::span<const uint8_t> bytes(buf.data(), buf.size());
  std::vector<bz2::Mark> marks;
  if ((from - base) * 8 < bytes.size() * 8)
    bz2::scan_marks(bytes, (from - base) * 8, std::min<uint64_t>(to - base, bytes.size()) * 8, marks);
  // The candidates a build holds (120 bytes each) stay bounded however dense the file: several
  // builds hold theirs at once.
  uint64_t scanned_to = to;
  if (marks.size() > kMaxScanMarks) {
    // Cut at a byte boundary (scans start at one): the marks in the byte of the first one left out
    // go too. Only a few marks can start in one byte, so the cut lies past `from`: the scan moves on.
    const uint64_t cut = marks[kMaxScanMarks].bit / 8;  // in `bytes`
    while (!marks.empty() && marks.back().bit >= cut * 8) marks.pop_back();
    scanned_to = base + cut;
  }
  std::vector<Candidate> found(marks.size());
  for (size_t i = 0; i < marks.size(); ++i) describe_mark(bytes, base, at_file_end, marks[i], &found[i]);
  Classified first_header;
  if (from == 0) first_header = classify(bytes, 0, at_file_end);
  lk.lock();
  if (from == 0) {
    first_header_ = first_header;
    first_scanned_ = true;
  }
  for (Candidate& c : found) candidates_.push_back(std::move(c));
  scan_pos_ = scanned_to;
  scan_done_ = scanned_to >= source_.size();
  scanning_ = false;
  need_scan_ = false;
  resolve_locked();
  return Step::kWorked;
}

IndexBuilder::Classified IndexBuilder::classify(std::span<const uint8_t> bytes, uint64_t byte, bool at_file_end) {
  Classified c;
  c.kind = bz2::classify_stream_start(bytes, byte, &c.level);
  // Bytes missing because the buffer ends (not the file) would look like the end of the file.
  if (!at_file_end && byte + 4 > bytes.size()) c.kind = bz2::StreamStart::kNotBzip2;
  return c;
}

// A scanned mark (in `bytes`, read from byte `base`), with the bytes around it that resolution
// needs.
void IndexBuilder::describe_mark(std::span<const uint8_t> bytes, uint64_t base, bool at_file_end, const bz2::Mark& m,
                                 Candidate* c) {
  const uint64_t rel = m.bit;
  c->bit = base * 8 + rel;
  c->kind = m.kind;
  if (m.kind == bz2::MarkKind::kBlock) {
    c->state = Candidate::State::kPending;
    // The stream header it may follow (a new stream that starts after damage).
    if (rel >= bz2::kStreamHeaderBits && (rel - bz2::kStreamHeaderBits) % 8 == 0) {
      int level = 0;
      if (bz2::classify_stream_start(bytes, (rel - bz2::kStreamHeaderBits) / 8, &level) == bz2::StreamStart::kStream) {
        c->header_before = bz2::StreamStart::kStream;
        c->header_level = level;
      }
    }
    return;
  }
  // End-of-stream marks need no decoding: their CRC and what follows them are all there is.
  c->state = Candidate::State::kDone;
  c->eos_complete = rel + bz2::kEndOfStreamBits <= bytes.size() * 8;
  if (c->eos_complete) {
    bz2::BitReader br(bytes, rel + 48);
    c->eos_crc = br.read(32);
    c->after_eos = classify(bytes, (rel + bz2::kEndOfStreamBits + 7) / 8, at_file_end);
  }
}

// Claims the first pending candidate inside the window (while the sink has room) and decodes it
// with the lock released.
IndexBuilder::Step IndexBuilder::decode_locked(std::unique_lock<std::mutex>& lk, bz2::BlockDecoder& decoder,
                                               bz2::ByteBuffer& scratch) {
  while (can_claim_locked()) {
    const uint64_t seq = next_claim_seq_++;
    Candidate& c = candidates_[seq - front_seq_];
    if (c.state != Candidate::State::kPending) continue;
    c.state = Candidate::State::kDecoding;
    const uint64_t bit = c.bit;
    // Where the block most likely ends: the next candidate, when it has been scanned.
    const uint64_t next_seq = seq + 1;
    const uint64_t guess_end_bit =
        next_seq < front_seq_ + candidates_.size() ? candidates_[next_seq - front_seq_].bit : 0;
    lk.unlock();
    // With a sink the block is decoded straight into the buffer the sink gets, and the thread's
    // scratch takes the compressed bytes; without one the scratch takes the decoded bytes.
    bz2::ByteBuffer kept;
    bz2::ByteBuffer compressed_here;
    bz2::ByteBuffer& out = sink_ ? kept : scratch;
    bz2::ByteBuffer& compressed = sink_ ? scratch : compressed_here;
    Decoded d = decode_candidate(bit, guess_end_bit, decoder, compressed, out);
    // A thread keeps its scratch for ordinary blocks (about 1 MB), never the 46 MB of an expanding
    // one: the daemon's memory rule (man/mibz2fs.1, MEMORY) counts one block a thread while it
    // decodes, not one a thread forever.
    if (scratch.capacity() > kScratchKeptBytes) bz2::ByteBuffer().swap(scratch);
    lk.lock();
    // The candidate may have been dropped (resolution passed it) while we decoded: then its bytes
    // were not needed, nor does a read of them that failed matter (a pipe's released bytes read
    // as EINVAL). A candidate still wanted whose bytes could not be read ends the build.
    if (seq >= front_seq_ && d.read.failed()) {
      fail_read_locked(d.read);
    } else if (seq >= front_seq_) {
      Candidate& done = candidates_[seq - front_seq_];
      done.error = d.error;
      done.block = d.result;
      done.size = d.size;
      done.next_is_mark = d.next_is_mark;
      if (sink_ && !d.error) done.bytes = std::move(kept);
      done.state = Candidate::State::kDone;
      resolve_locked();
    }
    return Step::kWorked;
  }
  return Step::kIdle;
}

// Reads the block at `bit` (one request, as far as `guess_end_bit` and a little more, larger only
// if the block turns out longer) and decodes it into `out`.
IndexBuilder::Decoded IndexBuilder::decode_candidate(uint64_t bit, uint64_t guess_end_bit, bz2::BlockDecoder& decoder,
                                                     bz2::ByteBuffer& bytes, bz2::ByteBuffer& out) const {
  const uint64_t first = bit / 8;
  uint64_t want = guess_end_bit > bit ? (guess_end_bit + 7) / 8 - first + kBlockSlackBytes : kFirstGuessBytes;
  want = std::min(want, kMaxBlockBytes);
  Decoded d;
  for (;;) {
    bytes.resize_uninitialized(static_cast<size_t>(std::min<uint64_t>(want, source_.size() - first)));
    const SourceRead got = source_.read(first, bytes.size(), bytes.data());
    if (got.failed()) {
      d.read = got;
      return d;
    }
    bytes.resize_uninitialized(got.count);
    const std::span<const uint8_t> buf{bytes.data(), bytes.size()};
    const bool whole_rest = first + buf.size() >= source_.size() || got.count < want;
    out.clear();
    d.error = decoder.decode(buf, bit % 8, kDecodeLevel, out, d.result);
    // Ran out of bytes we did not read (not out of file): read more and decode again.
    if (d.error.code == bz2::ErrorCode::kTruncated && !whole_rest && want < kMaxBlockBytes) {
      want = std::min(want * 2, kMaxBlockBytes);
      continue;
    }
    break;
  }
  d.size = out.size();
  // Positions back in file bits; and whether a mark starts where the block ends.
  const uint64_t base = first * 8;
  if (d.error) d.error.bit_offset += base;
  d.result.end_bit += base;
  if (d.result.symbols_read) {
    const uint64_t end_rel = d.result.end_bit - base;
    uint64_t m;
    if (end_rel + 48 <= bytes.size() * 8) {
      m = bz2::read48_at({bytes.data(), bytes.size()}, end_rel);
    } else {
      uint8_t tail[8] = {};
      const SourceRead n = source_.read(d.result.end_bit / 8, sizeof tail, tail);
      if (n.failed()) {
        d.read = n;
        return d;
      }
      m = n.count ? bz2::read48_at({tail, n.count}, d.result.end_bit % 8) : 0;
    }
    d.next_is_mark = m == bz2::kBlockMagic || m == bz2::kEndOfStreamMagic;
  }
  return d;
}

IndexBuilder::Candidate* IndexBuilder::front_candidate() {
  while (!candidates_.empty() && candidates_.front().bit < cursor_) {
    candidates_.pop_front();
    ++front_seq_;
  }
  next_claim_seq_ = std::max(next_claim_seq_, front_seq_);
  if (candidates_.empty()) {
    if (!scan_done_) need_scan_ = true;
    return nullptr;
  }
  return &candidates_.front();
}

void IndexBuilder::add_block(uint64_t start_bit, uint8_t flags, uint64_t size, uint64_t end_bit, uint32_t crc,
                             bz2::ByteBuffer* bytes) {
  if (first_in_stream_) flags |= BlockRecord::kStreamStart;
  first_in_stream_ = false;
  const BlockRecord record = BlockRecord::make(start_bit, level_, flags, out_offset_, end_bit - start_bit, crc);
  if (sink_)
    sink_->on_block(result_.index.blocks.size(), record,
                    bytes && !record.damaged() ? std::move(*bytes) : bz2::ByteBuffer());
  result_.index.blocks.push_back(record);
  out_offset_ += size;
  if (record.damaged()) count_damage(record);
}

void IndexBuilder::count_damage(const BlockRecord& record) {
  result_.index.damaged_blocks++;
  result_.index.flags |= BlockIndex::kHasDamage;
  if (record.undecodable()) result_.index.flags |= BlockIndex::kHasUndecodable;
}

// The file ends at `bit` inside a stream (or nothing decodable follows it): the rest stands as one
// truncated block of the stream's nominal size, which no read is served from, so that a reader of
// the whole file meets the error as bzip2 -d does. Finishes the build.
void IndexBuilder::end_truncated_locked(uint64_t bit, std::string why) {
  result_.index.truncated_at_bit = bit;
  note(std::move(why) + "; a nominal " + std::to_string(nominal_block_size(level_)) +
       " bytes at decompressed offset " + std::to_string(out_offset_) + " read as I/O errors");
  add_block(bit, BlockRecord::kTruncated, nominal_block_size(level_), std::max(bit, size_bits()), 0, nullptr);
  finish_locked();
}

void IndexBuilder::fail_read_locked(const SourceRead& failed) {
  if (phase_ == Phase::kFinished) return;
  result_.error = failed.describe();
  result_.read_errno = failed.error;
  finish_locked();
}

void IndexBuilder::finish_locked() {
  phase_ = Phase::kFinished;
  result_.index.decompressed_size = out_offset_;
  if (result_.index.stream_count == 0 && result_.error.empty()) result_.error = "no bzip2 stream found";
  result_.ok = result_.error.empty();
  resolved_bits_.store(size_bits(), std::memory_order_relaxed);
  // Decoded bytes kept for a sink are not needed any more. Decodes still running find their
  // candidate gone (its sequence number is below front_seq_).
  front_seq_ += candidates_.size();
  candidates_.clear();
  if (sink_) sink_->on_finished();
  finished_cv_.notify_all();
}

// An end-of-stream marker that ends damage: complete, and followed by a stream or the end.
bool IndexBuilder::plausible_end_of_stream(const Candidate& c) {
  return c.eos_complete &&
         (c.after_eos.kind == bz2::StreamStart::kStream || c.after_eos.kind == bz2::StreamStart::kEnd);
}

// Resolves as far as the decoded candidates allow. Runs under mu_ and reads nothing: what it needs
// of the source the scanner and the decoders found out (Candidate).
void IndexBuilder::resolve_locked() {
  for (;;) {
    // Finished: finish_locked() counted the whole file as resolved; the cursor stops short of it
    // (at the last end-of-stream marker), and a build's progress would stay below 100%.
    if (phase_ == Phase::kFinished) return;
    resolved_bits_.store(phase_ == Phase::kStreamStart ? stream_byte_ * 8 : cursor_, std::memory_order_relaxed);
    const Phase before = phase_;
    const uint64_t cursor_before = cursor_, stream_before = stream_byte_;
    switch (phase_) {
      case Phase::kFinished: return;
      case Phase::kStreamStart: resolve_stream_start_locked(); break;
      case Phase::kInStream: resolve_in_stream_locked(); break;
      case Phase::kResync: resync_locked(); break;
    }
    // Each pass either moves (phase, cursor or stream position) or waits for a scan or a decode.
    if (phase_ == before && cursor_ == cursor_before && stream_byte_ == stream_before) return;
  }
}

void IndexBuilder::begin_stream_locked(int level, uint64_t first_bit) {
  level_ = level;
  stream_first_block_ = result_.index.blocks.size();
  cursor_ = first_bit;
  combined_crc_ = 0;
  stream_crc_unverifiable_ = false;
  first_in_stream_ = true;
  result_.index.stream_count++;
  phase_ = Phase::kInStream;
}

// At a stream boundary: a new stream, the end of the file, a cut header, or trailing garbage.
void IndexBuilder::resolve_stream_start_locked() {
  BlockIndex& idx = result_.index;
  // What is at stream_byte_: learnt by the first scan (byte 0) or with the marker before it.
  if (stream_byte_ == 0 && !first_scanned_) {
    need_scan_ = true;
    return;
  }
  const Classified next = stream_byte_ == 0 ? first_header_ : next_stream_;
  switch (next.kind) {
    case bz2::StreamStart::kStream:
      begin_stream_locked(next.level, stream_byte_ * 8 + bz2::kStreamHeaderBits);
      return;
    case bz2::StreamStart::kEnd:
      if (idx.stream_count == 0) result_.error = "empty file (no bzip2 stream header)";
      finish_locked();
      return;
    case bz2::StreamStart::kTruncated:
      if (idx.stream_count == 0) {
        result_.error = "file ends inside the bzip2 stream header";
        finish_locked();
      } else {
        end_truncated_locked(stream_byte_ * 8, "file ends inside a stream header at byte " +
                                                   std::to_string(stream_byte_) + " (truncated file)");
      }
      return;
    case bz2::StreamStart::kNotBzip2:
      if (idx.stream_count == 0) {
        result_.error = "not a bzip2 file (no \"BZh1\"..\"BZh9\" header)";
      } else {
        if (source_.size() == SourceBytes::kUnknownSize) {
          // A source read once (a pipe) is not read to its end for garbage: its size is unknown.
          idx.trailing_bytes = 1;
          note("trailing garbage after the last stream ignored, from byte " + std::to_string(stream_byte_));
        } else {
          idx.trailing_bytes = source_.size() - stream_byte_;
          note("trailing garbage after the last stream ignored: " + std::to_string(idx.trailing_bytes) +
               " bytes at byte " + std::to_string(stream_byte_));
        }
      }
      finish_locked();
      return;
  }
}

// Inside a stream, at the cursor: a block (resolved once decoded), the end-of-stream marker, the
// end of the file, or something else (damage: resynchronise).
void IndexBuilder::resolve_in_stream_locked() {
  // Every mark that starts before scan_pos_ is a candidate: scan past the cursor first.
  if (!scan_done_ && cursor_ >= scan_pos_ * 8) {
    need_scan_ = true;
    return;
  }
  Candidate* c = front_candidate();
  if (c && c->bit == cursor_) {
    if (c->kind == bz2::MarkKind::kEndOfStream) {
      resolve_end_of_stream_locked(*c);
      return;
    }
    if (c->state != Candidate::State::kDone) return;  // wait for its decode
    resolve_block_locked(*c);
    return;
  }
  if (cursor_ + 48 > size_bits()) {
    end_truncated_locked(cursor_, "file ends at " + bits_where(cursor_) + " inside stream " +
                                      std::to_string(result_.index.stream_count) +
                                      " before its end-of-stream marker (truncated file)");
    return;
  }
  note("no block or end-of-stream marker at " + bits_where(cursor_) + " where one must start");
  phase_ = Phase::kResync;
}

void IndexBuilder::resolve_end_of_stream_locked(const Candidate& eos) {
  if (!eos.eos_complete) {
    end_truncated_locked(cursor_, "file ends inside the end-of-stream marker at " + bits_where(cursor_) +
                                      " (truncated file)");
    return;
  }
  if (eos.eos_crc != combined_crc_ && !stream_crc_unverifiable_) stream_crc_mismatch_locked(eos.eos_crc);
  next_stream_ = eos.after_eos;
  stream_byte_ = (cursor_ + bz2::kEndOfStreamBits + 7) / 8;
  phase_ = Phase::kStreamStart;
}

// The stream that ends at the cursor has blocks whose own CRCs passed but a combined CRC that does
// not match (a block missing, repeated or reordered). Its last block is not served, so that a
// reader of the whole file meets the error; a stream without blocks gets a nominal span for it.
void IndexBuilder::stream_crc_mismatch_locked(uint32_t stored) {
  BlockIndex& idx = result_.index;
  idx.flags |= BlockIndex::kStreamCrcMismatch;
  if (idx.blocks.size() > stream_first_block_) {
    BlockRecord& last = idx.blocks.back();
    const bool counted = last.damaged();
    last.flags |= BlockRecord::kStreamCrcMismatch;
    if (!counted) count_damage(last);
    note("stream " + std::to_string(idx.stream_count) + " combined CRC mismatch at " + bits_where(cursor_ + 48) +
         " (stored " + hex32(stored) + ", blocks give " + hex32(combined_crc_) + "): its last block, block " +
         std::to_string(idx.blocks.size() - 1) + ", reads as I/O errors");
  } else {
    note("empty stream " + std::to_string(idx.stream_count) + " with a combined CRC of " + hex32(stored) +
         " at " + bits_where(cursor_ + 48) + ": a nominal " + std::to_string(nominal_block_size(level_)) +
         " bytes read as I/O errors");
    add_block(cursor_, BlockRecord::kStreamCrcMismatch | BlockRecord::kUndecodable, nominal_block_size(level_),
              cursor_ + bz2::kEndOfStreamBits, 0, nullptr);
  }
}

// The candidate at the cursor has been decoded: it becomes a block, or the start of a resync.
void IndexBuilder::resolve_block_locked(Candidate& c) {
  const uint64_t max_len = nominal_block_size(level_);
  const bz2::BlockResult& r = c.block;
  const size_t block_no = result_.index.blocks.size();

  if (!c.error && r.bwt_length <= max_len) {
    add_block(c.bit, 0, c.size, r.end_bit, r.stored_crc, &c.bytes);
    combined_crc_ = bz2::combine_stream_crc(combined_crc_, r.stored_crc);
    cursor_ = r.end_bit;
    return;
  }
  if (c.error.code == bz2::ErrorCode::kTruncated) {
    end_truncated_locked(c.bit, "file ends inside block " + std::to_string(block_no) + " which starts at " +
                                    bits_where(c.bit) + " (truncated file)");
    return;
  }
  if (c.error.code == bz2::ErrorCode::kBlockCrcMismatch && r.bwt_length <= max_len && c.next_is_mark) {
    add_block(c.bit, BlockRecord::kCrcMismatch, c.size, r.end_bit, r.stored_crc, nullptr);
    combined_crc_ = bz2::combine_stream_crc(combined_crc_, r.stored_crc);
    note("block " + std::to_string(block_no) + " at " + bits_where(c.bit) + " is damaged: CRC mismatch (" +
         std::to_string(c.size) + " bytes at decompressed offset " +
         std::to_string(result_.index.blocks.back().out_offset) + " will read as I/O errors)");
    cursor_ = r.end_bit;
    return;
  }
  // Undecodable. If its symbols were read and it ends where a mark starts, its extent is known.
  const std::string why = c.error ? bz2::to_string(c.error)
                                  : "block longer than its stream level " + std::to_string(level_) + " allows";
  if (r.symbols_read && r.end_bit > c.bit && c.next_is_mark) {
    note("block " + std::to_string(block_no) + " at " + bits_where(c.bit) + " cannot be decoded: " + why +
         "; it stands as " + std::to_string(max_len) + " unreadable bytes and offsets after it are shifted");
    add_block(c.bit, BlockRecord::kUndecodable, max_len, r.end_bit, 0, nullptr);
    stream_crc_unverifiable_ = true;
    cursor_ = r.end_bit;
    return;
  }
  note("block " + std::to_string(block_no) + " at " + bits_where(c.bit) + " cannot be decoded: " + why +
       "; searching for the next good block");
  phase_ = Phase::kResync;
  return;
}

// Skips a damaged stretch starting at the cursor: the next candidate that decodes cleanly (or a
// plausible end-of-stream marker) ends it; the stretch becomes one undecodable block.
void IndexBuilder::resync_locked() {
  const uint64_t damaged_start = cursor_;
  for (;;) {
    // Candidates strictly after the damaged start.
    while (!candidates_.empty() && candidates_.front().bit <= damaged_start) {
      candidates_.pop_front();
      ++front_seq_;
    }
    next_claim_seq_ = std::max(next_claim_seq_, front_seq_);
    if (candidates_.empty()) {
      if (!scan_done_) {
        need_scan_ = true;
        return;
      }
      end_truncated_locked(damaged_start, "no decodable block after " + bits_where(damaged_start));
      return;
    }
    Candidate& c = candidates_.front();
    if (c.state != Candidate::State::kDone) return;
    // A block right after a stream header starts a new stream (the damage took the end of the
    // previous one): it is judged by that stream's level.
    const int header_level = c.header_level;
    const bool after_header = c.kind == bz2::MarkKind::kBlock && c.header_before == bz2::StreamStart::kStream;
    const int level = after_header ? header_level : level_;
    const bool good_block = c.kind == bz2::MarkKind::kBlock && !c.error &&
                            c.block.bwt_length <= static_cast<uint64_t>(level) * 100000;
    const bool good_end = c.kind == bz2::MarkKind::kEndOfStream && plausible_end_of_stream(c);
    if (!good_block && !good_end) {
      candidates_.pop_front();
      ++front_seq_;
      continue;
    }
    const uint64_t nominal = nominal_block_size(level_);
    add_block(damaged_start, BlockRecord::kUndecodable, nominal, c.bit, 0, nullptr);
    note("damaged stretch at compressed " + bits_where(damaged_start) + " .. " + bits_where(c.bit) +
         " stands as block " + std::to_string(result_.index.blocks.size() - 1) + " of " +
         std::to_string(nominal) + " unreadable bytes; decompressed offsets after it are shifted by an "
         "unknown amount");
    stream_crc_unverifiable_ = true;
    if (after_header) {
      begin_stream_locked(header_level, c.bit);
    } else {
      cursor_ = c.bit;
      phase_ = Phase::kInStream;
    }
    return;
  }
}

}  // namespace mibz2::index
