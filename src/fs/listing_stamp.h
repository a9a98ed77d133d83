// When a directory's mirrored listing may be served again without reading the directory: while
// its mtime and ctime are what they were when the listing was read. Two rules make that safe:
// - both times, not the mtime alone: a tool can put an mtime back (touch -r, rsync -t), never the
//   ctime;
// - the racy-git rule: a listing read while the directory's times were within one timestamp tick
//   of the clock is not reusable, since a second change in that same tick would leave both times
//   as they are. A tick is taken as 2 s, the coarsest in use (FAT); finer file systems only pay a
//   re-read of a directory changed in the last 2 s.
#pragma once

#include <sys/stat.h>

#include <cstdint>

#include "io/source_stamp.h"

namespace mibz2::fs {

inline constexpr uint64_t kTimestampTickNs = 2'000'000'000;

struct ListingStamp {
  uint64_t mtime_ns = 0;
  uint64_t ctime_ns = 0;
  bool reusable = false;

  // The stamp of a listing read after `st` was taken, the clock (CLOCK_REALTIME) reading `now_ns`
  // before the read began.
  static ListingStamp of(const struct stat& st, uint64_t now_ns) {
    ListingStamp s{io::ns_of(st.st_mtim), io::ns_of(st.st_ctim), false};
    const uint64_t newest = s.mtime_ns > s.ctime_ns ? s.mtime_ns : s.ctime_ns;
    s.reusable = newest + kTimestampTickNs < now_ns;
    return s;
  }
  bool matches(const struct stat& st) const {
    return reusable && mtime_ns == io::ns_of(st.st_mtim) && ctime_ns == io::ns_of(st.st_ctim);
  }
};

}  // namespace mibz2::fs
