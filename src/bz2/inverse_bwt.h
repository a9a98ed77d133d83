// The inverse Burrows-Wheeler transform of one block, walked on many interleaved lanes.
//
// The walk is a chain of dependent loads over a table as big as the block (3.6 MB for 900k): one
// chain costs a cache miss per byte (~16 ns here), many independent chains overlap their misses
// (~1.2 ns a step at 32). The permutation is one cycle, so we cut it at chosen states ("segment
// starts", flagged in a spare bit of the table): each lane walks a segment until it reaches another
// segment's start, then takes the next unstarted segment. Segments write into fixed-size chunks
// of a scratch buffer; afterwards the chunks are put back in cycle order (each segment ends where
// its successor starts) and read out in that order, so nothing is copied. A table that is not one
// cycle (a lane runs out of chunks, or the stitched length is wrong) is walked again on one lane
// for n steps from the origin, as libbz2 does: periodic blocks ("abab") have such tables.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "bz2/errors.h"

namespace mibz2::bz2 {

// The BWT bytes of a block come as runs of equal bytes, the form the symbol decoder makes them in
// (a literal and the zero run after it): the byte in bits 0..7, how many times it repeats (0..255)
// in bits 8..15. A longer run is several BwtRuns. The table build fills a run's places of its
// byte's bucket a vector at a time, where the bytes one by one cost a cursor update each (real
// JSON: 4.7 bytes a run).
using BwtRun = uint16_t;
inline constexpr uint32_t kMaxBwtRunCount = 255;
constexpr BwtRun make_bwt_run(uint32_t byte, uint32_t count) { return static_cast<BwtRun>(byte | count << 8); }

// Appends `count` bytes `byte` to runs[k..] and returns the new k.
inline uint32_t append_bwt_run(BwtRun* runs, uint32_t k, uint32_t byte, uint32_t count) {
  while (count > kMaxBwtRunCount) [[unlikely]] {
    runs[k++] = make_bwt_run(byte, kMaxBwtRunCount);
    count -= kMaxBwtRunCount;
  }
  runs[k++] = make_bwt_run(byte, count);
  return k;
}
// The same for a count above kMaxBwtRunCount, out of line (a loop that appends mostly short runs
// keeps its registers).
[[gnu::noinline, gnu::cold]] inline uint32_t append_long_bwt_run(BwtRun* runs, uint32_t k, uint32_t byte,
                                                               uint32_t count) {
  return append_bwt_run(runs, k, byte, count);
}

class InverseBwt {
 public:
  // The input of run(): room for the BwtRuns of a block of up to reserve()'s max_n bytes (at most
  // max_n + 1 of them: each run but a leading one of 0 bytes has a byte). It is the chunk storage,
  // which the walk fills only after the table build has read the runs.
  BwtRun* runs() { return reinterpret_cast<BwtRun*>(scratch_.get()); }

  // Decodes: runs() holds the block's n BWT bytes as n_runs runs (the output of Huffman/MTF),
  // counts their byte histogram, orig_ptr the origin. Afterwards for_each_piece() yields the
  // pre-RLE1 bytes in order. A table of several cycles yields n steps from the origin (libbz2's
  // definition); kBadBwtCycle only for inconsistent arguments (counts not adding up to n, orig_ptr
  // >= n).
  ErrorCode run(uint32_t n_runs, uint32_t n, const uint32_t counts[256], uint32_t orig_ptr);

  // Makes room for blocks of up to `max_n` bytes (their stream's level * 100000) at once, so that
  // blocks that grow within a level do not grow the table and the chunk storage again: each growth
  // was a fresh mapping of up to 3.6 MB, a page fault per 4 KiB and an unmapping that interrupts
  // every other thread of the process (a TLB shootdown). Within the decoder's memory rule (man
  // mibz2fs, MEMORY: about 7 MB of tables a thread).
  void reserve(uint32_t max_n);

  // Calls fn(const uint8_t* data, size_t size) for each piece of the output, in order.
  // The pieces are in this object's scratch memory (fn may modify them in place).
  template <class Fn>
  void for_each_piece(Fn&& fn) {
    for (uint32_t c : order_) fn(scratch_.get() + chunks_[c].begin, size_t{chunks_[c].len});
  }

  // Bytes of scratch memory held (for accounting).
  size_t memory_bytes() const;

 private:
  struct Chunk {
    uint32_t begin;  // offset in scratch_
    uint32_t len;    // bytes written
    uint32_t next;   // next chunk of the same segment, or kEndsAtStart | state of the next segment
  };

  // Grow (never shrink) the walk table to n entries, the chunk storage to `bytes`; what they held
  // is not kept.
  void grow_table(uint32_t n);
  void grow_scratch(uint32_t bytes);
  uint32_t build_table(uint32_t n_runs, uint32_t n, const uint32_t counts[256]);
  ErrorCode walk(uint32_t n, uint32_t orig_ptr);
  ErrorCode stitch(uint32_t n);
  void walk_single(uint32_t n, uint32_t orig_ptr);  // one lane, n steps: any table

  std::unique_ptr<uint32_t[]> table_;   // the walk table: next state << 8 | byte, plus a flag bit
  uint32_t table_capacity_ = 0;
  std::unique_ptr<uint8_t[]> scratch_;  // the runs of the block, then chunk storage
  uint32_t scratch_capacity_ = 0;
  std::vector<Chunk> chunks_;
  std::vector<uint32_t> starts_;        // segment start states, segment 0 first (= orig_ptr)
  uint32_t origin_even_start_ = 0;      // the j of the even start that was the origin (0: none)
  std::vector<uint32_t> first_chunk_;   // per segment
  std::vector<uint32_t> order_;         // chunk indices in output order
};

}  // namespace mibz2::bz2
