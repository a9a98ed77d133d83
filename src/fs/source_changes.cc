#include "fs/source_changes.h"

#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "catalog/name_mapping.h"
#include "io/source_root.h"

namespace mibz2::fs {
namespace {

// Nodes bound to their file alone (inode_table.h, bound_stamp) stay the same node when their
// attributes change: the kernel must ask for these again.
bool outlives_changes(NodeKind kind) {
  return kind == NodeKind::kDirectory || kind == NodeKind::kSymlink || kind == NodeKind::kLinkToDecompressed;
}

// The daemon's listing of `dir` is read again at its next use, whatever its stamp says (a file
// written in place changes whether it is shown decompressed, not its directory's times).
void relist(Node& dir) {
  std::lock_guard lk(dir.listing_mu);
  dir.listing_stamp = ListingStamp{};  // never reusable; the listing itself stays (its notes were logged)
}

std::string parent_of(const std::string& rel) {
  const size_t slash = rel.rfind('/');
  return slash == std::string::npos ? std::string() : rel.substr(0, slash);
}

std::string last_of(const std::string& rel) {
  const size_t slash = rel.rfind('/');
  return slash == std::string::npos ? rel : rel.substr(slash + 1);
}

}  // namespace

void drop_changed(InodeTable& inodes, KernelNotifier& notifier, const std::vector<SourceWatcher::Change>& changes) {
  std::set<fuse_ino_t> renamed_in;  // directories whose entries changed
  for (const SourceWatcher::Change& change : changes) {
    const NodeRef dir = inodes.find(change.dir);
    if (!dir || dir->kind != NodeKind::kDirectory) continue;  // forgotten since: the kernel holds nothing under it
    relist(*dir);
    if (change.name.empty()) {  // the directory itself
      notifier.invalidate_inode(dir->ino);
      // Deleted or moved away: its name in its parent (also reported by the parent's watch, if
      // the parent has one).
      if (change.gone && !dir->rel.empty())
        if (const NodeRef parent = inodes.at(parent_of(dir->rel)); parent && parent->kind == NodeKind::kDirectory)
          notifier.invalidate_entry(parent->ino, last_of(dir->rel));
      continue;
    }
    if (change.names) renamed_in.insert(dir->ino);
    const std::vector<std::string> names = catalog::names_affected_by(change.name);
    bool held = false;  // whether the kernel can hold any of these names
    for (const std::string& name : names) {
      const NodeRef node = inodes.at(io::join_rel(dir->rel, name));
      if (!node) continue;
      held = true;
      if (outlives_changes(node->kind)) notifier.invalidate_inode(node->ino);
    }
    if (held)
      for (const std::string& name : names) notifier.invalidate_entry(dir->ino, name);
  }
  for (const fuse_ino_t dir : renamed_in) notifier.invalidate_inode(dir);  // its times, size and link count
}

void drop_everything(InodeTable& inodes, KernelNotifier& notifier) {
  // The nodes made without a lookup (the tree walk's, a plain readdir's) have no name in the kernel.
  for (const NodeRef& node : inodes.held_nodes()) {
    if (node->kind == NodeKind::kDirectory) relist(*node);
    if (outlives_changes(node->kind)) notifier.invalidate_inode(node->ino);
    if (node->ino == FUSE_ROOT_ID) continue;
    // The name the kernel holds the node under: as the node's kind shows its source name.
    const NodeRef parent = inodes.at(parent_of(node->rel));
    if (!parent || parent->kind != NodeKind::kDirectory) continue;
    const std::string source_name = last_of(node->rel);
    std::optional<std::string> shown;
    if (node->kind == NodeKind::kDecompressed || node->kind == NodeKind::kLinkToDecompressed)
      shown = catalog::decompressed_name(source_name);
    notifier.invalidate_entry(parent->ino, shown.value_or(source_name));
  }
}

}  // namespace mibz2::fs
