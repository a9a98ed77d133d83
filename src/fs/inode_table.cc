#include "fs/inode_table.h"

#include <algorithm>

namespace mibz2::fs {

SourceStamp bound_stamp(NodeKind kind, const SourceStamp& now) {
  return kind == NodeKind::kRegular || kind == NodeKind::kDecompressed ? now : now.file_only();
}

InodeTable::InodeTable(const io::SourceRoot& root, const SourceStamp& root_stamp, engine::Catalog& catalog)
    : root_(root), catalog_(catalog) {
  auto node = std::make_shared<Node>();
  node->ino = FUSE_ROOT_ID;
  node->kind = NodeKind::kDirectory;
  node->source = root.path();
  node->stamp = bound_stamp(NodeKind::kDirectory, root_stamp);
  node->lookups = 1;  // the kernel holds the root for the life of the mount
  by_rel_.emplace(std::string(), FUSE_ROOT_ID);
  by_ino_.emplace(FUSE_ROOT_ID, std::move(node));
}

NodeRef InodeTable::get_or_create_locked(const std::string& rel, NodeKind kind, const SourceStamp& now,
                                         NodeRef* dropped) {
  const SourceStamp stamp = bound_stamp(kind, now);
  engine::FileRef file;
  if (auto it = by_rel_.find(rel); it != by_rel_.end()) {
    const auto old = by_ino_.find(it->second);
    const NodeRef was = old->second;
    if (was->kind == kind && was->stamp == stamp) return was;
    // The path now holds something else, or the same file with another content: it gets a new
    // node, so that every node's kind, stamp and catalog entry stay fixed for its life and need no
    // lock to read, and the kernel never keeps one page cache for two contents. The same file keeps
    // its catalog entry: the catalog tells a new content from a chmod (which needs no new index).
    if (was->kind == kind && was->stamp.same_file(stamp)) file = was->file;
    // A node the kernel never looked up (the tree walk's, a plain readdir's) would never be
    // forgotten: it goes now.
    if (was->lookups == 0 && was->ino != FUSE_ROOT_ID) {
      *dropped = was;
      by_ino_.erase(old);
    }
  }
  auto node = std::make_shared<Node>();
  node->ino = next_ino_++;
  node->kind = kind;
  node->rel = rel;
  node->source = root_.absolute(rel);
  node->stamp = stamp;
  if (kind == NodeKind::kDecompressed)
    node->file = file ? std::move(file) : catalog_.add(node->source, stamp.device, stamp.inode);
  by_rel_[rel] = node->ino;
  by_ino_.emplace(node->ino, node);
  return node;
}

NodeRef InodeTable::get_or_create(const std::string& rel, NodeKind kind, const SourceStamp& now) {
  NodeRef dropped;  // released after the lock: the last reference may free an index
  std::lock_guard lk(mu_);
  return get_or_create_locked(rel, kind, now, &dropped);
}

NodeRef InodeTable::lookup(const std::string& rel, NodeKind kind, const SourceStamp& now) {
  NodeRef dropped;
  std::lock_guard lk(mu_);
  NodeRef n = get_or_create_locked(rel, kind, now, &dropped);
  ++n->lookups;
  return n;
}

fuse_ino_t InodeTable::number_of(const std::string& rel, NodeKind kind, const SourceStamp& listed) {
  NodeRef dropped;
  std::lock_guard lk(mu_);
  if (auto it = by_rel_.find(rel); it != by_rel_.end()) {
    const Node& n = *by_ino_.at(it->second);
    if (n.kind == kind && n.stamp.same_file(listed)) return n.ino;
  }
  return get_or_create_locked(rel, kind, listed, &dropped)->ino;
}

void InodeTable::forget(fuse_ino_t ino, uint64_t count) {
  NodeRef dropped;  // released after the lock: the last reference may free an index
  std::lock_guard lk(mu_);
  auto it = by_ino_.find(ino);
  if (it == by_ino_.end() || ino == FUSE_ROOT_ID) return;
  Node& n = *it->second;
  n.lookups -= std::min(count, n.lookups);
  if (n.lookups > 0) return;
  if (auto r = by_rel_.find(n.rel); r != by_rel_.end() && r->second == ino) by_rel_.erase(r);
  dropped = std::move(it->second);
  by_ino_.erase(it);
}

NodeRef InodeTable::find(fuse_ino_t ino) const {
  std::lock_guard lk(mu_);
  auto it = by_ino_.find(ino);
  return it == by_ino_.end() ? nullptr : it->second;
}

size_t InodeTable::size() const {
  std::lock_guard lk(mu_);
  return by_ino_.size();
}

std::vector<engine::FileRef> InodeTable::current_decompressed_files() const {
  std::lock_guard lk(mu_);
  std::vector<engine::FileRef> files;
  for (const auto& [rel, ino] : by_rel_) {
    const auto it = by_ino_.find(ino);
    if (it != by_ino_.end() && it->second->kind == NodeKind::kDecompressed) files.push_back(it->second->file);
  }
  return files;
}

}  // namespace mibz2::fs
