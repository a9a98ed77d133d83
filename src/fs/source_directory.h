// Reading one directory of the source tree, through the one safe way of reaching SOURCE
// (io::SourceRoot): its entries with their types and identities, and for every name that looks
// compressed, whether the content really starts like a bzip2 stream.
#pragma once

#include <string>
#include <vector>

#include "catalog/name_mapping.h"
#include "io/source_root.h"

namespace mibz2::fs {

// The entries of the directory `dir` (relative to SOURCE; "" is SOURCE), without . and ..;
// devices, fifos and sockets left out. Returns an errno value, 0 on success. *sure, if given, is
// false when the head of a file whose name looks compressed could not be read (a read error): it
// is taken for bzip2 by its name, and a listing that keeps it should not be reused.
int list_source_directory(const io::SourceRoot& root, const std::string& dir, std::vector<catalog::SourceEntry>* out,
                          bool* sure = nullptr);

// What a symlink shown decompressed points to in the mount: its (relative) target with the last
// component renamed as the mount shows the file it names there ("x.json.bz2" -> "x.json"), or the
// target unchanged when the mount shows that file under its own name (a collision's loser, a file
// that is not bzip2) or it is not a file beneath SOURCE.
std::string shown_link_target(const io::SourceRoot& root, const std::string& link, const std::string& target);

}  // namespace mibz2::fs
