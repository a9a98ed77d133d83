#include "io/sequential_reads.h"

#include <algorithm>

namespace mibz2::io {

bool SequentialReads::sequential(const Stream& s) {
  return s.continued >= 2 && s.covered >= kSequentialBytes;
}

SequentialReads::Seen SequentialReads::note(uint64_t begin, uint64_t end) {
  ++tick_;
  for (Stream& s : streams_) {
    if (!s.live) continue;
    const uint64_t low = s.front > kOverlapBytes ? s.front - kOverlapBytes : 0;
    if (end > s.front && begin >= low && begin <= s.front + kGapBytes) {
      if (begin <= s.front + kOverlapBytes) ++s.continued;
      s.covered += end - std::max(begin, s.front);
      s.front = end;
      s.used = tick_;
      return {sequential(s), s.front, s.covered};
    }
  }
  for (Stream& s : streams_) {
    if (s.live && begin >= s.start && end <= s.front) {
      s.used = tick_;
      return {sequential(s), s.front, s.covered};
    }
  }
  Stream* victim = &streams_[0];
  for (Stream& s : streams_) {
    if (!s.live) {
      victim = &s;
      break;
    }
    if (s.used < victim->used) victim = &s;
  }
  *victim = {true, begin, end, end - begin, 0, tick_};
  return {false, end, end - begin};
}

}  // namespace mibz2::io
