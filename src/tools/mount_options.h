// The command line and -o options of mibz2fs, parsed with fuse_opt so that they work the same
// from a shell and from /etc/fstab (mount.fuse3 passes "-o opt,opt").
#pragma once

#include <fuse_lowlevel.h>

#include <cstdint>
#include <string>

#include "fs/filesystem.h"

namespace mibz2::tools {

struct MountOptions {
  fs::FilesystemOptions fs;  // SOURCE, MOUNTPOINT, threads, cache_size, index_dir
  bool wait_index = false;
  std::string log_level = "info";
  bool foreground = false;
  bool debug = false;
  bool single_thread = false;
  unsigned max_fuse_threads = 64;  // FUSE request threads (reads block while blocks decode)
};

enum class ParseOutcome { kMount, kExitOk, kExitError };

// Parses argv. Consumes the options that are ours and leaves the FUSE ones in *fuse_args (to be
// given to fuse_session_new), adding the ones mibz2fs always wants (ro, default_permissions,
// fsname, subtype). Prints help, version or a one-line error itself.
ParseOutcome parse_mount_options(int argc, char** argv, MountOptions* options, fuse_args* fuse_args);

// A one-line problem with SOURCE or MOUNTPOINT (missing, not a directory, already mounted), or
// empty when both are usable.
std::string check_mount_paths(const MountOptions& options);

}  // namespace mibz2::tools
