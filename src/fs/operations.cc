// The FUSE operations of the mount (lookup, attributes, listings, open, read, statfs): each
// replies exactly once.
#include "fs/filesystem.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <vector>

#include <spdlog/spdlog.h>

#include "fs/fuse_session_settings.h"
#include "fs/open_handles.h"
#include "fs/request_interrupt.h"
#include "fs/source_directory.h"
#include "engine/reader.h"
#include "io/fd_io.h"

namespace mibz2::fs {
namespace {

constexpr double kNegativeTimeout = 1.0;  // how long the kernel may remember a missing name

uint64_t realtime_ns() {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return ns_of(t);
}

NodeKind kind_of(const ShownEntry& e) {
  if (e.decompressed) return e.type == SourceEntry::Type::kSymlink ? NodeKind::kLinkToDecompressed : NodeKind::kDecompressed;
  switch (e.type) {
    case SourceEntry::Type::kDirectory: return NodeKind::kDirectory;
    case SourceEntry::Type::kSymlink: return NodeKind::kSymlink;
    default: return NodeKind::kRegular;
  }
}

}  // namespace

// --- the source, as the node knows it ---

int Filesystem::current(const Node& node, struct stat* st) const {
  if (const int err = root_.lstat(node.rel, st)) return err;
  return stands_for(node, *st) ? 0 : ESTALE;
}

// The path holds another file than the one the kernel asked about, or another content of it, or the
// node was retired: the kernel must look the name up again (and gets a new node, with a page cache
// of its own).
bool Filesystem::stands_for(const Node& node, const struct stat& st) {
  return !node.retired && bound_stamp(node.kind, SourceStamp::of(st)) == node.stamp;
}

// Whether an index describes the content a node stands for (its size, mtime and inode; the
// catalog confirms an index again when the ctime alone changed).
bool Filesystem::describes(const index::BlockIndex& index, const Node& node) {
  return index.source.size == node.stamp.size && index.source.mtime_ns == node.stamp.mtime_ns &&
         index.source.inode == node.stamp.inode;
}

int Filesystem::permitted(fuse_req_t req, const struct stat& st, int mask) {
  // The kernel checked the attributes it cached (default_permissions); this checks the file as it
  // is now, so that a chmod or chown takes effect for the next open, not an hour later.
  const fuse_ctx* ctx = fuse_req_ctx(req);
  if (ctx->uid == 0) return 0;
  const mode_t m = st.st_mode;
  auto allows = [mask](mode_t bits) { return (bits & mask) == static_cast<mode_t>(mask); };
  if (ctx->uid == st.st_uid) return allows((m >> 6) & 7) ? 0 : EACCES;
  const bool group_decides = ((m >> 3) & 7) != (m & 7);
  bool in_group = ctx->gid == st.st_gid;
  if (!in_group && group_decides) {
    gid_t groups[256];
    const int n = fuse_req_getgroups(req, 256, groups);
    for (int i = 0; i < std::min(n, 256) && !in_group; ++i) in_group = groups[i] == st.st_gid;
  }
  return allows(in_group ? (m >> 3) & 7 : m & 7) ? 0 : EACCES;
}

// --- directory listings ---

int Filesystem::listing(Node& dir, std::shared_ptr<const std::vector<ShownEntry>>* out, struct stat* dir_st) {
  struct stat local;
  struct stat& st = dir_st ? *dir_st : local;
  if (const int err = current(dir, &st)) return err;
  if (!S_ISDIR(st.st_mode)) return ENOTDIR;
  {
    std::lock_guard lk(dir.listing_mu);
    if (dir.listing && dir.listing_stamp.matches(st)) {
      *out = dir.listing;
      return 0;
    }
  }
  // Built with no lock held (it reads the directory and the head of every .bz2 in it); two
  // threads may both build it, and the last one stores it.
  ListingStamp stamp = ListingStamp::of(st, realtime_ns());
  std::vector<SourceEntry> entries;
  bool sure = true;
  if (const int err = list_source_directory(root_, dir.rel, &entries, &sure)) return err;
  if (!sure) stamp.reusable = false;  // a head could not be read: look again next time
  std::vector<NamingNote> notes;
  auto shown = std::make_shared<const std::vector<ShownEntry>>(map_directory(std::move(entries), &notes));
  {
    std::lock_guard lk(dir.listing_mu);
    const bool first = !dir.listing;
    dir.listing = shown;
    dir.listing_stamp = stamp;
    if (first)
      for (const NamingNote& n : notes) spdlog::info("{}: {}", root_.absolute(io::join_rel(dir.rel, n.source_name)), n.reason);
  }
  *out = std::move(shown);
  return 0;
}

// --- attributes ---

int Filesystem::link_target(Node& node, std::string* target) {
  if (const int err = root_.readlink(node.rel, target)) return err;
  if (node.kind == NodeKind::kLinkToDecompressed) *target = shown_link_target(root_, node.rel, *target);
  return 0;
}

int Filesystem::attributes(Node& node, struct stat* st, bool wait, bool* final, std::stop_token stop) {
  if (const int err = current(node, st)) return err;
  return shown_attributes(node, st, wait, final, std::move(stop));
}

// Turns the source's attributes (fresh from current()) into what the mount shows.
int Filesystem::shown_attributes(Node& node, struct stat* st, bool wait, bool* final, std::stop_token stop) {
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
  const engine::FileRef& file = node.file;
  catalog_->refresh(file);
  uint64_t size = 0;
  if (wait) {
    // No index: no size to show, and no bytes (EIO); or the caller was interrupted (EINTR), and
    // the build goes on.
    if (!catalog_->wait(file, stop)) return catalog_->stopped_waiting(file, stop) ? EINTR : EIO;
    const auto idx = catalog_->status(file).index;
    // Changed again since the node was made: its content is gone, the kernel looks again.
    if (!describes(*idx, node)) return ESTALE;
    size = idx->decompressed_size;
  } else {
    // A lookup does not need the size: when the index is not ready it answers with attributes
    // the kernel must not keep (timeout 0), so the stat that follows asks getattr, which waits.
    catalog_->prepare(file, engine::Catalog::Need::kNow);
    const engine::IndexStatus status = catalog_->status(file);
    if (status.ready() && describes(*status.index, node)) {
      size = status.index->decompressed_size;
    } else {
      *final = false;
    }
  }
  st->st_size = static_cast<off_t>(size);
  st->st_blocks = static_cast<blkcnt_t>((size + 511) / 512);
  st->st_blksize = 128 * 1024;
  return 0;
}

int Filesystem::make_entry(Node& dir, const ShownEntry& e, fuse_entry_param* entry) {
  std::memset(entry, 0, sizeof *entry);
  // The node is the file the path holds now (the listing may be older than that).
  struct stat st;
  if (const int err = root_.lstat(io::join_rel(dir.rel, e.source_name), &st)) return err;
  const bool same_type = e.type == SourceEntry::Type::kDirectory ? S_ISDIR(st.st_mode)
                         : e.type == SourceEntry::Type::kSymlink ? S_ISLNK(st.st_mode)
                                                                  : S_ISREG(st.st_mode);
  if (!same_type) return ENOENT;  // replaced by another kind of file since the listing
  const NodeRef node = inodes_.lookup(io::join_rel(dir.rel, e.source_name), kind_of(e), SourceStamp::of(st));
  bool final;
  entry->attr = st;
  if (const int err = shown_attributes(*node, &entry->attr, /*wait=*/false, &final)) {
    forget_lookups(node->ino, 1);  // the kernel never gets this lookup
    return err;
  }
  // The kernel can hold names only in directories it holds: those are watched while it does.
  if (node->kind == NodeKind::kDirectory) source_watcher_.watch(node->ino, node->rel, node->stamp);
  entry->ino = node->ino;
  entry->generation = 1;  // numbers are never reused (inode_table.h)
  entry->attr_timeout = final ? timeout_ : 0.0;
  entry->entry_timeout = timeout_;
  return 0;
}

// --- operations ---

void Filesystem::init(fuse_conn_info* conn) {
  configure_connection(conn);
  spdlog::info("mounted {} at {} ({} decoder threads, cache {} MiB, index dir {})", options_.source,
               options_.mountpoint, engine_->pool().threads(), engine_->cache().capacity() >> 20,
               store_.dir().empty() ? "(none)" : store_.dir());
}

void Filesystem::lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  const NodeRef dir = inodes_.find(parent);
  if (!dir || dir->kind != NodeKind::kDirectory) {
    fuse_reply_err(req, dir ? ENOTDIR : ESTALE);
    return;
  }
  std::shared_ptr<const std::vector<ShownEntry>> entries;
  struct stat dir_st;
  int err = listing(*dir, &entries, &dir_st);
  if (!err) err = permitted(req, dir_st, X_OK);
  if (err) {
    fuse_reply_err(req, err);
    return;
  }
  auto it = std::lower_bound(entries->begin(), entries->end(), name,
                             [](const ShownEntry& e, const char* n) { return e.name < n; });
  fuse_entry_param entry;
  if (it == entries->end() || it->name != name) {
    std::memset(&entry, 0, sizeof entry);
    entry.entry_timeout = kNegativeTimeout;  // ino 0: the kernel caches the miss
    fuse_reply_entry(req, &entry);
    return;
  }
  if (const int e = make_entry(*dir, *it, &entry)) {
    fuse_reply_err(req, e);
    return;
  }
  fuse_reply_entry(req, &entry);
}

