// Path helpers shared by the programs and the index store.
#pragma once

#include <string>

namespace mibz2::io {

// The absolute, symlink-resolved form of `path` (realpath), or `path` itself when it cannot be
// resolved (it does not exist yet, or a component is unreadable).
std::string absolute_path(const std::string& path);

}  // namespace mibz2::io
