#include "fs/operations.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include <spdlog/spdlog.h>

#include "fs/access_check.h"
#include "fs/directory_listing.h"
#include "fs/file_reads.h"
#include "fs/fuse_session_settings.h"
#include "fs/kernel_readahead.h"
#include "fs/node_checks.h"
#include "fs/request_interrupt.h"

namespace mibz2::fs {
namespace {

constexpr double kNegativeTimeout = 1.0;  // how long the kernel may remember a missing name
constexpr double kLocalTimeout = 3600.0;
constexpr double kRemoteTimeout = 2.0;

}  // namespace

Operations::Operations(const Parts& parts)
    : parts_(parts),
      timeout_(parts.root.watchable() ? kLocalTimeout : kRemoteTimeout),
      attributes_(parts.root, parts.door.catalog()),
      xattrs_(parts.root, parts.door.engine(), parts.door.catalog(), parts.inodes, parts.watcher) {}

int Operations::make_entry(Node& dir, const catalog::ShownEntry& e, fuse_entry_param* entry) {
  std::memset(entry, 0, sizeof *entry);
  // The node is the file the path holds now (the listing may be older than that).
  struct stat st;
  if (const int err = parts_.root.lstat(io::join_rel(dir.rel, e.source_name), &st)) return err;
  if (!same_type(e, st)) return ENOENT;  // replaced by another kind of file since the listing
  const NodeRef node = parts_.inodes.lookup(io::join_rel(dir.rel, e.source_name), kind_of(e), io::SourceStamp::of(st));
  bool final;
  entry->attr = st;
  if (const int err = attributes_.shown(*node, &entry->attr, /*wait=*/false, &final)) {
    forget(node->ino, 1);  // the kernel never gets this lookup
    return err;
  }
  // The kernel can hold names only in directories it holds: those are watched while it does.
  if (node->kind == NodeKind::kDirectory) parts_.watcher.watch(node->ino, node->rel, node->stamp);
  entry->ino = node->ino;
  entry->generation = 1;  // numbers are never reused (inode_table.h)
  entry->attr_timeout = final ? timeout_ : 0.0;
  entry->entry_timeout = timeout_;
  return 0;
}

// --- operations ---

void Operations::init(fuse_conn_info* conn) {
  configure_connection(conn);
  // The kernel keeps the smaller of max_readahead and its own read-ahead of the mount (128 KiB
  // by default), so the latter is raised too: without it a sequential reader comes in 128 KiB
  // requests (kernel_readahead.h). Set before this returns, the kernel's reply to INIT keeps it.
  if (const base::Status s = set_kernel_readahead(parts_.options.mountpoint, conn->max_readahead); s.ok())
    spdlog::info("kernel read-ahead of the mount set to {} KiB", conn->max_readahead >> 10);
  else
    spdlog::info("kernel read-ahead of the mount left as it is (only root can raise it): {}", s.message());
  spdlog::info("mounted {} at {} ({} decoder threads, cache {} MiB, index dir {})", parts_.root.path(),
               parts_.options.mountpoint, parts_.door.engine().pool().threads(),
               parts_.door.engine().cache().capacity() >> 20,
               parts_.door.store().dir().empty() ? "(none)" : parts_.door.store().dir());
}

int Operations::lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  NodeRef dir;
  Listing entries;
  struct stat dir_st;
  int err = find_node(parts_.inodes, parent, NodeNeed::kDirectory, &dir);
  if (!err) err = listing(parts_.root, *dir, &entries, &dir_st);
  if (!err) err = permitted(caller_of(req), dir_st, X_OK);
  if (err) return err;
  fuse_entry_param entry;
  const catalog::ShownEntry* e = find_shown(*entries, name);
  if (!e) {
    std::memset(&entry, 0, sizeof entry);
    entry.entry_timeout = kNegativeTimeout;  // ino 0: the kernel caches the miss
  } else if (const int e_err = make_entry(*dir, *e, &entry)) {
    return e_err;
  }
  fuse_reply_entry(req, &entry);
  return 0;
}

void Operations::forget(fuse_ino_t ino, uint64_t count) noexcept {
  const NodeRef gone = parts_.inodes.forget(ino, count);
  if (gone && gone->kind == NodeKind::kDirectory) parts_.watcher.unwatch(gone->ino);
}

int Operations::getattr(fuse_req_t req, fuse_ino_t ino) {
  NodeRef node;
  if (const int err = find_node(parts_.inodes, ino, NodeNeed::kAny, &node)) return err;
  struct stat st;
  bool final;
  {
    const RequestInterrupt interrupt(req);
    if (const int err = attributes_.of(*node, &st, /*wait=*/true, &final, interrupt.token())) return err;
  }
  fuse_reply_attr(req, &st, timeout_);
  return 0;
}

