#include "index/index_builder.h"

#include <algorithm>

#include "bz2/bit_reader.h"
#include "bz2/stream_parser.h"
#include "index/newline_count.h"

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

}  // namespace

IndexBuilder::IndexBuilder(const io::SourceBytes& source, size_t window, ResolvedBlockSink* sink,
                           const IndexPrefix* kept)
    : source_(source), window_(std::max<size_t>(window, 1)), sink_(sink), resolver_(sink) {
  if (!kept) return;
  resolver_.resume(*kept);
  bytes_kept_ = kept->bytes_kept();
  resolved_bits_.store(resolver_.resolved_bits(), std::memory_order_relaxed);
}

bool IndexBuilder::finished() const {
  std::lock_guard lk(mu_);
  return resolver_.finished();
}

void IndexBuilder::cancel(base::Status why) {
  std::lock_guard lk(mu_);
  if (resolver_.finished()) return;
  resolver_.fail(std::move(why));
  after_resolver_locked();
}

bool IndexBuilder::wait_finished(std::chrono::milliseconds timeout) {
  std::unique_lock lk(mu_);
  return finished_cv_.wait_for(lk, timeout, [this] { return resolver_.finished(); });
}

size_t IndexBuilder::candidates_held() const {
  std::lock_guard lk(mu_);
  return resolver_.end_seq() - resolver_.first_seq();
}

uint64_t IndexBuilder::bytes_done() const { return resolved_bits_.load(std::memory_order_relaxed) / 8; }

BuildResult IndexBuilder::take_result() {
  std::lock_guard lk(mu_);
  return resolver_.take_result();
}

// Scan ahead when candidates run short or resolution waits for them; one scanner at a time.
bool IndexBuilder::should_scan_locked() const {
  return !resolver_.scan_complete() && !scanning_ &&
         (resolver_.need().kind == BlockResolver::Need::Kind::kScan ||
          resolver_.end_seq() - resolver_.first_seq() < 2 * window_);
}

bool IndexBuilder::can_claim_locked() const {
  return next_claim_seq_ < resolver_.end_seq() && next_claim_seq_ < resolver_.first_seq() + window_ &&
         (!sink_ || sink_has_room_locked());
}

// Bytes and decodes summed over the claimed part of the window (a few candidates per thread), so
// that no count can drift from the candidates as they are decoded, resolved or dropped.
bool IndexBuilder::sink_has_room_locked() const {
  uint64_t bytes = 0;
  size_t decoding = 0;
  const uint64_t end = std::min<uint64_t>(next_claim_seq_, resolver_.end_seq());
  for (uint64_t seq = resolver_.first_seq(); seq < end; ++seq) {
    const Candidate& c = *resolver_.candidate(seq);
    bytes += c.bytes.size();
    decoding += c.state == Candidate::State::kDecoding;
  }
  return sink_->has_room(bytes, decoding);
}

size_t IndexBuilder::ready_work() const {
  std::lock_guard lk(mu_);
  if (resolver_.finished()) return 0;
  size_t n = should_scan_locked() ? 1 : 0;
  if (can_claim_locked()) {
    const uint64_t end = std::min<uint64_t>(resolver_.end_seq(), resolver_.first_seq() + window_);
    for (uint64_t seq = next_claim_seq_; seq < end; ++seq)
      if (resolver_.candidate(seq)->state == Candidate::State::kPending) ++n;
  }
  return n;
}

IndexBuilder::Step IndexBuilder::step(bz2::BlockDecoder& decoder, base::ByteBuffer& scratch) {
  std::unique_lock lk(mu_);
  if (resolver_.finished()) return Step::kFinished;
  const size_t blocks_before = resolver_.blocks_resolved();
  const Step s = should_scan_locked() ? scan_locked(lk, scratch) : decode_locked(lk, decoder, scratch);
  const bool handed = sink_ && resolver_.blocks_resolved() != blocks_before;
  lk.unlock();
  if (handed) sink_->blocks_handed();
  return s;
}

// Scans the next chunk with the lock released; its marks become candidates, with what resolution
// will want to know around them (so that resolution, under the lock, never reads the file).
IndexBuilder::Step IndexBuilder::scan_locked(std::unique_lock<std::mutex>& lk, base::ByteBuffer& scratch) {
  scanning_ = true;
  const uint64_t from = resolver_.scanned_bytes();
  const uint64_t piece = std::clamp(from, kFirstScanBytes, kScanChunkBytes);
  const uint64_t to = std::min<uint64_t>(from + piece, source_.size());
  lk.unlock();
  const uint64_t base = from >= kScanBefore ? from - kScanBefore : 0;
  const uint64_t end = std::min<uint64_t>(to + kScanAfter, source_.size());
  base::ByteBuffer& buf = scratch;  // what it held is done with: growing it need not copy
  buf.clear();
  buf.resize_uninitialized(end - base);
  const io::SourceRead got = source_.read(base, buf.size(), buf.data());
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
  StreamBoundary first_header;
  if (from == 0) first_header = classify(bytes, 0, at_file_end);
  lk.lock();
  scanning_ = false;
  resolver_.add_scanned(std::move(found), scanned_to, scanned_to >= source_.size(),
                        from == 0 ? &first_header : nullptr);
  resolve_locked();
  return Step::kWorked;
}

