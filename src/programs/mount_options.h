// The command line and -o options of mibz2fs, parsed with fuse_opt so that they work the same
// from a shell and from /etc/fstab (mount.fuse3 passes "-o opt,opt"). Sizes and thread counts
// follow the rules of base/settings.h, the same as mibz2's.
#pragma once

#include <fuse_lowlevel.h>

#include <string>
#include <vector>

#include "fs/filesystem_options.h"
#include "fs/fuse_session_settings.h"

namespace mibz2::programs {

struct MountOptions {
  fs::FilesystemOptions fs;  // SOURCE, MOUNTPOINT, threads, cache_size, index_dir
  bool wait_index = false;
  std::string log_level = "info";  // a name spdlog knows: trace, debug, info, warn, error, critical, off
  bool foreground = false;         // -f (and -d)
  bool debug = false;              // -d, -o debug: libfuse logs every request
  bool single_thread = false;      // -s
  bool clone_fd = fs::default_fuse_loop().clone_fd;  // -o clone_fd
  // FUSE request threads (fs/fuse_session_settings.h says why these defaults).
  unsigned max_fuse_threads = fs::default_fuse_loop().max_threads;  // -o max_threads
  // -o max_idle_threads; when not given, max_fuse_threads as given (no request thread ever ends).
  unsigned max_idle_fuse_threads = fs::default_fuse_loop().max_idle_threads;
};

struct MountCommandLine {
  enum class Outcome {
    kMount,    // *options and *fuse_args are filled
    kHelp,     // print mount_help()
    kVersion,  // print mount_version()
    kError,    // print error
  };
  Outcome outcome = Outcome::kError;
  std::string error;                  // kError: one line, without the "mibz2fs: " prefix
  std::vector<std::string> warnings;  // kMount: one line each, without the prefix
};

// Parses argv (argv[0] included). Takes mibz2fs's own options, SOURCE, MOUNTPOINT, help and
// version; leaves the FUSE and mount options in *fuse_args for fuse_session_new (which rejects
// the ones it does not know), adding the ones mibz2fs always wants (ro, default_permissions,
// fsname, subtype). *fuse_args is to be freed with fuse_opt_free_args whatever the outcome.
// Prints nothing: what libfuse's option parser would print becomes the error. Paths are made
// absolute (io::absolute_path) but not checked: see check_mount_paths; a URL SOURCE is kept as
// given.
MountCommandLine parse_mount_options(int argc, char** argv, MountOptions* options, fuse_args* fuse_args);

// A message of libfuse's in mibz2fs's words: "fuse: unknown option(s): `-o x'\n" becomes
// "unknown option(s): '-o x'" (to be said after "mibz2fs: ").
std::string fuse_message_in_our_words(std::string message);

// The text of --help and of --version (the libfuse version included).
std::string mount_help();
std::string mount_version();

// A one-line problem with SOURCE or MOUNTPOINT (missing, not a directory, already mounted, one
// inside the other), or empty when both are usable. A URL SOURCE is not looked at here (its
// first request is fs::open_mount_source's).
std::string check_mount_paths(const MountOptions& options);

}  // namespace mibz2::programs
