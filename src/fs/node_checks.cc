#include "fs/node_checks.h"

#include <cerrno>

namespace mibz2::fs {

int find_node(const InodeTable& inodes, fuse_ino_t ino, NodeNeed need, NodeRef* node) {
  *node = inodes.find(ino);
  if (!*node) return ESTALE;
  const NodeKind kind = (*node)->kind;
  switch (need) {
    case NodeNeed::kAny: return 0;
    case NodeNeed::kDirectory: return kind == NodeKind::kDirectory ? 0 : ENOTDIR;
    case NodeNeed::kLink: return kind == NodeKind::kSymlink || kind == NodeKind::kLinkToDecompressed ? 0 : EINVAL;
  }
  return EINVAL;
}

int current(const io::SourceRoot& root, const Node& node, struct stat* st) {
  if (const int err = root.lstat(node.rel, st)) return err;
  return stands_for(node, *st) ? 0 : ESTALE;
}

// The path holds another file than the one the kernel asked about, or another content of it, or the
// node was retired: the kernel must look the name up again (and gets a new node, with a page cache
// of its own).
bool stands_for(const Node& node, const struct stat& st) {
  return !node.retired && bound_stamp(node.kind, io::SourceStamp::of(st)) == node.stamp;
}

// Whether an index describes the content a node stands for (its size, mtime and inode; the
// catalog confirms an index again when the ctime alone changed).
bool describes(const index::BlockIndex& index, const Node& node) {
  return index.source.size == node.stamp.size && index.source.mtime_ns == node.stamp.mtime_ns &&
         index.source.inode == node.stamp.inode;
}

}  // namespace mibz2::fs
