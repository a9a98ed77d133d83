// What a directory of the mount lists: its source directory's entries mapped to the names shown
// (name_mapping.h), kept on the directory's node and made again when the source directory changed
// (listing_stamp.h); and how a listed entry is found and typed.
#pragma once

#include <sys/stat.h>

#include <memory>
#include <vector>

#include "catalog/name_mapping.h"
#include "fs/inode_table.h"
#include "io/source_root.h"

namespace mibz2::fs {

using Listing = std::shared_ptr<const std::vector<catalog::ShownEntry>>;

// The mirrored listing of a directory node (rebuilt when the source directory changed), into
// *out; the directory's attributes in *dir_st if given. Returns an errno value (ESTALE for a
// stale node, ENOTDIR when the path holds no directory now).
int listing(const io::SourceRoot& root, Node& dir, Listing* out, struct stat* dir_st = nullptr);

// The entry shown as `name`, or null (entries are sorted by name, as map_directory returns them).
const catalog::ShownEntry* find_shown(const std::vector<catalog::ShownEntry>& entries, const char* name);

// The kind of node an entry is shown as.
NodeKind kind_of(const catalog::ShownEntry& e);

// The file type a listed entry shows (a plain readdir's d_type).
mode_t listed_mode(const catalog::ShownEntry& e);

// Whether the source file `st` describes is still of the type the entry was listed with.
bool same_type(const catalog::ShownEntry& e, const struct stat& st);

}  // namespace mibz2::fs
