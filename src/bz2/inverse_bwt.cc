#include "bz2/inverse_bwt.h"

#include <algorithm>

namespace mibz2::bz2 {
namespace {

// A table entry: bits 8..27 the next state (a block has at most 900000 < 2^20 bytes), bits 0..7
// the byte to emit, bit 31 set when the entry's own state starts a segment.
constexpr uint32_t kStateMask = 0xFFFFF;
constexpr uint32_t kSegmentStartFlag = 1u << 31;
// Chunk::next: either a chunk index or this bit plus the state where the segment stopped.
constexpr uint32_t kEndsAtStart = 1u << 31;
constexpr uint32_t kNoNext = 0xFFFFFFFFu;

// 32 lanes hide most of the miss latency (1.2 ns a step measured on this CPU versus 16.5 ns for
// one chain); more lanes only add bookkeeping.
constexpr uint32_t kLanes = 32;
// Segments of ~2 KiB keep every lane busy until the very end of the block (the tail where fewer
// than kLanes segments remain is short) for a few hundred flags per block.
constexpr uint32_t kSegmentTarget = 2048;
constexpr uint32_t kMaxSegments = 1024;
// Output chunk size: each segment wastes less than one chunk of scratch.
constexpr uint32_t kChunk = 1024;

}  // namespace

size_t InverseBwt::memory_bytes() const {
  return size_t{table_capacity_} * 4 + scratch_capacity_ + chunks_.capacity() * sizeof(Chunk);
}

uint32_t InverseBwt::build_table(const uint8_t* ll, uint32_t n, const uint32_t counts[256]) {
  if (table_capacity_ < n) {
    table_.reset(new uint32_t[n]);
    table_capacity_ = n;
  }
  uint32_t next[256];
  uint32_t sum = 0;
  for (int b = 0; b < 256; ++b) {
    next[b] = sum;
    sum += counts[b];
  }
  // T[j] for j = LF(i) holds i and ll[i]: reading T[state] yields the next state and its byte at
  // once. Each byte value writes its own ascending run of T, so these stores stream.
  uint32_t* t = table_.get();
  for (uint32_t i = 0; i < n; ++i) {
    const uint8_t b = ll[i];
    t[next[b]++] = (i << 8) | b;
  }
  return sum;
}

ErrorCode InverseBwt::run(const uint8_t* ll, uint32_t n, const uint32_t counts[256], uint32_t orig_ptr) {
  if (build_table(ll, n, counts) != n || orig_ptr >= n) return ErrorCode::kBadBwtCycle;

  const uint32_t segments = std::clamp<uint32_t>(n / kSegmentTarget, 1, kMaxSegments);
  starts_.clear();
  starts_.push_back(orig_ptr);
  for (uint32_t j = 1; j < segments; ++j) {
    const uint32_t s = static_cast<uint32_t>(uint64_t{j} * n / segments);
    if (s != orig_ptr) starts_.push_back(s);
  }
  uint32_t* t = table_.get();
  for (uint32_t s : starts_) t[s] |= kSegmentStartFlag;

  if (ErrorCode e = walk(n, orig_ptr); e != ErrorCode::kOk) return e;
  return stitch(n);
}

ErrorCode InverseBwt::walk(uint32_t n, uint32_t /*orig_ptr*/) {
  const uint32_t nseg = static_cast<uint32_t>(starts_.size());
  // A one-cycle table needs at most n / kChunk full chunks plus one partial chunk per segment;
  // running out of chunks means some lane circles a cycle that holds no segment start.
  const uint32_t max_chunks = n / kChunk + nseg + 1;
  if (scratch_capacity_ < max_chunks * kChunk) {
    scratch_.reset(new uint8_t[size_t{max_chunks} * kChunk]);
    scratch_capacity_ = max_chunks * kChunk;
  }
  chunks_.clear();
  chunks_.reserve(max_chunks);
  first_chunk_.assign(nseg, kNoNext);

  const uint32_t* t = table_.get();
  uint8_t* const scratch = scratch_.get();

  struct Lane {
    uint32_t state;
    uint32_t chunk;
    uint8_t* out;
    uint8_t* end;
  };
  Lane lanes[kLanes];
  uint32_t active = 0;
  uint32_t next_segment = 0;

  auto open_chunk = [&](Lane& lane) -> bool {
    if (chunks_.size() == max_chunks) return false;
    const uint32_t c = static_cast<uint32_t>(chunks_.size());
    chunks_.push_back({c * kChunk, 0, kNoNext});
    lane.chunk = c;
    lane.out = scratch + size_t{c} * kChunk;
    lane.end = lane.out + kChunk;
    return true;
  };
  // Starts the next unstarted segment on `lane`: 1 started, 0 none left, -1 out of chunks.
  auto start_segment = [&](Lane& lane) -> int {
    if (next_segment == nseg) return 0;
    if (!open_chunk(lane)) return -1;
    first_chunk_[next_segment] = lane.chunk;
    // The first step reads the segment's own flagged entry, which must not stop it.
    const uint32_t e = t[starts_[next_segment++]];
    *lane.out++ = static_cast<uint8_t>(e);
    lane.state = (e >> 8) & kStateMask;
    return 1;
  };

  while (active < kLanes) {
    const int r = start_segment(lanes[active]);
    if (r < 0) return ErrorCode::kBadBwtCycle;
    if (r == 0) break;
    ++active;
  }
  while (active > 0) {
    for (uint32_t l = 0; l < active;) {
      Lane& lane = lanes[l];
      const uint32_t e = t[lane.state];
      if (e & kSegmentStartFlag) [[unlikely]] {
        Chunk& c = chunks_[lane.chunk];
        c.len = static_cast<uint32_t>(lane.out - (scratch + c.begin));
        c.next = kEndsAtStart | lane.state;
        const int r = start_segment(lane);
        if (r < 0) return ErrorCode::kBadBwtCycle;
        if (r == 0) {
          lanes[l] = lanes[--active];
          continue;
        }
        ++l;
        continue;
      }
      *lane.out++ = static_cast<uint8_t>(e);
      lane.state = (e >> 8) & kStateMask;
      if (lane.out == lane.end) [[unlikely]] {
        const uint32_t full = lane.chunk;
        if (!open_chunk(lane)) return ErrorCode::kBadBwtCycle;
        chunks_[full].len = kChunk;
        chunks_[full].next = lane.chunk;
      }
      ++l;
    }
  }
  return ErrorCode::kOk;
}

ErrorCode InverseBwt::stitch(uint32_t n) {
  uint64_t written = 0;
  for (const Chunk& c : chunks_) written += c.len;
  if (written != n) return ErrorCode::kBadBwtCycle;

  // starts_[1..] ascend; starts_[0] is the origin, where the cycle closes.
  auto segment_of = [&](uint32_t state) -> uint32_t {
    auto it = std::lower_bound(starts_.begin() + 1, starts_.end(), state);
    if (it == starts_.end() || *it != state) return kNoNext;
    return static_cast<uint32_t>(it - starts_.begin());
  };

  order_.clear();
  uint64_t stitched = 0;
  uint32_t c = first_chunk_[0];
  for (size_t steps = 0;; ++steps) {
    if (c == kNoNext || steps > chunks_.size()) return ErrorCode::kBadBwtCycle;
    if (chunks_[c].len) order_.push_back(c);
    stitched += chunks_[c].len;
    const uint32_t next = chunks_[c].next;
    if (next == kNoNext) return ErrorCode::kBadBwtCycle;
    if (next & kEndsAtStart) {
      const uint32_t state = next & kStateMask;
      if (state == starts_[0]) break;
      const uint32_t seg = segment_of(state);
      c = seg == kNoNext ? kNoNext : first_chunk_[seg];
    } else {
      c = next;
    }
  }
  return stitched == n ? ErrorCode::kOk : ErrorCode::kBadBwtCycle;
}

}  // namespace mibz2::bz2
