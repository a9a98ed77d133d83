#include "fs/inode_table.h"

namespace mibz2::fs {

InodeTable::InodeTable(const io::SourceRoot& root, uint64_t root_device, uint64_t root_inode, engine::Catalog& catalog)
    : root_(root), catalog_(catalog) {
  by_ino_.resize(FUSE_ROOT_ID + 1);
  auto node = std::make_unique<Node>();
  node->ino = FUSE_ROOT_ID;
  node->kind = NodeKind::kDirectory;
  node->source = root.path();
  node->device = root_device;
  node->inode = root_inode;
  by_rel_.emplace(std::string(), FUSE_ROOT_ID);
  by_ino_[FUSE_ROOT_ID] = std::move(node);
}

Node& InodeTable::get_or_create(const std::string& rel, NodeKind kind, uint64_t device, uint64_t inode) {
  std::lock_guard lk(mu_);
  if (auto it = by_rel_.find(rel); it != by_rel_.end()) {
    Node& n = *by_ino_[it->second];
    if (n.kind == kind && n.device == device && n.inode == inode) return n;
    // The path now holds something else: it gets a new node, so that every node's kind, identity
    // and catalog entry stay fixed for its life and need no lock to read.
  }
  auto node = std::make_unique<Node>();
  node->ino = by_ino_.size();
  node->kind = kind;
  node->rel = rel;
  node->source = root_.absolute(rel);
  node->device = device;
  node->inode = inode;
  if (kind == NodeKind::kDecompressed) node->file = catalog_.add(node->source, device, inode);
  Node& ref = *node;
  by_rel_[rel] = node->ino;
  by_ino_.push_back(std::move(node));
  return ref;
}

Node* InodeTable::find(fuse_ino_t ino) {
  std::lock_guard lk(mu_);
  return ino < by_ino_.size() ? by_ino_[ino].get() : nullptr;
}

size_t InodeTable::size() const {
  std::lock_guard lk(mu_);
  return by_ino_.size() - 1;
}

std::vector<engine::FileRef> InodeTable::current_decompressed_files() const {
  std::lock_guard lk(mu_);
  std::vector<engine::FileRef> files;
  for (const auto& [rel, ino] : by_rel_)
    if (const Node& n = *by_ino_[ino]; n.kind == NodeKind::kDecompressed) files.push_back(n.file);
  return files;
}

}  // namespace mibz2::fs