void Filesystem::forget(fuse_ino_t ino, uint64_t nlookup) { forget_lookups(ino, nlookup); }

void Filesystem::forget_lookups(fuse_ino_t ino, uint64_t count) noexcept {
  const NodeRef gone = inodes_.forget(ino, count);
  if (gone && gone->kind == NodeKind::kDirectory) source_watcher_.unwatch(gone->ino);
}

void Filesystem::getattr(fuse_req_t req, fuse_ino_t ino) {
  const NodeRef node = inodes_.find(ino);
  if (!node) {
    fuse_reply_err(req, ESTALE);
    return;
  }
  struct stat st;
  bool final;
  int err;
  {
    const RequestInterrupt interrupt(req);
    err = attributes(*node, &st, /*wait=*/true, &final, interrupt.token());
  }
  if (err) {
    fuse_reply_err(req, err);
    return;
  }
  fuse_reply_attr(req, &st, timeout_);
}

void Filesystem::readlink(fuse_req_t req, fuse_ino_t ino) {
  const NodeRef node = inodes_.find(ino);
  if (!node || (node->kind != NodeKind::kSymlink && node->kind != NodeKind::kLinkToDecompressed)) {
    fuse_reply_err(req, node ? EINVAL : ESTALE);
    return;
  }
  std::string target;
  if (const int err = link_target(*node, &target)) {
    fuse_reply_err(req, err);
    return;
  }
  fuse_reply_readlink(req, target.c_str());
}

