#include "bz2/inverse_bwt.h"

#include <algorithm>
#include <cstring>

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
// How far ahead of a lane's output the walk asks for the line it will write (see walk()). The
// chunk storage has this much room beyond its last chunk, so the address asked for is always in it.
constexpr uint32_t kOutputAhead = 96;

// Chunk storage a one-cycle table of n entries can need: n / kChunk full chunks plus one partial
// chunk per segment (walk() checks against it).
uint32_t max_chunks_for(uint32_t n, uint32_t segments) { return n / kChunk + segments + 1; }
uint32_t segments_for(uint32_t n) { return std::clamp<uint32_t>(n / kSegmentTarget, 1, kMaxSegments); }
uint32_t chunk_storage_bytes(uint32_t chunks) { return chunks * kChunk + kOutputAhead; }
// The j-th of `segments` evenly spaced states of n (j >= 1: segment starts; the origin is the 0th).
uint32_t even_start(uint32_t j, uint32_t n, uint32_t segments) {
  return static_cast<uint32_t>(uint64_t{j} * n / segments);
}

}  // namespace

void InverseBwt::grow_table(uint32_t n) {
  if (table_capacity_ >= n) return;
  table_.reset(new uint32_t[n]);
  table_capacity_ = n;
}

void InverseBwt::grow_scratch(uint32_t bytes) {
  if (scratch_capacity_ >= bytes) return;
  scratch_.reset(new uint8_t[bytes]);
  scratch_capacity_ = bytes;
}

void InverseBwt::reserve(uint32_t max_n) {
  grow_table(max_n);
  const uint32_t max_chunks = max_chunks_for(max_n, segments_for(max_n));
  grow_scratch(std::max<uint32_t>(chunk_storage_bytes(max_chunks), (max_n + 2) * sizeof(BwtRun)));
  chunks_.reserve(max_chunks);
}

size_t InverseBwt::memory_bytes() const {
  return size_t{table_capacity_} * 4 + scratch_capacity_ + chunks_.capacity() * sizeof(Chunk);
}

uint32_t InverseBwt::build_table(uint32_t n_runs, uint32_t n, const uint32_t counts[256]) {
  grow_table(n);
  uint32_t next[256];  // the next place of each byte's bucket
  uint32_t end[256];   // the end of its bucket
  uint32_t sum = 0;
  for (int b = 0; b < 256; ++b) {
    next[b] = sum;
    sum += counts[b];
    end[b] = sum;
  }
  if (sum != n) return sum;

  // T[j] for j = LF(i) holds i and ll[i]: reading T[state] yields the next state and its byte at
  // once. A run of c bytes b at ll[i..i + c) takes the next c places of b's bucket, in order.
  // Vectors of four entries (GCC's vector extension: SSE2 on x86-64, NEON on ARM).
  typedef uint32_t Entries __attribute__((vector_size(16)));
  constexpr Entries kIota = {0, 1 << 8, 2 << 8, 3 << 8};
  const BwtRun* const runs = reinterpret_cast<const BwtRun*>(scratch_.get());
  uint32_t* const t = table_.get();
  uint32_t i = 0;
  for (uint32_t r = 0; r < n_runs; ++r) {
    const uint32_t b = runs[r] & 0xFF;
    const uint32_t c = runs[r] >> 8;
    const uint32_t j = next[b];
    next[b] = j + c;
    // Up to 256 ascending write streams into a table larger than L2: more than the hardware
    // prefetcher follows. Asking for the line 128 bytes ahead of each store overlaps the fetch of
    // each stream's next line (in-process decode of the 200 MB linux tar: 1.40 s -> 1.33 s;
    // 64 bytes ahead 1.34 s, 256 ahead 1.43 s).
    __builtin_prefetch(t + j + 32, 1);
    Entries v = (i << 8 | b) + kIota;
    if (j + 16 <= end[b]) [[likely]] {
      // Sixteen entries whatever the run's length (most runs are 1 to 4 bytes): those beyond it
      // are the bucket's next places, which the later runs of b write again. The loop for the rest
      // of a longer run is a branch the predictor misses; at eight entries it was taken by 6% of
      // the runs of real JSON and 7% of the Linux source tar's, at sixteen by 3% and 4%: 1 to 2%
      // faster (mibz2 cat -j 1, farm-bench, Xeon model 207), twelve were slower than sixteen.
      std::memcpy(t + j, &v, 16);
      const Entries w = v + (4 << 8);
      std::memcpy(t + j + 4, &w, 16);
      const Entries x = v + (8 << 8);
      std::memcpy(t + j + 8, &x, 16);
      const Entries y = v + (12 << 8);
      std::memcpy(t + j + 12, &y, 16);
      if (c > 16) [[unlikely]] {
        uint32_t k = 16;
        for (v += 16 << 8; k + 4 <= c; k += 4, v += 4 << 8) std::memcpy(t + j + k, &v, 16);
        for (; k < c; ++k) t[j + k] = (i + k) << 8 | b;
      }
    } else {
      for (uint32_t k = 0; k < c; ++k) t[j + k] = (i + k) << 8 | b;
    }
    i += c;
  }
  return sum;
}

