// Inode numbers of the mount: one node per source file (its path, and the device and inode it had
// when the node was made), numbered in order of discovery and never reused while mounted, so an
// inode number is stable for the life of the mount. A path that comes to hold another file (a
// download renamed over the old one, a directory replaced by a symlink) gets a new node; the old
// one answers ESTALE, and the kernel looks the name up again. Nodes are never freed while mounted
// (a dump tree is small next to its data); lookup counts are kept for FUSE's protocol and for
// diagnostics.
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
  std::atomic<uint64_t> lookups{0};
  engine::FileRef file;                      // kDecompressed only: its entry in the catalog

  // What the kernel was last given at an open (to tell whether its page cache is still valid).
  std::atomic<uint64_t> seen_ctime_ns{0};   // the ctime the kernel was last given at an open (0: none)
  std::mutex seen_mu;  // a leaf lock
  bool seen_by_kernel = false;            // guarded by seen_mu
  index::SourceIdentity seen_identity;    // guarded by seen_mu

  // Directories: the mirrored listing, rebuilt when the source directory's mtime changes.
  std::mutex listing_mu;  // a leaf lock, never held while a directory is read
  uint64_t listing_mtime_ns = UINT64_MAX;   // guarded by listing_mu
  std::shared_ptr<const std::vector<ShownEntry>> listing;  // guarded by listing_mu
};

class InodeTable {
 public:
  // The root node is SOURCE (`root`, with its device and inode); decompressed files' nodes get
  // their entries from `catalog`.
  InodeTable(const io::SourceRoot& root, uint64_t root_device, uint64_t root_inode, engine::Catalog& catalog);

  // The node for the file at `rel` shown as `kind`, with that device and inode, created on first
  // sight. A path whose kind or file changed gets a new node; the old number stays valid.
  Node& get_or_create(const std::string& rel, NodeKind kind, uint64_t device, uint64_t inode);
  // The node with this number, or null.
  Node* find(fuse_ino_t ino);
  Node& root() { return *find(FUSE_ROOT_ID); }
  size_t size() const;
  // The catalog entries of the decompressed files the paths hold now, as far as the mount has seen
  // them (the tree walk's, and every lookup's): one per path, the newest node's.
  std::vector<engine::FileRef> current_decompressed_files() const;

 private:
  const io::SourceRoot& root_;
  engine::Catalog& catalog_;
  mutable std::mutex mu_;  // a leaf lock: guards both maps; never held across I/O
  std::vector<std::unique_ptr<Node>> by_ino_;  // index = ino (0 unused)
  std::unordered_map<std::string, fuse_ino_t> by_rel_;
};

}  // namespace mibz2::fs
