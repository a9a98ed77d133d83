#include "engine/readahead.h"

#include <algorithm>

namespace mibz2::engine {

ReadAheadPlan ReadAheadPolicy::on_read(uint64_t offset, uint64_t length, uint64_t first_block, uint64_t last_block,
                                       uint64_t block_count, const std::function<uint64_t(uint64_t)>& block_size,
                                       const std::function<uint64_t(uint64_t)>& block_end) {
  ++clock_;
  // Reads of one stream may arrive slightly out of order (the kernel issues read-ahead
  // asynchronously and FUSE serves it on several threads), so "continues" allows some slack.
  const uint64_t slack = std::max<uint64_t>(4 * length, 1 << 20);
  Stream* match = nullptr;
  for (Stream& s : streams_) {
    if (!s.live) continue;
    const uint64_t lo = s.next_offset > slack ? s.next_offset - slack : 0;
    if (offset >= lo && offset <= s.next_offset + slack) {
      match = &s;
      break;
    }
  }
  if (!match) {
    Stream* victim = &streams_[0];
    for (Stream& s : streams_) {
      if (!s.live) {
        victim = &s;
        break;
      }
      if (s.last_use < victim->last_use) victim = &s;
    }
    *victim = Stream{offset + length, 0, 0, clock_, clock_, first_block, true};
    return {};
  }

  match->last_use = clock_;
  match->next_offset = std::max(match->next_offset, offset + length);
  match->window = match->window == 0 ? limits_.initial_blocks : std::min(match->window * 2, limits_.max_blocks);

  // Queue blocks after the last one read, up to the window, within the byte bound, skipping what
  // this stream already queued.
  ReadAheadPlan plan;
  plan.first = std::max(last_block + 1, match->issued_to);
  uint64_t bytes = 0;
  uint64_t last = last_block;
  for (uint64_t b = last_block + 1; b < block_count && b <= last_block + match->window; ++b) {
    bytes += block_size(b);
    if (bytes > limits_.max_bytes && b > last_block + 1) break;
    last = b;
  }
  plan.last = last;
  plan.stream = static_cast<int>(match - streams_);
  plan.born = match->born;
  if (!plan.empty()) match->issued_to = plan.last + 1;

  // Passed: the blocks that end at least a slack before this read, so that a read of this stream
  // still arriving late (within the slack, as matched above) finds its block where it was.
  if (block_end && offset > slack) {
    const uint64_t behind = offset - slack;
    const uint64_t from = match->passed_to;
    while (match->passed_to < block_count && match->passed_to < first_block && block_end(match->passed_to) <= behind)
      ++match->passed_to;
    if (match->passed_to > from) {
      plan.passed_first = from;
      plan.passed_last = match->passed_to - 1;
    }
  }
  return plan;
}

void ReadAheadPolicy::not_queued(const ReadAheadPlan& plan, uint64_t from) {
  if (plan.stream < 0 || plan.stream >= kStreams) return;
  Stream& s = streams_[plan.stream];
  if (s.live && s.born == plan.born) s.issued_to = std::min(s.issued_to, from);
}

}  // namespace mibz2::engine
