// Inode numbers of the mount: one node per source file (its path, and the device and inode it had
// when the node was made), numbered in order of discovery and never reused while mounted (64-bit
// numbers: a reused number would need generation numbers, these never run out). A path that comes
// to hold another file (a download renamed over the old one, a directory replaced by a symlink)
// gets a new node; the old one answers ESTALE, and the kernel looks the name up again.
//
// Nodes live as long as the kernel references them: each lookup the kernel is answered with counts
// one, FUSE's forget gives them back, and a node whose count falls to zero leaves the table (with
// its catalog entry and index, once no open file or running operation still holds it: nodes are
// shared). A mount over a rotating mirror, whose dumps are added and deleted for months, keeps
// nodes for what the kernel still knows, not for everything it ever saw. Nodes made without a
// lookup (the tree walk, plain readdir) stay until a lookup and its forget.
#pragma once

#include <fuse_lowlevel.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/catalog.h"
#include "fs/listing_stamp.h"
#include "fs/name_mapping.h"
#include "io/source_root.h"

namespace mibz2::fs {

// kLinkToDecompressed: a symlink to a compressed file, shown pointing to its decompressed name.
enum class NodeKind { kDirectory, kRegular, kSymlink, kDecompressed, kLinkToDecompressed };

// kind, rel, source, the identity and file are fixed when the node is made.
struct Node {
  fuse_ino_t ino = 0;
  NodeKind kind = NodeKind::kRegular;
  std::string rel;                          // path relative to SOURCE ("" for SOURCE itself)
  std::string source;                       // absolute path in the source tree (for messages)
  uint64_t device = 0;                      // the source file's st_dev and st_ino
  uint64_t inode = 0;
  uint64_t lookups = 0;                     // guarded by the table's lock
  engine::FileRef file;                      // kDecompressed only: its entry in the catalog

  // What the kernel was last given at an open (to tell whether its page cache is still valid).
  std::atomic<uint64_t> seen_ctime_ns{0};   // the ctime the kernel was last given at an open (0: none)
  std::mutex seen_mu;  // a leaf lock
  bool seen_by_kernel = false;            // guarded by seen_mu
  index::SourceIdentity seen_identity;    // guarded by seen_mu

  // Directories: the mirrored listing, rebuilt when the source directory changed (listing_stamp.h).
  std::mutex listing_mu;  // a leaf lock, never held while a directory is read
  ListingStamp listing_stamp;               // guarded by listing_mu
  std::shared_ptr<const std::vector<ShownEntry>> listing;  // guarded by listing_mu
};

using NodeRef = std::shared_ptr<Node>;

class InodeTable {
 public:
  // The root node is SOURCE (`root`, with its device and inode); decompressed files' nodes get
  // their entries from `catalog`.
  InodeTable(const io::SourceRoot& root, uint64_t root_device, uint64_t root_inode, engine::Catalog& catalog);

  // The node for the file at `rel` shown as `kind`, with that device and inode, created on first
  // sight. A path whose kind or file changed gets a new node; the old number stays valid while
  // the kernel holds it.
  NodeRef get_or_create(const std::string& rel, NodeKind kind, uint64_t device, uint64_t inode);
  // The same, counting one lookup by the kernel (under the table's lock, so that a concurrent
  // forget cannot drop the node in between).
  NodeRef lookup(const std::string& rel, NodeKind kind, uint64_t device, uint64_t inode);
  // The kernel forgets `count` lookups of `ino` (or a lookup never reached it); at zero the node
  // leaves the table. The root is never dropped.
  void forget(fuse_ino_t ino, uint64_t count);
  // The node with this number, or null.
  NodeRef find(fuse_ino_t ino) const;
  size_t size() const;
  // The catalog entries of the decompressed files the paths hold now, as far as the mount has seen
  // them (the tree walk's, and every lookup's): one per path, the newest node's.
  std::vector<engine::FileRef> current_decompressed_files() const;

 private:
  NodeRef get_or_create_locked(const std::string& rel, NodeKind kind, uint64_t device, uint64_t inode);

  const io::SourceRoot& root_;
  engine::Catalog& catalog_;
  mutable std::mutex mu_;  // a leaf lock: guards the maps, the counter and nodes' lookups; no I/O under it
  fuse_ino_t next_ino_ = FUSE_ROOT_ID + 1;
  std::unordered_map<fuse_ino_t, NodeRef> by_ino_;
  std::unordered_map<std::string, fuse_ino_t> by_rel_;
};

}  // namespace mibz2::fs