int Operations::readlink(fuse_req_t req, fuse_ino_t ino) {
  NodeRef node;
  std::string target;
  int err = find_node(parts_.inodes, ino, NodeNeed::kLink, &node);
  if (!err) err = attributes_.link_target(*node, &target);
  if (err) return err;
  fuse_reply_readlink(req, target.c_str());
  return 0;
}

int Operations::opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  NodeRef node;
  auto handle = std::make_unique<DirHandle>();
  struct stat st;
  int err = find_node(parts_.inodes, ino, NodeNeed::kDirectory, &node);
  if (!err) err = listing(parts_.root, *node, &handle->entries, &st);
  if (!err) err = permitted(caller_of(req), st, R_OK);
  if (err) return err;
  parts_.handles.reply_open(req, fi, std::move(handle));
  return 0;
}

int Operations::readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi, bool plus) {
  const NodeRef dir = parts_.inodes.find(ino);
  auto* handle = reinterpret_cast<DirHandle*>(fi->fh);
  if (!dir || !handle) return EBADF;
  std::vector<char> buf(size);
  size_t used = 0;
  const auto& entries = *handle->entries;
  // Offsets: 1 is ".", 2 is "..", 3 + i is entries[i] (the offset of an entry is where the next
  // readdir call continues).
  for (off_t pos = off; pos < static_cast<off_t>(entries.size()) + 2; ++pos) {
    const off_t next = pos + 1;
    size_t len;
    if (pos < 2) {
      struct stat st{};
      st.st_ino = pos == 0 ? ino : FUSE_ROOT_ID;
      st.st_mode = S_IFDIR;
      const char* name = pos == 0 ? "." : "..";
      if (plus) {
        fuse_entry_param e{};
        e.attr = st;  // ino 0 entries are not looked up by the kernel
        len = fuse_add_direntry_plus(req, buf.data() + used, size - used, name, &e, next);
      } else {
        len = fuse_add_direntry(req, buf.data() + used, size - used, name, &st, next);
      }
    } else {
      const catalog::ShownEntry& e = entries[static_cast<size_t>(pos - 2)];
      if (plus) {
        fuse_entry_param entry;
        if (make_entry(*dir, e, &entry) != 0) continue;  // vanished: leave it out
        len = fuse_add_direntry_plus(req, buf.data() + used, size - used, e.name.c_str(), &entry, next);
        if (len > size - used) {
          // Did not fit: the kernel never sees this entry, so it is not a lookup.
          forget(entry.ino, 1);
          break;
        }
      } else {
        struct stat st{};
        st.st_ino = parts_.inodes.number_of(io::join_rel(dir->rel, e.source_name), kind_of(e), e.stamp);
        st.st_mode = listed_mode(e);
        len = fuse_add_direntry(req, buf.data() + used, size - used, e.name.c_str(), &st, next);
      }
    }
    if (len > size - used) break;
    used += len;
  }
  fuse_reply_buf(req, buf.data(), used);
  return 0;
}

void Operations::releasedir(fuse_file_info* fi) { parts_.handles.release<DirHandle>(fi); }

int Operations::open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  NodeRef node;
  if (const int err = find_node(parts_.inodes, ino, NodeNeed::kAny, &node)) return err;
  if (node->kind == NodeKind::kDirectory) return EISDIR;
  if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & (O_TRUNC | O_APPEND | O_CREAT))) return EROFS;
  if (node->kind != NodeKind::kRegular && node->kind != NodeKind::kDecompressed)
    return ELOOP;  // symlinks are resolved by the kernel, never opened here
  // A node that no longer stands for its source's content answers ESTALE: the kernel then looks
  // the name up again (the VFS retries an open once, with LOOKUP_REVAL) and opens the new node.
  auto handle = std::make_unique<FileHandle>();
  const int err = node->kind == NodeKind::kRegular ? open_plain(req, *node, handle.get())
                                                   : open_decompressed(req, *node, handle.get());
  if (err) return err;
  // The kernel's page cache of a node only ever holds the node's content (a new content is a new
  // node, and reads on a node's descriptors serve its content or fail): it is kept across opens.
  fi->keep_cache = 1;
  // A damaged file is read around the page cache: a read that runs into damage then returns the
  // verified bytes before it (a short read) and the next read fails with EIO, exactly at the
  // damage. Through the page cache a short reply would look like the end of the file, and a
  // failed page would take the good bytes of its neighbours with it.
  if (handle->file && handle->file->index()->damaged_blocks) {
    fi->direct_io = 1;
    fi->keep_cache = 0;
  }
  parts_.handles.reply_open(req, fi, std::move(handle));
  return 0;
}

