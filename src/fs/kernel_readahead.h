// The kernel's read-ahead for the mount's files: how much of a file the kernel asks for ahead of a
// sequential reader, and so how large its FUSE read requests are.
//
// FUSE_INIT's max_readahead can only lower it: the kernel takes the smaller of it and the read-ahead
// of the mount's backing device info (bdi), which starts at the system's default of 128 KiB. So
// without this a sequential `cat` of the mount reaches mibz2fs as 128 KiB reads, eight round trips
// (two context switches each) for what one 1 MiB read brings. The bdi's read-ahead is set through
// /sys/class/bdi/MAJOR:MINOR/read_ahead_kb, which only root may write.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace mibz2::fs {

// Sets the read-ahead of the FUSE mount at `mountpoint` (absolute, symlinks resolved, as
// /proc/self/mountinfo shows it) to `bytes`, rounded down to KiB. Fails (nothing changed) when no
// FUSE file system is mounted there or the bdi's setting cannot be written (not root: EACCES).
// Reads no file of the mount, so it may run before the mount answers requests (in FUSE_INIT).
base::Status set_kernel_readahead(const std::string& mountpoint, uint32_t bytes);

}  // namespace mibz2::fs
