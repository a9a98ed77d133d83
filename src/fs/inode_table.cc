#include "fs/inode_table.h"

#include <algorithm>

namespace mibz2::fs {

io::SourceStamp bound_stamp(NodeKind kind, const io::SourceStamp& now) {
  return kind == NodeKind::kRegular || kind == NodeKind::kDecompressed ? now : now.file_only();
}

InodeTable::InodeTable(const io::SourceRoot& root, const io::SourceStamp& root_stamp, catalog::Catalog& catalog)
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

NodeRef InodeTable::get_or_create_locked(const std::string& rel, NodeKind kind, const io::SourceStamp& now,
                                         NodeRef* dropped) {
  const io::SourceStamp stamp = bound_stamp(kind, now);
  if (auto it = by_rel_.find(rel); it != by_rel_.end()) {
    const auto old = by_ino_.find(it->second);
    const NodeRef was = old->second;
    if (was->kind == kind && was->stamp == stamp && !was->retired) return was;
    // The path now holds something else, or the same file with another content: it gets a new
    // node, so that every node's kind, stamp and catalog entry stay fixed for its life and need no
    // lock to read, and the kernel never keeps one page cache for two contents.
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
  if (kind == NodeKind::kDecompressed) node->file = catalog_entry_locked(rel, node->source, stamp);
  by_rel_[rel] = node->ino;
  by_ino_.emplace(node->ino, node);
  return node;
}

catalog::FileRef InodeTable::catalog_entry_locked(const std::string& rel, const std::string& source,
                                                 const io::SourceStamp& stamp) {
  if (auto it = files_.find(rel); it != files_.end())
    if (catalog::FileRef file = it->second.lock(); file && file->device() == stamp.device && file->inode() == stamp.inode)
      return file;
  if (files_.size() >= 2 * files_pruned_at_ + 64) {
    // Entries no node holds any more: pruned when the map has doubled, so adding stays amortised O(1).
    std::erase_if(files_, [](const auto& f) { return f.second.expired(); });
    files_pruned_at_ = files_.size();
  }
  catalog::FileRef file = catalog_.add(source, stamp.device, stamp.inode);
  files_[rel] = file;
  return file;
}

NodeRef InodeTable::get_or_create(const std::string& rel, NodeKind kind, const io::SourceStamp& now) {
  NodeRef dropped;  // released after the lock: the last reference may free an index
  std::lock_guard lk(mu_);
  return get_or_create_locked(rel, kind, now, &dropped);
}

NodeRef InodeTable::lookup(const std::string& rel, NodeKind kind, const io::SourceStamp& now) {
  NodeRef dropped;
  std::lock_guard lk(mu_);
  NodeRef n = get_or_create_locked(rel, kind, now, &dropped);
  ++n->lookups;
  return n;
}

fuse_ino_t InodeTable::number_of(const std::string& rel, NodeKind kind, const io::SourceStamp& listed) {
  NodeRef dropped;
  std::lock_guard lk(mu_);
  if (auto it = by_rel_.find(rel); it != by_rel_.end()) {
    const Node& n = *by_ino_.at(it->second);
    if (n.kind == kind && n.stamp.same_file(listed) && !n.retired) return n.ino;
  }
  return get_or_create_locked(rel, kind, listed, &dropped)->ino;
}

std::optional<InodeTable::Retired> InodeTable::retire(const catalog::FileRef& file) {
  const std::optional<std::string> rel = root_.relative(file->path());
  if (!rel) return std::nullopt;
  const size_t slash = rel->rfind('/');
  const std::string dir = slash == std::string::npos ? std::string() : rel->substr(0, slash);
  std::optional<std::string> shown = catalog::decompressed_name(slash == std::string::npos ? *rel : rel->substr(slash + 1));
  std::lock_guard lk(mu_);
  const auto it = by_rel_.find(*rel);
  if (it == by_rel_.end()) return std::nullopt;
  Node& n = *by_ino_.at(it->second);
  if (n.kind != NodeKind::kDecompressed || n.file != file || n.retired.exchange(true)) return std::nullopt;
  Retired r;
  r.ino = n.ino;
  if (const auto d = by_rel_.find(dir); d != by_rel_.end() && shown) {
    r.parent = d->second;
    r.name = std::move(*shown);
  }
  return r;
}

NodeRef InodeTable::forget(fuse_ino_t ino, uint64_t count) {
  NodeRef dropped;  // released by the caller, after the lock: the last reference may free an index
  catalog::FileRef evicted;
  std::lock_guard lk(mu_);
  auto it = by_ino_.find(ino);
  if (it == by_ino_.end() || ino == FUSE_ROOT_ID) return nullptr;
  Node& n = *it->second;
  n.lookups -= std::min(count, n.lookups);
  if (n.lookups > 0) return nullptr;
  if (auto r = by_rel_.find(n.rel); r != by_rel_.end() && r->second == ino) by_rel_.erase(r);
  if (n.file) {
    // When a file's content changes, the kernel looks its name up twice (the first answer only
    // tells it that its cached node is stale, and it forgets it at once) and may forget the old
    // node in between: the last few entries forgotten are kept so that the next node of the same
    // file finds its index (a chmod needs none; a new content is told by the catalog).
    recently_forgotten_.push_back(n.file);
    if (recently_forgotten_.size() > kRecentlyForgotten) {
      evicted = std::move(recently_forgotten_.front());
      recently_forgotten_.pop_front();
    }
  }
  dropped = std::move(it->second);
  by_ino_.erase(it);
  return dropped;
}

NodeRef InodeTable::find(fuse_ino_t ino) const {
  std::lock_guard lk(mu_);
  auto it = by_ino_.find(ino);
  return it == by_ino_.end() ? nullptr : it->second;
}

NodeRef InodeTable::at(const std::string& rel) const {
  std::lock_guard lk(mu_);
  const auto it = by_rel_.find(rel);
  return it == by_rel_.end() ? nullptr : by_ino_.at(it->second);
}

std::vector<NodeRef> InodeTable::held_nodes() const {
  std::lock_guard lk(mu_);
  std::vector<NodeRef> held;
  for (const auto& [ino, node] : by_ino_)
    if (node->lookups > 0) held.push_back(node);
  return held;
}

size_t InodeTable::size() const {
  std::lock_guard lk(mu_);
  return by_ino_.size();
}

std::vector<catalog::FileRef> InodeTable::current_decompressed_files() const {
  std::lock_guard lk(mu_);
  std::vector<catalog::FileRef> files;
  for (const auto& [rel, ino] : by_rel_) {
    const auto it = by_ino_.find(ino);
    if (it != by_ino_.end() && it->second->kind == NodeKind::kDecompressed) files.push_back(it->second->file);
  }
  return files;
}

}  // namespace mibz2::fs
