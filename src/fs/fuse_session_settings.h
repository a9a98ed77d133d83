// How a mibz2fs session talks to the kernel: the request loop's thread counts and the
// connection's settings agreed in init. Apart from Filesystem so that the benchmark's trivial
// in-memory FUSE file (testtools/fuse_memfile.cc) runs with exactly the same ones.
#pragma once

#include <fuse_lowlevel.h>

namespace mibz2::fs {

struct FuseLoopSettings {
  unsigned max_threads;       // request threads at most
  unsigned max_idle_threads;  // idle request threads kept; the ones above end after their request
  bool clone_fd;              // a /dev/fuse descriptor of its own for each request thread
};

// Requests the kernel lets be in flight to us at once before it makes readers wait on its side.
inline constexpr unsigned kMaxBackground = 1024;

// The defaults of mibz2fs's -o max_threads, max_idle_threads and clone_fd.
FuseLoopSettings default_fuse_loop();

// What init asks of the kernel: large reads, deep read-ahead, asynchronous reads.
void configure_connection(fuse_conn_info* conn);

}  // namespace mibz2::fs
