// Reading one directory of the source tree: its entries with their types, and for every name that
// looks compressed, whether the content really starts like a bzip2 stream.
#pragma once

#include <string>
#include <vector>

#include "fs/name_mapping.h"

namespace mibz2::fs {

// The entries of `dir` (without . and ..; devices, fifos and sockets left out). Returns an errno
// value, 0 on success.
int list_source_directory(const std::string& dir, std::vector<SourceEntry>* out);

// dir + "/" + name (no doubled slash for the root).
std::string child_path(const std::string& dir, const std::string& name);

// What a symlink shown decompressed points to in the mount: its (relative) target with the last
// component renamed as the mount shows that file ("x.json.bz2" -> "x.json"), unless a real entry
// next to the target has that name (then the target is shown compressed, under its own name).
std::string shown_link_target(const std::string& link_path, const std::string& target);

}  // namespace mibz2::fs