StreamBoundary IndexBuilder::classify(std::span<const uint8_t> bytes, uint64_t byte, bool at_file_end) {
  StreamBoundary c;
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
                                               base::ByteBuffer& scratch) {
  while (can_claim_locked()) {
    const uint64_t seq = next_claim_seq_++;
    Candidate& c = *resolver_.candidate(seq);
    if (c.state != Candidate::State::kPending) continue;
    c.state = Candidate::State::kDecoding;
    const uint64_t bit = c.bit;
    // Where the block most likely ends: the next candidate, when it has been scanned.
    const Candidate* next = resolver_.candidate(seq + 1);
    const uint64_t guess_end_bit = next ? next->bit : 0;
    lk.unlock();
    // With a sink the block is decoded straight into the buffer the sink gets, and the thread's
    // scratch takes the compressed bytes; without one the scratch takes the decoded bytes.
    base::ByteBuffer kept;
    base::ByteBuffer compressed_here;
    base::ByteBuffer& out = sink_ ? kept : scratch;
    base::ByteBuffer& compressed = sink_ ? scratch : compressed_here;
    Decoded d = decode_candidate(bit, guess_end_bit, decoder, compressed, out);
    decodes_.fetch_add(1, std::memory_order_relaxed);
    // A thread keeps its scratch for ordinary blocks (about 1 MB), never the 46 MB of an expanding
    // one: the daemon's memory rule (man/mibz2fs.1, MEMORY) counts one block a thread while it
    // decodes, not one a thread forever.
    if (scratch.capacity() > kScratchKeptBytes) base::ByteBuffer().swap(scratch);
    lk.lock();
    // The candidate may have been dropped (resolution passed it) while we decoded: then its bytes
    // were not needed, nor does a read of them that failed matter (a pipe's released bytes read
    // as EINVAL). A candidate still wanted whose bytes could not be read ends the build.
    Candidate* done = resolver_.candidate(seq);
    if (done && d.read.failed()) {
      fail_read_locked(d.read);
    } else if (done) {
      done->error = d.error;
      done->block = d.result;
      done->size = d.size;
      done->next_is_mark = d.next_is_mark;
      done->newlines = d.newlines;
      done->ends_with_newline = d.ends_with_newline;
      if (sink_ && !d.error) done->bytes = std::move(kept);
      done->state = Candidate::State::kDone;
      resolve_locked();
    }
    return Step::kWorked;
  }
  return Step::kIdle;
}

// Reads the block at `bit` (one request, as far as `guess_end_bit` and a little more, larger only
// if the block turns out longer) and decodes it into `out`.
IndexBuilder::Decoded IndexBuilder::decode_candidate(uint64_t bit, uint64_t guess_end_bit, bz2::BlockDecoder& decoder,
                                                     base::ByteBuffer& bytes, base::ByteBuffer& out) const {
  const uint64_t first = bit / 8;
  uint64_t want = guess_end_bit > bit ? (guess_end_bit + 7) / 8 - first + kBlockSlackBytes : kFirstGuessBytes;
  want = std::min(want, kMaxBlockBytes);
  Decoded d;
  for (;;) {
    bytes.resize_uninitialized(static_cast<size_t>(std::min<uint64_t>(want, source_.size() - first)));
    const io::SourceRead got = source_.read(first, bytes.size(), bytes.data());
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
  // Counted here, on the decoding thread, while the bytes are still in its cache: the line counts
  // of the index cost the build one pass at memory speed (index/newline_count.h). A block holds at
  // most 46 MB, so its count fits in 32 bits.
  if (!d.error && d.size) {
    d.newlines = static_cast<uint32_t>(count_newlines(out.data(), out.size()));
    d.ends_with_newline = out.data()[out.size() - 1] == '\n';
  }
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
      const io::SourceRead n = source_.read(d.result.end_bit / 8, sizeof tail, tail);
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

void IndexBuilder::resolve_locked() {
  resolver_.resolve(source_.size());
  after_resolver_locked();
}

void IndexBuilder::fail_read_locked(const io::SourceRead& failed) {
  if (resolver_.finished()) return;
  resolver_.fail(base::Status::os_error(failed.error, failed.describe()));
  after_resolver_locked();
}

void IndexBuilder::after_resolver_locked() {
  // Candidates resolution passed are never claimed.
  next_claim_seq_ = std::max(next_claim_seq_, resolver_.first_seq());
  if (!resolver_.finished()) {
    resolved_bits_.store(resolver_.resolved_bits(), std::memory_order_relaxed);
    return;
  }
  // Finished: the whole file counts as resolved. The resolver's cursor stops short of it (at the
  // last end-of-stream marker), and a build's progress would stay below 100%.
  resolved_bits_.store(size_bits(), std::memory_order_relaxed);
  finished_cv_.notify_all();
}

}  // namespace mibz2::index