ErrorCode InverseBwt::run(uint32_t n_runs, uint32_t n, const uint32_t counts[256], uint32_t orig_ptr) {
  if (orig_ptr >= n || build_table(n_runs, n, counts) != n) return ErrorCode::kBadBwtCycle;

  const uint32_t segments = segments_for(n);
  starts_.clear();
  starts_.push_back(orig_ptr);
  origin_even_start_ = 0;
  for (uint32_t j = 1; j < segments; ++j) {
    const uint32_t s = even_start(j, n, segments);
    if (s != orig_ptr) {
      starts_.push_back(s);
    } else {
      origin_even_start_ = j;
    }
  }
  uint32_t* t = table_.get();
  for (uint32_t s : starts_) t[s] |= kSegmentStartFlag;

  ErrorCode e = walk(n, orig_ptr);
  if (e == ErrorCode::kOk) e = stitch(n);
  if (e == ErrorCode::kOk) return e;
  // Not one cycle. Valid blocks can be like that: a block that repeats a pattern ("abab") has equal
  // rotations, and its table splits into several cycles with the same content. libbz2 defines the
  // output as n steps from the origin whatever the cycles are; take exactly those, on one lane.
  walk_single(n, orig_ptr);
  return ErrorCode::kOk;
}

void InverseBwt::walk_single(uint32_t n, uint32_t orig_ptr) {
  grow_scratch(n);
  const uint32_t* t = table_.get();
  uint8_t* const out = scratch_.get();
  uint32_t state = orig_ptr;
  for (uint32_t k = 0; k < n; ++k) {
    const uint32_t e = t[state];
    out[k] = static_cast<uint8_t>(e);
    state = (e >> 8) & kStateMask;
  }
  chunks_.assign(1, Chunk{0, n, kNoNext});
  order_.assign(1, 0);
}

