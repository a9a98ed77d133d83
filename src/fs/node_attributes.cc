#include "fs/node_attributes.h"

#include <cerrno>

#include "fs/node_checks.h"
#include "fs/source_directory.h"

namespace mibz2::fs {

int NodeAttributes::link_target(Node& node, std::string* target) {
  if (const int err = root_.readlink(node.rel, target)) return err;
  if (node.kind == NodeKind::kLinkToDecompressed) *target = shown_link_target(root_, node.rel, *target);
  return 0;
}

int NodeAttributes::of(Node& node, struct stat* st, bool wait, bool* final, std::stop_token stop) {
  if (const int err = current(root_, node, st)) return err;
  return shown(node, st, wait, final, std::move(stop));
}

// Turns the source's attributes (fresh from current()) into what the mount shows.
int NodeAttributes::shown(Node& node, struct stat* st, bool wait, bool* final, std::stop_token stop) {
  *final = true;
  st->st_ino = node.ino;
  if (node.kind == NodeKind::kLinkToDecompressed) {
    if (!S_ISLNK(st->st_mode)) return ENOENT;
    std::string target;
    if (const int err = link_target(node, &target)) return err;
    st->st_size = static_cast<off_t>(target.size());  // a link's size is its target's length
    return 0;
  }
  if (node.kind != NodeKind::kDecompressed) return 0;
  if (!S_ISREG(st->st_mode)) return ENOENT;  // the path holds something else now
  const catalog::FileRef& file = node.file;
  catalog_.refresh(file);
  uint64_t size = 0;
  if (wait) {
    // No index: no size to show, and no bytes (EIO); or the caller was interrupted (EINTR), and
    // the build goes on.
    if (!catalog_.wait(file, stop)) return catalog_.stopped_waiting(file, stop) ? EINTR : EIO;
    const auto idx = catalog_.status(file).index;
    // Changed again since the node was made: its content is gone, the kernel looks again.
    if (!describes(*idx, node)) return ESTALE;
    size = idx->decompressed_size;
  } else {
    // A lookup does not need the size: when the index is not ready it answers with attributes
    // the kernel must not keep (timeout 0), so the stat that follows asks getattr, which waits.
    catalog_.prepare(file, catalog::Catalog::Need::kNow);
    const catalog::IndexStatus status = catalog_.status(file);
    if (status.ready() && describes(*status.index, node)) {
      size = status.index->decompressed_size;
    } else {
      *final = false;
    }
  }
  show_decompressed_size(st, size);
  return 0;
}

void show_decompressed_size(struct stat* st, uint64_t size) {
  st->st_size = static_cast<off_t>(size);
  st->st_blocks = static_cast<blkcnt_t>((size + 511) / 512);
  st->st_blksize = 128 * 1024;
}

}  // namespace mibz2::fs
