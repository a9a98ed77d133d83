#include "fs/fuse_session_settings.h"

#include <algorithm>

namespace mibz2::fs {

FuseLoopSettings default_fuse_loop() {
  // A read no longer holds its request thread while its blocks decode (Reader::read_async), but a
  // stat or open of a file being indexed does wait in its thread (Catalog), so there is room for
  // many such waiters beside the readers. Request threads are started only when every one is
  // busy, so an idle mount has few. None ever ends: above max_idle_threads libfuse ends a thread
  // after its request, and under many readers that was a thread started and ended again and again
  // (the default of 10 did that; libfuse's own documentation discourages the setting for that cost).
  return FuseLoopSettings{64, 64, false};
}

void configure_connection(fuse_conn_info* conn) {
  // Large reads and deep kernel read-ahead: a FUSE round trip per 128 KiB would cap throughput
  // long before the decoders do. libfuse derives the kernel's max_pages from max_write.
  conn->max_readahead = std::max<unsigned>(conn->max_readahead, 1u << 20);
  conn->max_write = 1u << 20;
  // Reads of O_DIRECT and asynchronous readers are the kernel's "background" requests: past
  // max_background in flight, the kernel parks the next reader on a wait queue of its own before
  // the request even reaches our queue, and wakes it when one ends. At the 32 this asked before,
  // 64 readers cost two sleeps a read instead of one and lost a quarter of the throughput
  // (fio's context switches per read went from 1.0 to 1.6-2.0). What bounds the work
  // in flight is our request threads and the decoder pool's queue; the kernel only hands over.
  conn->max_background = std::max<unsigned>(conn->max_background, kMaxBackground);
  if (conn->capable & FUSE_CAP_CACHE_SYMLINKS) conn->want |= FUSE_CAP_CACHE_SYMLINKS;
  if (conn->capable & FUSE_CAP_ASYNC_READ) conn->want |= FUSE_CAP_ASYNC_READ;
}

}  // namespace mibz2::fs