void Filesystem::opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  const NodeRef node = inodes_.find(ino);
  if (!node || node->kind != NodeKind::kDirectory) {
    fuse_reply_err(req, node ? ENOTDIR : ESTALE);
    return;
  }
  auto handle = std::make_unique<DirHandle>();
  struct stat st;
  int err = listing(*node, &handle->entries, &st);
  if (!err) err = permitted(req, st, R_OK);
  if (err) {
    fuse_reply_err(req, err);
    return;
  }
  track(handle.get(), true);
  fi->fh = reinterpret_cast<uint64_t>(handle.get());
  if (fuse_reply_open(req, fi) == 0) handle.release();
  else track(handle.get(), false);
}

void Filesystem::readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi, bool plus) {
  const NodeRef dir = inodes_.find(ino);
  auto* handle = reinterpret_cast<DirHandle*>(fi->fh);
  if (!dir || !handle) {
    fuse_reply_err(req, EBADF);
    return;
  }
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
      const ShownEntry& e = entries[static_cast<size_t>(pos - 2)];
      if (plus) {
        fuse_entry_param entry;
        if (make_entry(*dir, e, &entry) != 0) continue;  // vanished: leave it out
        len = fuse_add_direntry_plus(req, buf.data() + used, size - used, e.name.c_str(), &entry, next);
        if (len > size - used) {
          // Did not fit: the kernel never sees this entry, so it is not a lookup.
          forget_lookups(entry.ino, 1);
          break;
        }
      } else {
        struct stat st{};
        st.st_ino = inodes_.number_of(io::join_rel(dir->rel, e.source_name), kind_of(e), e.stamp);
        st.st_mode = e.type == SourceEntry::Type::kDirectory ? S_IFDIR
                     : e.type == SourceEntry::Type::kSymlink ? S_IFLNK
                                                              : S_IFREG;
        len = fuse_add_direntry(req, buf.data() + used, size - used, e.name.c_str(), &st, next);
      }
    }
    if (len > size - used) break;
    used += len;
  }
  fuse_reply_buf(req, buf.data(), used);
}

