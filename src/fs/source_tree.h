// Walking the source tree as the mount shows it: every file shown decompressed, in every
// directory below SOURCE (symlinks are never followed).
#pragma once

#include <functional>
#include <string>

#include "catalog/name_mapping.h"
#include "io/source_root.h"

namespace mibz2::fs {

// Calls `file(rel, entry)` for every regular file the mount shows decompressed below SOURCE
// (rel: its path relative to SOURCE), breadth first; stops early when `stop()` returns true.
// Unreadable directories are skipped.
void for_each_decompressed_file(const io::SourceRoot& root, const std::function<bool()>& stop,
                                const std::function<void(const std::string& rel, const catalog::ShownEntry& entry)>& file);

}  // namespace mibz2::fs
