// Whether a node is still what the kernel means by its number: found in the table, of the kind the
// operation needs, and standing for the file and content its source path holds now. Every
// operation finds its node through find_node(); the errno values are the same for all of them.
#pragma once

#include <sys/stat.h>

#include "fs/inode_table.h"
#include "index/block_index.h"
#include "io/source_root.h"

namespace mibz2::fs {

// What an operation needs its node to be.
enum class NodeNeed {
  kAny,
  kDirectory,  // lookup, opendir: ENOTDIR otherwise
  kLink,       // readlink (a symlink, or one to a compressed file): EINVAL otherwise
};

// The node numbered `ino`, into *node: 0, or ESTALE when the table no longer has it (forgotten, or
// a number from before the node was replaced and dropped: the kernel looks the name up again), or
// the errno of `need` when it is another kind of node.
int find_node(const InodeTable& inodes, fuse_ino_t ino, NodeNeed need, NodeRef* node);

// Whether the source as `st` shows it is the file and content the node stands for (and the node
// was not retired).
bool stands_for(const Node& node, const struct stat& st);

// lstat of the node's source, through SOURCE's descriptor; ESTALE when the path holds another
// file than the node's now, or another content of it. Returns an errno value.
int current(const io::SourceRoot& root, const Node& node, struct stat* st);

// Whether a decompressed file's index describes the content its node stands for.
bool describes(const index::BlockIndex& index, const Node& node);

}  // namespace mibz2::fs