void Filesystem::releasedir(fuse_req_t req, fuse_file_info* fi) {
  auto* h = reinterpret_cast<DirHandle*>(fi->fh);
  track(h, false);
  delete h;
  fuse_reply_err(req, 0);
}

void Filesystem::track(FileHandle* h, bool open) {
  std::lock_guard lk(handles_mu_);
  if (open) open_files_.insert(h);
  else open_files_.erase(h);
}
void Filesystem::track(DirHandle* h, bool open) {
  std::lock_guard lk(handles_mu_);
  if (open) open_dirs_.insert(h);
  else open_dirs_.erase(h);
}

void Filesystem::open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  const NodeRef node = inodes_.find(ino);
  if (!node) {
    fuse_reply_err(req, ESTALE);
    return;
  }
  if (node->kind == NodeKind::kDirectory) {
    fuse_reply_err(req, EISDIR);
    return;
  }
  if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & (O_TRUNC | O_APPEND | O_CREAT))) {
    fuse_reply_err(req, EROFS);
    return;
  }
  if (node->kind != NodeKind::kRegular && node->kind != NodeKind::kDecompressed) {
    fuse_reply_err(req, ELOOP);  // symlinks are resolved by the kernel, never opened here
    return;
  }
  // A node that no longer stands for its source's content answers ESTALE: the kernel then looks
  // the name up again (the VFS retries an open once, with LOOKUP_REVAL) and opens the new node.
  auto handle = std::make_unique<FileHandle>();
  struct stat st;
  if (node->kind == NodeKind::kRegular) {
    handle->fd = root_.open(node->rel, io::SourceRoot::Kind::kRegular, &st);
    int err = handle->fd < 0 ? -handle->fd : 0;
    if (!err && !stands_for(*node, st)) err = ESTALE;
    if (!err) err = permitted(req, st, R_OK);
    if (err) {
      fuse_reply_err(req, err == EINVAL || err == ELOOP || err == ENOTDIR ? ESTALE : err);
      return;
    }
    handle->stamp = node->stamp;
  } else {
    int err = current(*node, &st);
    if (!err) err = permitted(req, st, R_OK);
    if (err) {
      fuse_reply_err(req, err);
      return;
    }
    base::Status error;
    {
      const RequestInterrupt interrupt(req);
      base::Result<std::shared_ptr<engine::Reader>> opened = catalog_->open(node->file, interrupt.token());
      if (opened.ok()) handle->reader = std::move(opened).value();
      else error = opened.status();
    }
    if (!handle->reader) {
      const bool interrupted = error.code() == EINTR;  // the wait was stopped, the build goes on
      if (!interrupted) spdlog::warn("{}: cannot open: {}", node->source, error.message());
      fuse_reply_err(req, interrupted ? EINTR : EIO);
      return;
    }
    // The source changed again while its index was made: that index is another node's.
    if (!describes(handle->reader->index(), *node)) {
      fuse_reply_err(req, ESTALE);
      return;
    }
  }
  // The kernel's page cache of a node only ever holds the node's content (a new content is a new
  // node, and reads on a node's descriptors serve its content or fail): it is kept across opens.
  fi->keep_cache = 1;
  // A damaged file is read around the page cache: a read that runs into damage then returns the
  // verified bytes before it (a short read) and the next read fails with EIO, exactly at the
  // damage. Through the page cache a short reply would look like the end of the file, and a
  // failed page would take the good bytes of its neighbours with it.
  if (handle->reader && handle->reader->index().damaged_blocks) {
    fi->direct_io = 1;
    fi->keep_cache = 0;
  }
  track(handle.get(), true);
  fi->fh = reinterpret_cast<uint64_t>(handle.get());
  if (fuse_reply_open(req, fi) == 0) handle.release();
  else track(handle.get(), false);
}

