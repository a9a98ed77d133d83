#include "fs/inode_table.h"

namespace mibz2::fs {

InodeTable::InodeTable(std::string source_root, engine::Catalog& catalog) : catalog_(catalog) {
  by_ino_.resize(FUSE_ROOT_ID + 1);
  auto root = std::make_unique<Node>();
  root->ino = FUSE_ROOT_ID;
  root->kind = NodeKind::kDirectory;
  root->source = source_root;
  by_source_.emplace(std::move(source_root), FUSE_ROOT_ID);
  by_ino_[FUSE_ROOT_ID] = std::move(root);
}

Node& InodeTable::get_or_create(const std::string& source, NodeKind kind) {
  std::lock_guard lk(mu_);
  if (auto it = by_source_.find(source); it != by_source_.end()) {
    Node& n = *by_ino_[it->second];
    if (n.kind == kind) return n;
    // The path now holds something else: it gets a new node, so that every node's kind and
    // compressed state stay fixed for its life and need no lock to read.
  }
  auto node = std::make_unique<Node>();
  node->ino = by_ino_.size();
  node->kind = kind;
  node->source = source;
  if (kind == NodeKind::kDecompressed) node->file = catalog_.add(source);
  Node& ref = *node;
  by_source_[source] = node->ino;
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

}  // namespace mibz2::fs