ErrorCode InverseBwt::walk(uint32_t n, uint32_t /*orig_ptr*/) {
  const uint32_t nseg = static_cast<uint32_t>(starts_.size());
  // Running out of chunks means some lane circles a cycle that holds no segment start.
  const uint32_t max_chunks = max_chunks_for(n, nseg);
  grow_scratch(chunk_storage_bytes(max_chunks));
  chunks_.clear();
  chunks_.reserve(max_chunks);
  first_chunk_.assign(nseg, kNoNext);

  const uint32_t* t = table_.get();
  uint8_t* const scratch = scratch_.get();

  // Lanes step in rounds. Lane l writes its byte of round r at scratch[base[l] + r] (unsigned
  // arithmetic, wrapping by design), so one round counter serves every lane's output cursor and a
  // lane that moves to a new chunk just gets a new base. Rounds run in batches no longer than the
  // smallest room left in any lane's chunk, so the inner loop checks nothing but the start flag.
  uint32_t state[kLanes];
  uint32_t base[kLanes];
  uint32_t chunk[kLanes];
  uint32_t active = 0;
  uint32_t next_segment = 0;
  uint32_t round = 0;

  auto open_chunk = [&](uint32_t l) -> bool {
    if (chunks_.size() == max_chunks) return false;
    const uint32_t c = static_cast<uint32_t>(chunks_.size());
    chunks_.push_back({c * kChunk, 0, kNoNext});
    // The new chunk's first lines, which the lane's own ask below (ahead of its old chunk) missed.
    __builtin_prefetch(scratch + c * kChunk, 1);
    __builtin_prefetch(scratch + c * kChunk + 64, 1);
    chunk[l] = c;
    base[l] = c * kChunk - round;
    return true;
  };
  auto written = [&](uint32_t l) { return base[l] + round - chunks_[chunk[l]].begin; };
  // Starts the next unstarted segment on lane l, taking the lane's step of the current round:
  // 1 started, 0 none left, -1 out of chunks.
  auto start_segment = [&](uint32_t l) -> int {
    if (next_segment == nseg) return 0;
    if (!open_chunk(l)) return -1;
    first_chunk_[next_segment] = chunk[l];
    // The first step reads the segment's own flagged entry, which must not stop it.
    const uint32_t e = t[starts_[next_segment++]];
    scratch[base[l] + round] = static_cast<uint8_t>(e);
    state[l] = (e >> 8) & kStateMask;
    return 1;
  };

  while (active < kLanes) {
    const int r = start_segment(active);
    if (r < 0) return ErrorCode::kBadBwtCycle;
    if (r == 0) break;
    ++active;
  }
  ++round;  // every started lane took its step of round 0
  while (active > 0) {
    uint32_t batch = kChunk;
    for (uint32_t l = 0; l < active; ++l) batch = std::min(batch, kChunk - written(l));
    // A lane that changes chunk inside the batch gets a fresh chunk with kChunk - 1 >= batch - 1
    // bytes of room left after its first byte, so no lane can overflow before the batch ends.
    for (const uint32_t batch_end = round + batch; round != batch_end; ++round) {
      // A lane's output line that is not in the cache when its byte is stored holds up every
      // later store (they leave the store buffer in order) while the line is fetched; the lanes
      // come to a new line every 64 rounds, together once every two rounds. So each round one
      // lane, in turn, asks for the line kOutputAhead bytes ahead of its output (32 rounds
      // apart: every line is asked for before it is written). Real JSON and the Linux source tar,
      // mibz2 cat -j 1, AVX2 and AVX-512: 2.5 to 3% faster (farm-bench, 10 pairs, Xeon model 207);
      // a prefetch by every lane at every step gained half as much.
      if (const uint32_t l = round % kLanes; l < active)
        __builtin_prefetch(scratch + (base[l] + round + kOutputAhead), 1);
      for (uint32_t l = 0; l < active;) {
        const uint32_t e = t[state[l]];
        if (e & kSegmentStartFlag) [[unlikely]] {
          Chunk& c = chunks_[chunk[l]];
          c.len = written(l);
          c.next = kEndsAtStart | state[l];
          const int r = start_segment(l);
          if (r < 0) return ErrorCode::kBadBwtCycle;
          if (r == 0) {
            --active;
            state[l] = state[active];
            base[l] = base[active];
            chunk[l] = chunk[active];
            continue;  // the moved lane takes its step in this slot
          }
          ++l;
          continue;
        }
        scratch[base[l] + round] = static_cast<uint8_t>(e);
        state[l] = (e >> 8) & kStateMask;
        // This lane's next load comes a whole round later, beyond what the out-of-order window
        // holds at 32 lanes; a prefetch starts the miss now and retires at once.
        __builtin_prefetch(t + state[l]);
        ++l;
      }
    }
    for (uint32_t l = 0; l < active; ++l) {
      if (written(l) < kChunk) continue;
      const uint32_t full = chunk[l];
      if (!open_chunk(l)) return ErrorCode::kBadBwtCycle;
      chunks_[full].len = kChunk;
      chunks_[full].next = chunk[l];
    }
  }
  return ErrorCode::kOk;
}

ErrorCode InverseBwt::stitch(uint32_t n) {
  uint64_t written = 0;
  for (const Chunk& c : chunks_) written += c.len;
  if (written != n) return ErrorCode::kBadBwtCycle;

  // starts_[0] is the origin, where the cycle closes; the others are the even starts but the one
  // the origin took (run()). The only even start that can be `state` is the first at or after
  // it, j = ceil(state * segments / n) (they are at least kSegmentTarget apart), in starts_[j] or,
  // after the origin's, starts_[j - 1]. Arithmetic, not a binary search over starts_: that was
  // 60% of this function's samples (its branches are coin tosses), 1% of a decode.
  const uint32_t segments = segments_for(n);
  auto segment_of = [&](uint32_t state) -> uint32_t {
    const uint64_t j = (uint64_t{state} * segments + n - 1) / n;
    if (j == 0 || j >= segments || even_start(static_cast<uint32_t>(j), n, segments) != state) return kNoNext;
    const uint64_t at = j - (origin_even_start_ != 0 && j > origin_even_start_ ? 1 : 0);
    return at < starts_.size() && starts_[at] == state ? static_cast<uint32_t>(at) : kNoNext;
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
