// Sequential-reader detection for one file, and the read-ahead window each such reader earns.
//
// A file may have several readers at once (two greps, a tail -f and a cat): each read is matched
// to one of a few tracked streams by its offset being close to where that stream stopped. A stream
// that continues earns read-ahead, a window of blocks beyond the one just read that doubles on
// each continuing read up to a bound in blocks and in bytes; a read that matches no stream starts
// a new one and gets no read-ahead (random access). Nothing is remembered beyond kStreams streams,
// and a stream that stops reading stops causing work: read-ahead is only planned from a read.
// A stream also tells which blocks it has passed (drop-behind: reader.h). Pure logic: no threads,
// no I/O; the Reader holds it under a mutex of its own.
#pragma once

#include <cstdint>
#include <functional>

namespace mibz2::engine {

struct ReadAheadLimits {
  uint64_t max_blocks = 8;          // most blocks queued ahead of one stream
  uint64_t max_bytes = 64 << 20;    // most decoded bytes queued ahead of one stream
  uint64_t initial_blocks = 2;      // window after the second sequential read
};

// Blocks [first, last] to queue ahead; empty when first > last.
struct ReadAheadPlan {
  uint64_t first = 1;
  uint64_t last = 0;
  int stream = -1;       // the stream it was planned for, and when that stream began (not_queued)
  uint64_t born = 0;
  // Blocks [passed_first, passed_last] the stream has now read to their end and left behind by more
  // than the slack its reads may arrive out of order with (planned only when on_read is given
  // block_end); empty when passed_first > passed_last.
  uint64_t passed_first = 1;
  uint64_t passed_last = 0;
  bool empty() const { return first > last; }
  bool passed_empty() const { return passed_first > passed_last; }
};

class ReadAheadPolicy {
 public:
  explicit ReadAheadPolicy(ReadAheadLimits limits) : limits_(limits) {}

  // A read of [offset, offset + length) that touched blocks [first_block, last_block].
  // block_size(i) gives the decoded size of block i; block_count the number of blocks.
  // block_end(i), when given, the decompressed offset where block i ends: the plan then also says
  // which blocks the stream passed (each block once per stream).
  ReadAheadPlan on_read(uint64_t offset, uint64_t length, uint64_t first_block, uint64_t last_block,
                        uint64_t block_count, const std::function<uint64_t(uint64_t)>& block_size,
                        const std::function<uint64_t(uint64_t)>& block_end = nullptr);
  // Blocks [from, plan.last] of `plan` were not queued (the reader gave up on them rather than
  // wait for a busy lock): the stream's next plan starts at `from` again, so that a sequential
  // reader does not meet them cold. Ignored if the stream has since been replaced.
  void not_queued(const ReadAheadPlan& plan, uint64_t from);

 private:
  static constexpr int kStreams = 8;
  struct Stream {
    uint64_t next_offset = 0;  // where the stream's next read is expected
    uint64_t window = 0;       // blocks of read-ahead earned
    uint64_t issued_to = 0;    // last block queued for it, plus one (0: none)
    uint64_t last_use = 0;     // for replacing the least recently used stream
    uint64_t born = 0;         // the clock when it began: tells a stream from its replacement
    uint64_t passed_to = 0;    // first block not yet reported passed (from the block it began in)
    bool live = false;
  };

  ReadAheadLimits limits_;
  Stream streams_[kStreams];
  uint64_t clock_ = 0;
};

}  // namespace mibz2::engine