int Operations::open_plain(fuse_req_t req, const Node& node, FileHandle* handle) {
  struct stat st;
  handle->fd = parts_.root.open(node.rel, io::SourceRoot::Kind::kRegular, &st);
  int err = handle->fd < 0 ? -handle->fd : 0;
  if (!err && !stands_for(node, st)) err = ESTALE;
  if (!err) err = permitted(caller_of(req), st, R_OK);
  if (err) return err == EINVAL || err == ELOOP || err == ENOTDIR ? ESTALE : err;
  handle->stamp = node.stamp;
  return 0;
}

int Operations::open_decompressed(fuse_req_t req, const Node& node, FileHandle* handle) {
  struct stat st;
  int err = current(parts_.root, node, &st);
  if (!err) err = permitted(caller_of(req), st, R_OK);
  if (err) return err;
  base::Status error;
  {
    const RequestInterrupt interrupt(req);
    base::Result<std::unique_ptr<catalog::ReadHandle>> opened = parts_.door.open(node.file, interrupt.token());
    if (opened.ok()) handle->file = std::move(opened).value();
    else error = opened.status();
  }
  if (!handle->file) {
    const bool interrupted = error.code() == EINTR;  // the wait was stopped, the build goes on
    if (!interrupted) spdlog::warn("{}: cannot open: {}", node.file->name(), error.message());
    return interrupted ? EINTR : EIO;
  }
  // The source changed again while its index was made: that index is another node's.
  if (!describes(*handle->file->index(), node)) return ESTALE;
  return 0;
}

int Operations::read(fuse_req_t req, size_t size, off_t off, fuse_file_info* fi) {
  auto* handle = reinterpret_cast<FileHandle*>(fi->fh);
  if (!handle->file) return read_plain(req, *handle, size, off);
  // Never waits for a decode: a read of blocks being decoded is answered by the decoder thread
  // that finishes the last of them, and this request thread goes back to serve others (cache hits
  // never queue behind misses for a request thread). Whatever made it fail, the reply is EIO
  // (ENOMEM when memory ran out): the kind and place were logged where they were found.
  handle->file->read_async(static_cast<uint64_t>(off), size,
                           [req](ssize_t n, std::vector<engine::Slice>& slices, const engine::ReadFailure*) {
                             reply_read(req, n, slices);
                           });
  return 0;
}

void Operations::release(fuse_file_info* fi) { parts_.handles.release<FileHandle>(fi); }

int Operations::statfs(fuse_req_t req) {
  struct statvfs sv;
  if (const int err = parts_.root.statvfs(&sv)) return err;
  // As read-only file systems (squashfuse) do: the size is the content, and nothing is free. The
  // content counted is the decompressed size of every file whose index is ready (known without
  // waiting: df never waits for an index, and the total grows as indexing goes on); the source's
  // plain files are not counted. The name length limit stays the source's.
  uint64_t total = 0;
  for (const catalog::FileRef& file : parts_.inodes.current_decompressed_files())
    if (const catalog::IndexStatus s = parts_.door.catalog().status(file); s.ready()) total += s.index->decompressed_size;
  constexpr unsigned long kUnit = 4096;
  sv.f_bsize = sv.f_frsize = kUnit;
  sv.f_blocks = static_cast<fsblkcnt_t>((total + kUnit - 1) / kUnit);
  sv.f_bfree = sv.f_bavail = 0;
  sv.f_files = static_cast<fsfilcnt_t>(parts_.inodes.size());
  sv.f_ffree = sv.f_favail = 0;
  sv.f_flag |= ST_RDONLY;
  fuse_reply_statfs(req, &sv);
  return 0;
}

// --- extended attributes (extended_attributes.h) ---

int Operations::getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  NodeRef node;
  std::string value;
  int err = find_node(parts_.inodes, ino, NodeNeed::kAny, &node);
  if (!err) err = xattrs_.get(*node, name, &value);
  if (err) return err;
  return reply_xattr(req, value, size);
}

int Operations::listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  NodeRef node;
  if (const int err = find_node(parts_.inodes, ino, NodeNeed::kAny, &node)) return err;
  return reply_xattr(req, ExtendedAttributes::listed(), size);
}

int Operations::reply_xattr(fuse_req_t req, const std::string& value, size_t size) {
  if (const int err = fits_xattr_buffer(value, size)) return err;
  if (size == 0) fuse_reply_xattr(req, value.size());
  else fuse_reply_buf(req, value.data(), value.size());
  return 0;
}

}  // namespace mibz2::fs
