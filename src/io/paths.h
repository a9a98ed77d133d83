// Path helpers shared by the programs and the index store.
#pragma once

#include <string>

namespace mibz2::io {

// The absolute, symlink-resolved form of `path` (realpath). When it cannot be resolved (it does
// not exist yet, or a component is unreadable), `path` made absolute against the current directory
// without touching the file system ("a/../b" stays as written): a daemon changes its directory to
// "/" and must not read a relative path against that.
std::string absolute_path(const std::string& path);

}  // namespace mibz2::io
