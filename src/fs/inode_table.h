// Inode numbers of the mount: one node per source file and content (its path, and the device,
// inode, size, mtime and ctime it had when the node was made: source_stamp.h), numbered in order
// of discovery and never reused while mounted (64-bit numbers: a reused number would need
// generation numbers, these never run out). A path that comes to hold another file (a download
// renamed over the old one, a directory replaced by a symlink) or another content of the same file
// (rewritten in place) gets a new node; the old one answers ESTALE to a new open or stat, so the
// kernel looks the name up again and lands on the new node, while descriptors already open on the
// old one keep its pages: the kernel's page cache is per node, so it never mixes two contents.
//
// Nodes live as long as the kernel references them: each lookup the kernel is answered with counts
// one, FUSE's forget gives them back, and a node whose count falls to zero leaves the table (with
// its catalog entry and index, once no open file or running operation still holds it: nodes are
// shared). A mount over a rotating mirror, whose dumps are added and deleted for months, keeps
// nodes for what the kernel still knows, not for everything it ever saw. Nodes made without a
// lookup (the tree walk, plain readdir) stay until a lookup and its forget, or until a newer node
// takes their path.
//
// A decompressed file's node is also replaced when the index it was shown from is found not to
// describe the file (retire()): the node is retired, answers ESTALE as a stale node does, and its
// path gets a new node (a new number, so a new page cache and new attributes in the kernel) at
// the next lookup, shown from the index built again.
#pragma once

#include <fuse_lowlevel.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "catalog/catalog.h"
#include "catalog/name_mapping.h"
#include "fs/listing_stamp.h"
#include "io/source_root.h"
#include "io/source_stamp.h"

namespace mibz2::fs {

// kLinkToDecompressed: a symlink to a compressed file, shown pointing to its decompressed name.
enum class NodeKind { kDirectory, kRegular, kSymlink, kDecompressed, kLinkToDecompressed };

// The stamp a node of `kind` is bound to, of a source file stamped `now`: regular and decompressed
// files by their content too, the others by the file alone.
io::SourceStamp bound_stamp(NodeKind kind, const io::SourceStamp& now);

// kind, rel, source, stamp and file are fixed when the node is made.
struct Node {
  fuse_ino_t ino = 0;
  NodeKind kind = NodeKind::kRegular;
  std::string rel;                          // path relative to SOURCE ("" for SOURCE itself)
  std::string source;                       // absolute path in the source tree (for messages)
  io::SourceStamp stamp;                        // the source it stands for (bound_stamp)
  uint64_t lookups = 0;                     // guarded by the table's lock
  catalog::FileRef file;                     // kDecompressed only: its entry in the catalog (shared
                                            // by the nodes of one source file's successive contents)
  std::atomic<bool> retired{false};         // InodeTable::retire(): set once, never cleared

  // Directories: the mirrored listing, rebuilt when the source directory changed (listing_stamp.h).
  std::mutex listing_mu;  // a leaf lock, never held while a directory is read
  ListingStamp listing_stamp;               // guarded by listing_mu
  std::shared_ptr<const std::vector<catalog::ShownEntry>> listing;  // guarded by listing_mu
};

using NodeRef = std::shared_ptr<Node>;

class InodeTable {
 public:
  // The root node is SOURCE (`root`, stamped `root_stamp`); decompressed files' nodes get their
  // entries from `catalog`.
  InodeTable(const io::SourceRoot& root, const io::SourceStamp& root_stamp, catalog::Catalog& catalog);

  // The node for the file at `rel` shown as `kind`, as stamped `now`, created on first sight. A
  // path whose kind, file or content changed gets a new node (a decompressed file rewritten in
  // place keeps its catalog entry, which notices the change itself); the old number stays valid
  // while the kernel holds it.
  NodeRef get_or_create(const std::string& rel, NodeKind kind, const io::SourceStamp& now);
  // The same, counting one lookup by the kernel (under the table's lock, so that a concurrent
  // forget cannot drop the node in between).
  NodeRef lookup(const std::string& rel, NodeKind kind, const io::SourceStamp& now);
  // The number of the path's current node if it stands for this file (whatever its content now),
  // else of a node made for it: a listing's inode numbers, which bind nothing.
  fuse_ino_t number_of(const std::string& rel, NodeKind kind, const io::SourceStamp& listed);
  // What the kernel must drop of a retired node: its pages and attributes (ino) and the name it
  // has in its directory (`name` in `parent`; parent 0 when the table holds no node for the
  // directory, then the kernel has no entry for it either).
  struct Retired {
    fuse_ino_t ino = 0;
    fuse_ino_t parent = 0;
    std::string name;
  };
  // The index `file` was shown from was found not to describe it: the node its path holds for
  // `file` now, if any, is retired (see the top of this file). Returns what the kernel must drop,
  // or nullopt (no such node, or retired already).
  std::optional<Retired> retire(const catalog::FileRef& file);
  // The kernel forgets `count` lookups of `ino` (or a lookup never reached it); at zero the node
  // leaves the table and is returned (for the caller to release, after the table's lock). The
  // root is never dropped.
  NodeRef forget(fuse_ino_t ino, uint64_t count);
  // The node with this number, or null.
  NodeRef find(fuse_ino_t ino) const;
  // The node the path `rel` has now (the newest made for it), or null.
  NodeRef at(const std::string& rel) const;
  // Every node the kernel holds (looked up and not forgotten), the root included.
  std::vector<NodeRef> held_nodes() const;
  size_t size() const;
  // The catalog entries of the decompressed files the paths hold now, as far as the mount has seen
  // them (the tree walk's, and every lookup's): one per path, the newest node's.
  std::vector<catalog::FileRef> current_decompressed_files() const;

 private:
  // A node of the path that the kernel never looked up, replaced by the new one, goes to *dropped
  // (for the caller to release after the lock).
  NodeRef get_or_create_locked(const std::string& rel, NodeKind kind, const io::SourceStamp& now, NodeRef* dropped);
  // The catalog entry for the decompressed file at `rel`: the one its other nodes share while one
  // of them lives (the catalog tells a new content of the file from a chmod, which needs no new
  // index), else a new one.
  catalog::FileRef catalog_entry_locked(const std::string& rel, const std::string& source, const io::SourceStamp& stamp);

  const io::SourceRoot& root_;
  catalog::Catalog& catalog_;
  // Guards the maps, the counter and nodes' lookups; no I/O under it. Held only while taking the
  // Catalog's own mutex (Catalog::add, in catalog_entry_locked), which never takes this one.
  mutable std::mutex mu_;
  fuse_ino_t next_ino_ = FUSE_ROOT_ID + 1;
  std::unordered_map<fuse_ino_t, NodeRef> by_ino_;
  std::unordered_map<std::string, fuse_ino_t> by_rel_;
  std::unordered_map<std::string, std::weak_ptr<catalog::CatalogFile>> files_;  // by path: the entry its nodes share
  size_t files_pruned_at_ = 0;  // files_.size() after the last pruning of expired entries
  static constexpr size_t kRecentlyForgotten = 4;
  std::deque<catalog::FileRef> recently_forgotten_;  // the catalog entries of the last nodes forgotten (forget())
};

}  // namespace mibz2::fs