void Filesystem::read(fuse_req_t req, size_t size, off_t off, fuse_file_info* fi) {
  auto* handle = reinterpret_cast<FileHandle*>(fi->fh);
  if (!handle->reader) {
    read_plain(req, *handle, size, off);
    return;
  }
  // Never waits for a decode: a read of blocks being decoded is answered by the decoder thread
  // that finishes the last of them, and this request thread goes back to serve others (cache hits
  // never queue behind misses for a request thread).
  handle->reader->read_async(static_cast<uint64_t>(off), size,
                             [req](ssize_t n, std::vector<engine::Slice>& slices) { reply_read(req, n, slices); });
}

// A plain file's descriptor reads the source file itself, which a rewrite in place changes under
// it: the bytes are read first, then the source's stamp checked, and they are served only if it
// is still the node's (a write, a truncation or a chmod during or before the read changed the
// ctime at least). Otherwise EIO: the content this descriptor was opened on is gone, and the
// kernel's page cache of the node must never get another content's pages.
void Filesystem::read_plain(fuse_req_t req, const FileHandle& handle, size_t size, off_t off) {
  std::unique_ptr<uint8_t[]> buf(new uint8_t[size]);
  const ssize_t n = io::pread_full(handle.fd, buf.get(), size, static_cast<uint64_t>(off));
  if (n < 0) {
    fuse_reply_err(req, static_cast<int>(-n));
    return;
  }
  struct stat st;
  if (fstat(handle.fd, &st) != 0) {
    fuse_reply_err(req, errno);
    return;
  }
  if (SourceStamp::of(st) != handle.stamp) {
    fuse_reply_err(req, EIO);
    return;
  }
  fuse_reply_buf(req, reinterpret_cast<const char*>(buf.get()), static_cast<size_t>(n));
}

void Filesystem::reply_read(fuse_req_t req, ssize_t n, const std::vector<engine::Slice>& slices) noexcept {
  if (n < 0) {
    fuse_reply_err(req, static_cast<int>(-n));
    return;
  }
  if (slices.empty()) {
    fuse_reply_buf(req, nullptr, 0);  // at or past the end
    return;
  }
  // Written straight from the decoded blocks (the kernel copies them once, from here); the slices
  // hold their blocks until this returns.
  try {
    thread_local std::vector<iovec> iov;
    iov.resize(slices.size());
    for (size_t i = 0; i < slices.size(); ++i) iov[i] = iovec{const_cast<uint8_t*>(slices[i].data), slices[i].size};
    fuse_reply_iov(req, iov.data(), static_cast<int>(iov.size()));
  } catch (const std::exception& e) {
    spdlog::error("a read failed: {}", e.what());
    fuse_reply_err(req, EIO);
  }
}

void Filesystem::release(fuse_req_t req, fuse_file_info* fi) {
  auto* h = reinterpret_cast<FileHandle*>(fi->fh);
  track(h, false);
  delete h;
  fuse_reply_err(req, 0);
}

void Filesystem::statfs(fuse_req_t req) {
  struct statvfs sv;
  if (const int err = root_.statvfs(&sv)) {
    fuse_reply_err(req, err);
    return;
  }
  // As read-only file systems (squashfuse) do: the size is the content, and nothing is free. The
  // content counted is the decompressed size of every file whose index is ready (known without
  // waiting: df never waits for an index, and the total grows as indexing goes on); the source's
  // plain files are not counted. The name length limit stays the source's.
  uint64_t total = 0;
  for (const engine::FileRef& file : inodes_.current_decompressed_files())
    if (const engine::IndexStatus s = catalog_->status(file); s.ready()) total += s.index->decompressed_size;
  constexpr unsigned long kUnit = 4096;
  sv.f_bsize = sv.f_frsize = kUnit;
  sv.f_blocks = static_cast<fsblkcnt_t>((total + kUnit - 1) / kUnit);
  sv.f_bfree = sv.f_bavail = 0;
  sv.f_files = static_cast<fsfilcnt_t>(inodes_.size());
  sv.f_ffree = sv.f_favail = 0;
  sv.f_flag |= ST_RDONLY;
  fuse_reply_statfs(req, &sv);
}

}  // namespace mibz2::fs
