// Walking the source tree as the mount shows it: every file shown decompressed, in every
// directory below SOURCE (symlinks to directories are not followed).
#pragma once

#include <functional>
#include <string>

namespace mibz2::fs {

// Calls `file(path)` for every regular file the mount shows decompressed below `root`, breadth
// first; stops early when `stop()` returns true. Unreadable directories are skipped.
void for_each_decompressed_file(const std::string& root, const std::function<bool()>& stop,
                                const std::function<void(const std::string& path)>& file);

}  // namespace mibz2::fs
