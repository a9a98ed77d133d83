// The attributes the mount shows for a node: its source's, fresh from the source (node_checks.h),
// with the node's number, and for a decompressed file the size its index gives (waiting for the
// index, or saying that the size is not final yet), for a link to one the length of its shown
// target.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <stop_token>
#include <string>

#include "catalog/catalog.h"
#include "fs/inode_table.h"
#include "io/source_root.h"

namespace mibz2::fs {

class NodeAttributes {
 public:
  NodeAttributes(const io::SourceRoot& root, catalog::Catalog& catalog) : root_(root), catalog_(catalog) {}

  // The attributes of a node. For a decompressed file with `wait` this waits for its index (and
  // fails with EIO if there can be none, EINTR when `stop` is requested first); without, *final
  // says whether the size is real. Returns an errno value.
  int of(Node& node, struct stat* st, bool wait, bool* final, std::stop_token stop = {});
  // The same, from the source's attributes already in *st (fresh, and of the node's file).
  int shown(Node& node, struct stat* st, bool wait, bool* final, std::stop_token stop = {});
  // What a symlink node points to in the mount.
  int link_target(Node& node, std::string* target);

 private:
  const io::SourceRoot& root_;
  catalog::Catalog& catalog_;
};

// A decompressed file's size, blocks and preferred I/O size in *st, from its decompressed size.
void show_decompressed_size(struct stat* st, uint64_t size);

}  // namespace mibz2::fs
