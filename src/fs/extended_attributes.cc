// The extended attributes of the mount (user.mibz2fs.*): a decompressed file's index state,
// sizes and damage, and the mount's counters on its root. Read by name, never listed.
#include "fs/filesystem.h"

#include <cerrno>
#include <string>
#include <string_view>

namespace mibz2::fs {
namespace {

// On the mount's root directory: the engine's and the catalog's counters, and the indexing of the
// whole mount (the same name as a file's index state).
constexpr const char* kStatsXattr = "user.mibz2fs.stats";
constexpr const char* kIndexXattr = "user.mibz2fs.index";

// Replies to getxattr/listxattr: the size when asked for it, ERANGE when the buffer is short.
void reply_xattr(fuse_req_t req, const std::string& value, size_t size) {
  if (size == 0) fuse_reply_xattr(req, value.size());
  else if (size < value.size()) fuse_reply_err(req, ERANGE);
  else fuse_reply_buf(req, value.data(), value.size());
}

// Extended attributes of decompressed files, read by name and never listed: the first two always,
// the others once the index is ready (reading an attribute never waits for an index: until then
// they are ENODATA).
constexpr const char* kXattrNames[] = {"user.mibz2fs.compressed_size", kIndexXattr, "user.mibz2fs.blocks",
                                       "user.mibz2fs.damaged_blocks", "user.mibz2fs.damage"};

}  // namespace

void Filesystem::getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  const NodeRef node = inodes_.find(ino);
  const std::string_view n = name;
  std::string value;
  if (node && ino == FUSE_ROOT_ID && (n == kStatsXattr || n == kIndexXattr)) {
    const engine::CatalogSummary summary = catalog_->summary();
    value = n == kIndexXattr ? summary.describe()
                             : engine_->stats().summary() + " " + summary.counters() + " nodes=" +
                                   std::to_string(inodes_.size()) + " watched_dirs=" +
                                   std::to_string(source_watcher_.watches());
    reply_xattr(req, value, size);
    return;
  }
  if (!node || node->kind != NodeKind::kDecompressed) {
    fuse_reply_err(req, node ? ENODATA : ESTALE);
    return;
  }
  const engine::FileRef& file = node->file;
  // Never waits for an index: a file not indexed yet says so, and its attributes that need the
  // index are not there yet (ENODATA). They tell how the source file is now, whatever content the
  // node was made for (the kernel caches none of them): an ESTALE here would send the kernel to
  // the new node, whose attributes it must ask first, and that getattr waits for the index.
  if (n == kXattrNames[0]) {
    struct stat st;
    if (const int err = root_.lstat(node->rel, &st)) {
      fuse_reply_err(req, err);
      return;
    }
    if (!SourceStamp::of(st).same_file(node->stamp)) {
      fuse_reply_err(req, ESTALE);  // another file: its own node answers
      return;
    }
    value = std::to_string(st.st_size);
  } else if (n == kIndexXattr) {
    catalog_->refresh(file);
    catalog_->prepare(file, engine::Catalog::Need::kSoon);  // a changed source: queued again
    value = catalog_->status(file).describe();
  } else if (n == kXattrNames[2] || n == kXattrNames[3] || n == kXattrNames[4]) {
    catalog_->refresh(file);
    const auto idx = catalog_->status(file).index;
    if (!idx) {
      fuse_reply_err(req, ENODATA);
      return;
    }
    if (n == kXattrNames[2]) value = std::to_string(idx->blocks.size());
    else if (n == kXattrNames[3]) value = std::to_string(idx->damaged_blocks);
    else
      for (const std::string& line : index::damage_report(*idx)) value += line + "\n";
  } else {
    fuse_reply_err(req, ENODATA);
    return;
  }
  reply_xattr(req, value, size);
}

void Filesystem::listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  const NodeRef node = inodes_.find(ino);
  if (!node) {
    fuse_reply_err(req, ESTALE);
    return;
  }
  // Our attributes describe the mounted file, not its content: a copy made with `cp -a`,
  // `rsync -X` or `tar --xattrs` (which copy every attribute listed) would carry them as stale
  // lies. So none is listed; each is read by its name (getfattr -n).
  reply_xattr(req, std::string(), size);
}

}  // namespace mibz2::fs
