#include "fs/inode_table.h"

#include <algorithm>

namespace mibz2::fs {

InodeTable::InodeTable(const io::SourceRoot& root, uint64_t root_device, uint64_t root_inode, engine::Catalog& catalog)
    : root_(root), catalog_(catalog) {
  auto node = std::make_shared<Node>();
  node->ino = FUSE_ROOT_ID;
  node->kind = NodeKind::kDirectory;
  node->source = root.path();
  node->device = root_device;
  node->inode = root_inode;
  node->lookups = 1;  // the kernel holds the root for the life of the mount
  by_rel_.emplace(std::string(), FUSE_ROOT_ID);
  by_ino_.emplace(FUSE_ROOT_ID, std::move(node));
}

NodeRef InodeTable::get_or_create_locked(const std::string& rel, NodeKind kind, uint64_t device, uint64_t inode) {
  if (auto it = by_rel_.find(rel); it != by_rel_.end()) {
    const NodeRef& n = by_ino_.at(it->second);
    if (n->kind == kind && n->device == device && n->inode == inode) return n;
    // The path now holds something else: it gets a new node, so that every node's kind, identity
    // and catalog entry stay fixed for its life and need no lock to read.
  }
  auto node = std::make_shared<Node>();
  node->ino = next_ino_++;
  node->kind = kind;
  node->rel = rel;
  node->source = root_.absolute(rel);
  node->device = device;
  node->inode = inode;
  if (kind == NodeKind::kDecompressed) node->file = catalog_.add(node->source, device, inode);
  by_rel_[rel] = node->ino;
  by_ino_.emplace(node->ino, node);
  return node;
}

NodeRef InodeTable::get_or_create(const std::string& rel, NodeKind kind, uint64_t device, uint64_t inode) {
  std::lock_guard lk(mu_);
  return get_or_create_locked(rel, kind, device, inode);
}

NodeRef InodeTable::lookup(const std::string& rel, NodeKind kind, uint64_t device, uint64_t inode) {
  std::lock_guard lk(mu_);
  NodeRef n = get_or_create_locked(rel, kind, device, inode);
  ++n->lookups;
  return n;
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
