// Which directory holds the block indexes when none is named (-o index_dir=, --index-dir), and
// the checks root's system-wide directory must pass.
//
// The rule (man/mibz2fs.1, "FILES"):
//   1. $XDG_CACHE_HOME/mibz2fs, when XDG_CACHE_HOME is an absolute path (for anyone: an explicit
//      choice, and how the test suite keeps its indexes apart);
//   2. else, with effective uid 0, /var/cache/mibz2fs: root's HOME is ignored, because a mount at
//      boot (fstab, systemd) has none and `sudo` may keep the calling user's, so that mounts from
//      a shell and at every boot share one directory and reuse its indexes;
//   3. else $HOME/.cache/mibz2fs;
//   4. else none: indexes live in memory only, and every mount indexes every file again.
#pragma once

#include <sys/types.h>

#include <string>

namespace mibz2::index {

// Root's index directory (rule 2).
inline constexpr const char* kSystemIndexDir = "/var/cache/mibz2fs";

// What a process's environment says (pointers as getenv returns them: null when unset).
struct IndexDirEnvironment {
  const char* xdg_cache_home = nullptr;
  const char* home = nullptr;
  bool root = false;  // effective uid 0
};

struct DefaultIndexDir {
  std::string dir;      // empty: none (rule 4)
  bool system = false;  // rule 2: dir is kSystemIndexDir and must pass ensure_private_dir
};

// The rule above, as a pure function of `env`.
DefaultIndexDir choose_default_index_dir(const IndexDirEnvironment& env);
// The rule for this process (its environment and effective uid).
DefaultIndexDir default_index_dir_of_process();

// A directory named by the user (--index-dir, -o index_dir=, the Python module's index_dir=) as
// IndexStore must be given it: made absolute from the working directory, without resolving a
// symlink. The store opens the directory named without following a symlink as its last component
// and refuses one (index_store.h); resolving the path first (realpath) would hand it the link's
// target, and indexes would go where the link points after all.
std::string named_index_dir(const std::string& given);

// Creates `dir` (its last component only, mode 0700) if it is missing, then checks that it is a
// directory, not a symlink, owned by `owner`, and writable by no one else: a directory where
// others could plant or swap index files, or that points elsewhere, is refused. Returns "" when
// the directory is fit, else why not (a sentence naming it).
std::string ensure_private_dir(const std::string& dir, uid_t owner);

}  // namespace mibz2::index
