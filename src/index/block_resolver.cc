#include "index/block_resolver.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "base/invariant.h"
#include "bz2/crc32.h"
#include "io/source_bytes.h"

namespace mibz2::index {
namespace {

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

std::string bits_where(uint64_t bit) {
  return "bit " + std::to_string(bit) + " (byte " + std::to_string(bit / 8) + ")";
}

}  // namespace

void BlockResolver::add_scanned(std::vector<Candidate> found, uint64_t scanned_bytes, bool scan_complete,
                                const StreamBoundary* file_start) {
  if (finished()) return;  // nothing is resolved any more: keep nothing
  if (file_start) {
    file_start_ = *file_start;
    file_start_known_ = true;
  }
  for (Candidate& c : found) candidates_.push_back(std::move(c));
  scanned_bytes_ = scanned_bytes;
  scan_complete_ = scan_complete;
  need_scan_ = false;
}

void BlockResolver::resume(const IndexPrefix& kept) {
  MIBZ2_INVARIANT(!sink_ && candidates_.empty() && front_seq_ == 0 && phase_ == Phase::kStreamStart);
  BlockIndex& idx = result_.index;
  idx.blocks = kept.blocks;
  idx.newlines = kept.newlines;
  idx.stream_count = kept.stream_count;
  // Where the old resolution stood just before the last complete block: inside its stream, with
  // the combined CRC of the stream's blocks before it (the stream's check covers them all).
  level_ = kept.last.level();
  stream_first_block_ = kept.stream_first_block;
  combined_crc_ = kept.stream_crc;
  first_in_stream_ = kept.last.stream_start();
  out_offset_ = kept.last.out_offset;
  cursor_ = kept.last.start_bit();
  phase_ = Phase::kInStream;
  file_start_known_ = true;  // (byte 0 is never looked at again)
  // The scan starts at the byte the cursor is in: every mark from there on is a candidate.
  scanned_bytes_ = cursor_ / 8;
  checking_kept_last_ = true;
  kept_last_ = kept.last;
  kept_last_size_ = kept.last_size;
  kept_last_newlines_ = kept.last_newlines;
}

Candidate* BlockResolver::candidate(uint64_t seq) {
  return seq >= front_seq_ && seq < end_seq() ? &candidates_[seq - front_seq_] : nullptr;
}

const Candidate* BlockResolver::candidate(uint64_t seq) const {
  return seq >= front_seq_ && seq < end_seq() ? &candidates_[seq - front_seq_] : nullptr;
}

// After resolve() each pass either moved or waits: for a scan, or for the decode of the first
// unresolved candidate (resolution takes candidates in file order and passes none undecoded).
BlockResolver::Need BlockResolver::need() const {
  if (finished()) return {Need::Kind::kNothing};
  if (need_scan_) return {Need::Kind::kScan};
  return {Need::Kind::kDecode, front_seq_};
}

void BlockResolver::fail(base::Status why) {
  if (finished()) return;
  MIBZ2_INVARIANT(!why.ok());
  result_.error = std::move(why);
  finish();
}

BuildResult BlockResolver::take_result() {
  MIBZ2_INVARIANT(finished());
  return std::move(result_);
}

// Resolves as far as the decoded candidates allow. Reads nothing: what it needs of the source the
// scanner and the decoders found out (Candidate).
void BlockResolver::resolve(uint64_t file_size) {
  file_size_ = file_size;
  for (;;) {
    const Phase before = phase_;
    const uint64_t cursor_before = cursor_, stream_before = stream_byte_;
    switch (phase_) {
      case Phase::kFinished:
        return;
      case Phase::kStreamStart:
        resolve_stream_start();
        break;
      case Phase::kInStream:
        resolve_in_stream();
        break;
      case Phase::kResync:
        resync();
        break;
    }
    // Each pass either moves (phase, cursor or stream position) or waits for a scan or a decode.
    if (phase_ == before && cursor_ == cursor_before && stream_byte_ == stream_before) return;
  }
}

Candidate* BlockResolver::front_candidate() {
  while (!candidates_.empty() && candidates_.front().bit < cursor_) {
    candidates_.pop_front();
    ++front_seq_;
  }
  if (candidates_.empty()) {
    if (!scan_complete_) need_scan_ = true;
    return nullptr;
  }
  return &candidates_.front();
}

void BlockResolver::begin_stream(int level, uint64_t first_bit) {
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
void BlockResolver::resolve_stream_start() {
  BlockIndex& idx = result_.index;
  // What is at stream_byte_: learnt by the first scan (byte 0) or with the marker before it.
  if (stream_byte_ == 0 && !file_start_known_) {
    need_scan_ = true;
    return;
  }
  const StreamBoundary next = stream_byte_ == 0 ? file_start_ : next_stream_;
  switch (next.kind) {
    case bz2::StreamStart::kStream:
      begin_stream(next.level, stream_byte_ * 8 + bz2::kStreamHeaderBits);
      return;
    case bz2::StreamStart::kEnd:
      if (idx.stream_count == 0) result_.error = base::Status::error(EILSEQ, "empty file (no bzip2 stream header)");
      finish();
      return;
    case bz2::StreamStart::kTruncated:
      if (idx.stream_count == 0) {
        result_.error = base::Status::error(EILSEQ, "file ends inside the bzip2 stream header");
        finish();
      } else {
        end_truncated(stream_byte_ * 8,
                      "file ends inside a stream header at byte " + std::to_string(stream_byte_) + " (truncated file)");
      }
      return;
    case bz2::StreamStart::kNotBzip2:
      if (idx.stream_count == 0) {
        result_.error = base::Status::error(EILSEQ, "not a bzip2 file (no \"BZh1\"..\"BZh9\" header)");
      } else {
        if (file_size_ == io::SourceBytes::kUnknownSize) {
          // A source read once (a pipe) is not read to its end for garbage: its size is unknown.
          idx.trailing_bytes = 1;
          note("trailing garbage after the last stream ignored, from byte " + std::to_string(stream_byte_));
        } else {
          idx.trailing_bytes = file_size_ - stream_byte_;
          note("trailing garbage after the last stream ignored: " + std::to_string(idx.trailing_bytes) +
               " bytes at byte " + std::to_string(stream_byte_));
        }
      }
      finish();
      return;
  }
}

// Inside a stream, at the cursor: a block (resolved once decoded), the end-of-stream marker, the
// end of the file, or something else (damage: resynchronise).
void BlockResolver::resolve_in_stream() {
  // Every mark that starts before scanned_bytes_ is a candidate: scan past the cursor first.
  if (!scan_complete_ && cursor_ >= scanned_bytes_ * 8) {
    need_scan_ = true;
    return;
  }
  Candidate* c = front_candidate();
  if (checking_kept_last_) {
    resolve_kept_last(c);
    return;
  }
  if (c && c->bit == cursor_) {
    if (c->kind == bz2::MarkKind::kEndOfStream) {
      resolve_end_of_stream(*c);
      return;
    }
    if (c->state != Candidate::State::kDone) return;  // wait for its decode
    resolve_block(*c);
    return;
  }
  if (cursor_ + 48 > size_bits()) {
    end_truncated(cursor_, "file ends at " + bits_where(cursor_) + " inside stream " +
                               std::to_string(result_.index.stream_count) +
                               " before its end-of-stream marker (truncated file)");
    return;
  }
  note("no block or end-of-stream marker at " + bits_where(cursor_) + " where one must start");
  phase_ = Phase::kResync;
}

// The old prefix's last complete block is kept only if it is there again, decoding to what its
// record says: its bytes were the old end's (its CRC vouches for all of them, its end for where the
// build goes on, its last byte for the line count). Anything else, and the old index describes
// another file: the build ends, and the file is indexed from its start.
void BlockResolver::resolve_kept_last(Candidate* c) {
  if (!c) {
    if (!scan_complete_) return;  // (the scan went past the cursor and found no mark yet)
  } else if (c->bit == cursor_ && c->kind == bz2::MarkKind::kBlock && c->state != Candidate::State::kDone) {
    return;  // wait for its decode
  }
  const bool same = c && c->bit == cursor_ && c->kind == bz2::MarkKind::kBlock && !c->error &&
                    c->block.bwt_length <= nominal_block_size(level_) &&
                    c->block.end_bit == kept_last_.end_bit() && c->block.stored_crc == kept_last_.crc &&
                    c->size == kept_last_size_ && c->newlines == kept_last_newlines_;
  if (!same) {
    result_.prefix_changed = true;
    fail(base::Status::error(ESTALE, "the file's first bytes are not those indexed before: its block at " +
                                         bits_where(cursor_) + " differs"));
    return;
  }
  checking_kept_last_ = false;
  resolve_block(*c);
}

void BlockResolver::resolve_end_of_stream(const Candidate& eos) {
  if (!eos.eos_complete) {
    end_truncated(cursor_, "file ends inside the end-of-stream marker at " + bits_where(cursor_) + " (truncated file)");
    return;
  }
  if (eos.eos_crc != combined_crc_ && !stream_crc_unverifiable_) stream_crc_mismatch(eos.eos_crc);
  next_stream_ = eos.after_eos;
  stream_byte_ = (cursor_ + bz2::kEndOfStreamBits + 7) / 8;
  phase_ = Phase::kStreamStart;
}

// The stream that ends at the cursor has blocks whose own CRCs passed but a combined CRC that does
// not match (a block missing, repeated or reordered). Its last block is not served, so that a
// reader of the whole file meets the error; a stream without blocks gets a nominal span for it.
void BlockResolver::stream_crc_mismatch(uint32_t stored) {
  BlockIndex& idx = result_.index;
  idx.flags |= BlockIndex::kStreamCrcMismatch;
  if (idx.blocks.size() > stream_first_block_) {
    BlockRecord& last = idx.blocks.mutate().back();
    const bool counted = last.damaged();
    last.flags |= BlockRecord::kStreamCrcMismatch;
    idx.newlines.mutate().back() = kUnknownNewlines;  // a damaged record's bytes are never counted
    if (!counted) count_damage(last);
    note("stream " + std::to_string(idx.stream_count) + " combined CRC mismatch at " + bits_where(cursor_ + 48) +
         " (stored " + hex32(stored) + ", blocks give " + hex32(combined_crc_) + "): its last block, block " +
         std::to_string(idx.blocks.size() - 1) + ", reads as I/O errors");
  } else {
    note("empty stream " + std::to_string(idx.stream_count) + " with a combined CRC of " + hex32(stored) + " at " +
         bits_where(cursor_ + 48) + ": a nominal " + std::to_string(nominal_block_size(level_)) +
         " bytes read as I/O errors");
    add_block(cursor_, BlockRecord::kStreamCrcMismatch | BlockRecord::kUndecodable, nominal_block_size(level_),
              cursor_ + bz2::kEndOfStreamBits, 0, nullptr);
  }
}

// The candidate at the cursor has been decoded: it becomes a block, or the start of a resync.
void BlockResolver::resolve_block(Candidate& c) {
  const uint64_t max_len = nominal_block_size(level_);
  const bz2::BlockResult& r = c.block;
  const size_t block_no = result_.index.blocks.size();

  if (!c.error && r.bwt_length <= max_len) {
    add_block(c.bit, 0, c.size, r.end_bit, r.stored_crc, &c);
    combined_crc_ = bz2::combine_stream_crc(combined_crc_, r.stored_crc);
    cursor_ = r.end_bit;
    return;
  }
  if (c.error.code == bz2::ErrorCode::kTruncated) {
    end_truncated(c.bit, "file ends inside block " + std::to_string(block_no) + " which starts at " +
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
  const std::string why =
      c.error ? bz2::to_string(c.error) : "block longer than its stream level " + std::to_string(level_) + " allows";
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
}

// An end-of-stream marker that ends damage: complete, and followed by a stream or the end.
bool BlockResolver::plausible_end_of_stream(const Candidate& c) {
  return c.eos_complete &&
         (c.after_eos.kind == bz2::StreamStart::kStream || c.after_eos.kind == bz2::StreamStart::kEnd);
}

// Skips a damaged stretch starting at the cursor: the next candidate that decodes cleanly (or a
// plausible end-of-stream marker) ends it; the stretch becomes one undecodable block.
void BlockResolver::resync() {
  const uint64_t damaged_start = cursor_;
  for (;;) {
    // Candidates strictly after the damaged start.
    while (!candidates_.empty() && candidates_.front().bit <= damaged_start) {
      candidates_.pop_front();
      ++front_seq_;
    }
    if (candidates_.empty()) {
      if (!scan_complete_) {
        need_scan_ = true;
        return;
      }
      end_truncated(damaged_start, "no decodable block after " + bits_where(damaged_start));
      return;
    }
    Candidate& c = candidates_.front();
    if (c.state != Candidate::State::kDone) return;
    // A block right after a stream header starts a new stream (the damage took the end of the
    // previous one): it is judged by that stream's level.
    const int header_level = c.header_level;
    const bool after_header = c.kind == bz2::MarkKind::kBlock && c.header_before == bz2::StreamStart::kStream;
    const int level = after_header ? header_level : level_;
    const bool good_block =
        c.kind == bz2::MarkKind::kBlock && !c.error && c.block.bwt_length <= static_cast<uint64_t>(level) * 100000;
    const bool good_end = c.kind == bz2::MarkKind::kEndOfStream && plausible_end_of_stream(c);
    if (!good_block && !good_end) {
      candidates_.pop_front();
      ++front_seq_;
      continue;
    }
    const uint64_t nominal = nominal_block_size(level_);
    add_block(damaged_start, BlockRecord::kUndecodable, nominal, c.bit, 0, nullptr);
    note("damaged stretch at compressed " + bits_where(damaged_start) + " .. " + bits_where(c.bit) +
         " stands as block " + std::to_string(result_.index.blocks.size() - 1) + " of " + std::to_string(nominal) +
         " unreadable bytes; decompressed offsets after it are shifted by an "
         "unknown amount");
    stream_crc_unverifiable_ = true;
    if (after_header) {
      begin_stream(header_level, c.bit);
    } else {
      cursor_ = c.bit;
      phase_ = Phase::kInStream;
    }
    return;
  }
}

void BlockResolver::add_block(uint64_t start_bit, uint8_t flags, uint64_t size, uint64_t end_bit, uint32_t crc,
                              Candidate* decoded) {
  if (first_in_stream_) flags |= BlockRecord::kStreamStart;
  first_in_stream_ = false;
  const BlockRecord record = BlockRecord::make(start_bit, level_, flags, out_offset_, end_bit - start_bit, crc);
  const bool sound = decoded && !record.damaged();
  if (sink_) sink_->on_block(result_.index.blocks.size(), record, sound ? std::move(decoded->bytes) : base::ByteBuffer());
  result_.index.blocks.push_back(record);
  result_.index.newlines.push_back(sound ? decoded->newlines : kUnknownNewlines);
  if (sound) ends_with_newline_ = decoded->ends_with_newline;
  out_offset_ += size;
  if (record.damaged()) count_damage(record);
}

void BlockResolver::count_damage(const BlockRecord& record) {
  result_.index.damaged_blocks++;
  result_.index.flags |= BlockIndex::kHasDamage;
  if (record.undecodable()) result_.index.flags |= BlockIndex::kHasUndecodable;
}

// The file ends at `bit` inside a stream (or nothing decodable follows it): the rest stands as one
// truncated block of the stream's nominal size, which no read is served from, so that a reader of
// the whole file meets the error as bzip2 -d does. Finishes the build.
void BlockResolver::end_truncated(uint64_t bit, std::string why) {
  result_.index.truncated_at_bit = bit;
  note(std::move(why) + "; a nominal " + std::to_string(nominal_block_size(level_)) + " bytes at decompressed offset " +
       std::to_string(out_offset_) + " read as I/O errors");
  add_block(bit, BlockRecord::kTruncated, nominal_block_size(level_), std::max(bit, size_bits()), 0, nullptr);
  finish();
}

void BlockResolver::finish() {
  phase_ = Phase::kFinished;
  BlockIndex& idx = result_.index;
  idx.decompressed_size = out_offset_;
  // Lines as sed counts them: a last line without its newline is a line too. After any damage the
  // count is unknown (a damaged block's bytes are never counted; FORMAT.md).
  if (!idx.damaged_blocks) {
    uint64_t newlines = 0;
    for (uint32_t n : idx.newlines) newlines += n;
    idx.line_count = newlines + (out_offset_ > 0 && !ends_with_newline_ ? 1 : 0);
  }
  if (result_.index.stream_count == 0 && result_.error.ok())
    result_.error = base::Status::error(EILSEQ, "no bzip2 stream found");
  // Decoded bytes kept for a sink are not needed any more. Decodes still running find their
  // candidate gone (its sequence number is below front_seq_).
  front_seq_ += candidates_.size();
  candidates_.clear();
  if (sink_) sink_->on_finished();
}

}  // namespace mibz2::index
