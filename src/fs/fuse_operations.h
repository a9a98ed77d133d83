// The C operations table handed to fuse_session_new (libfuse's low-level API): one trampoline per
// operation into Operations (operations.h), the one place that sends an operation's error reply,
// and the answers of everything a read-only mount refuses.
#pragma once

#include <fuse_lowlevel.h>

namespace mibz2::fs {

// The table; the session's userdata must point to an Operations* (null until the Filesystem is
// made: requests start only with the session loop; see mibz2fs_main.cc).
const fuse_lowlevel_ops& fuse_operations();

}  // namespace mibz2::fs
