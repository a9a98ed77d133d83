#include "fs/filesystem.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <vector>

#include <spdlog/spdlog.h>

#include "fs/request_interrupt.h"
#include "fs/source_changes.h"
#include "fs/source_directory.h"
#include "fs/source_tree.h"
#include "engine/reader.h"
#include "fs/fuse_session_settings.h"
#include "io/fd_io.h"

namespace mibz2::fs {
namespace {

constexpr double kNegativeTimeout = 1.0;  // how long the kernel may remember a missing name

uint64_t realtime_ns() {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return ns_of(t);
}

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

Filesystem& fs_of(fuse_req_t req) { return **static_cast<Filesystem**>(fuse_req_userdata(req)); }

NodeKind kind_of(const ShownEntry& e) {
  if (e.decompressed) return e.type == SourceEntry::Type::kSymlink ? NodeKind::kLinkToDecompressed : NodeKind::kDecompressed;
  switch (e.type) {
    case SourceEntry::Type::kDirectory: return NodeKind::kDirectory;
    case SourceEntry::Type::kSymlink: return NodeKind::kSymlink;
    default: return NodeKind::kRegular;
  }
}

// Extended attributes of decompressed files, read by name and never listed: the first two always,
// the others once the index is ready (reading an attribute never waits for an index: until then
// they are ENODATA).
constexpr const char* kXattrNames[] = {"user.mibz2fs.compressed_size", kIndexXattr, "user.mibz2fs.blocks",
                                       "user.mibz2fs.damaged_blocks", "user.mibz2fs.damage"};

}  // namespace

struct Filesystem::FileHandle {
  int fd = -1;                             // plain files: the source, read directly
  SourceStamp stamp;                       // plain files: the node's, which every read checks
  std::shared_ptr<engine::Reader> reader;  // decompressed files
  ~FileHandle() {
    if (fd >= 0) close(fd);
  }
};

struct Filesystem::DirHandle {
  std::shared_ptr<const std::vector<ShownEntry>> entries;
};

namespace {

engine::EngineOptions engine_options(const FilesystemOptions& options) {
  engine::EngineOptions eo;
  eo.threads = options.threads;
  eo.cache_bytes = options.cache_bytes;
  return eo;
}

// SOURCE opened once, before anything else reads it; its identity for the root node.
struct stat open_root(io::SourceRoot& root, const std::string& path) {
  struct stat st{};
  if (const int err = root.open(path); err != 0)
    spdlog::error("{}: cannot open SOURCE: {}", path, std::strerror(err));
  else if (const int e2 = root.lstat("", &st); e2 != 0)
    spdlog::error("{}: cannot stat SOURCE: {}", path, std::strerror(e2));
  return st;
}

}  // namespace

Filesystem::Filesystem(const FilesystemOptions& options)
    : options_(options),
      root_stat_(open_root(root_, options.source)),
      access_(root_),
      store_(options.index_dir),
      engine_(std::make_unique<engine::Engine>(engine_options(options))),
      catalog_(std::make_unique<engine::Catalog>(*engine_, store_, &access_)),
      inodes_(root_, SourceStamp::of(root_stat_), *catalog_),
      source_watcher_(root_) {
  if (store_.dir().empty())
    spdlog::warn("{}: indexes are kept in memory only, so every mount indexes every file again (one full decode "
                 "of each); give -o index_dir=DIR to keep them",
                 store_.problem());
  // Test hook: builds are held back while the named file exists (the mount tests of waits and of
  // attribute reads during a build).
  if (const char* hold = std::getenv("MIBZ2FS_TEST_HOLD_BUILDS"); hold && *hold) {
    spdlog::warn("test hook: index builds are held while {} exists", hold);
    catalog_->hold_builds_while([path = std::string(hold)] { return ::access(path.c_str(), F_OK) == 0; });
  }
  // Test hook: at most this many directories watched, as if fs.inotify.max_user_watches were reached.
  if (const char* cap = std::getenv("MIBZ2FS_TEST_MAX_WATCHES"); cap && *cap) {
    spdlog::warn("test hook: at most {} directories watched for changes", cap);
    source_watcher_.limit_watches_for_testing(std::strtoull(cap, nullptr, 10));
  }
  // Test hook: more than this many names waiting to be reported count as lost events.
  if (const char* cap = std::getenv("MIBZ2FS_TEST_MAX_PENDING"); cap && *cap) {
    spdlog::warn("test hook: more than {} changes waiting count as lost", cap);
    source_watcher_.limit_pending_for_testing(std::strtoull(cap, nullptr, 10));
  }
  catalog_->set_distrust_listener([this](const engine::FileRef& file) { retire(file); });
  watcher_ = std::thread([this] { guard_thread("session watcher", [this] { watch_session(); }); });
}

Filesystem::~Filesystem() {
  end_session();
  {
    std::lock_guard lk(watch_mu_);
    stopping_ = true;
  }
  watch_cv_.notify_all();
  if (walker_.joinable()) walker_.join();
  watcher_.join();
  catalog_->shutdown();
  // Handles the kernel never released (the session ended with files still open).
  for (FileHandle* h : open_files_) delete h;
  for (DirHandle* h : open_dirs_) delete h;
  spdlog::info("unmounted {}; engine counters: {} {}", options_.mountpoint, engine_->stats().summary(),
               catalog_->summary().counters());
  catalog_.reset();
  engine_.reset();
}

void Filesystem::set_session(fuse_session* se) {
  session_ = se;
  notifier_.start(se);
  source_watcher_.start(
      FUSE_ROOT_ID, SourceStamp::of(root_stat_),
      [this](const std::vector<SourceWatcher::Change>& changes) { drop_changed(inodes_, notifier_, changes); },
      [this] {
        spdlog::info("changes in SOURCE came faster than they could be followed: the kernel is told to drop "
                     "every name and directory attribute of the mount");
        drop_everything(inodes_, notifier_);
      });
}

void Filesystem::end_session() {
  source_watcher_.stop();  // first: it tells the notifier
  notifier_.stop();
}

// A new number for the path (so a new page cache and attributes in the kernel, filled from the
// index built again), and the old inode's pages, attributes and name dropped: no byte or size of
// the distrusted index survives in the kernel. Descriptors open on the old node get EIO from its
// Reader (Reader::distrusted), or ESTALE where the kernel asks for the old node's attributes first.
void Filesystem::retire(const engine::FileRef& file) {
  try {
    const std::optional<InodeTable::Retired> r = inodes_.retire(file);
    if (!r) return;
    notifier_.invalidate_inode(r->ino);
    if (r->parent) notifier_.invalidate_entry(r->parent, r->name);
  } catch (const std::exception& e) {  // out of memory: the old node still answers ESTALE
    spdlog::error("{}: cannot retire its node: {}", file->path(), e.what());
  }
}

void Filesystem::start_tree_walk() {
  walker_ = std::thread([this] { guard_thread("tree walk", [this] { walk_tree(); }); });
}

void Filesystem::walk_tree() {
  size_t files = 0;
  for_each_decompressed_file(root_, [this] { return stopping_.load(); }, [&](const std::string& rel, const ShownEntry& e) {
    const NodeRef node = inodes_.get_or_create(rel, NodeKind::kDecompressed, e.stamp);
    catalog_->prepare(node->file, engine::Catalog::Need::kSoon);
    ++files;
  });
  spdlog::info("found {} compressed files under {}; {} still to index", files, options_.source, catalog_->pending());
}

// Threads of our own end with a log line, never with an exception (which would end the daemon).
void Filesystem::guard_thread(const char* what, const std::function<void()>& body) {
  try {
    body();
  } catch (const std::exception& e) {
    spdlog::error("{} stopped: {}", what, e.what());
  }
}

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

// --- the end of the session ---

void Filesystem::watch_session() {
  // Request threads blocked waiting for an index must be released when the session ends
  // (unmount or signal), or the FUSE loop would wait for them to finish; libfuse gives no hook
  // for that moment, so this thread looks ten times a second.
  std::unique_lock lk(watch_mu_);
  while (!stopping_) {
    watch_cv_.wait_for(lk, std::chrono::milliseconds(100), [this] { return stopping_.load(); });
    fuse_session* se = session_.load();
    if (se && fuse_session_exited(se)) {
      lk.unlock();
      catalog_->shutdown();
      return;
    }
  }
}

// --- the C callback table ---

namespace {

// No exception may cross libfuse's C frames: a request that throws (out of memory) is answered
// with EIO and logged, and the daemon goes on. Operations reply only as their last step, so one
// that throws has not replied yet.
template <class F>
void guarded(fuse_req_t req, F&& op) {
  try {
    op();
  } catch (const std::exception& e) {
    spdlog::error("a request failed: {}", e.what());
    fuse_reply_err(req, EIO);
  }
}

void op_init(void* userdata, fuse_conn_info* conn) { (*static_cast<Filesystem**>(userdata))->init(conn); }
void op_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  guarded(req, [&] { fs_of(req).lookup(req, parent, name); });
}
void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t n) {
  fs_of(req).forget(ino, n);  // cannot throw: a count and an erase, nothing allocated
  fuse_reply_none(req);
}
void op_forget_multi(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
  for (size_t i = 0; i < count; ++i) fs_of(req).forget(forgets[i].ino, forgets[i].nlookup);
  fuse_reply_none(req);
}
void op_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) { guarded(req, [&] { fs_of(req).getattr(req, ino); }); }
void op_readlink(fuse_req_t req, fuse_ino_t ino) { guarded(req, [&] { fs_of(req).readlink(req, ino); }); }
void op_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  guarded(req, [&] { fs_of(req).opendir(req, ino, fi); });
}
void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  guarded(req, [&] { fs_of(req).readdir(req, ino, size, off, fi, false); });
}
void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  guarded(req, [&] { fs_of(req).readdir(req, ino, size, off, fi, true); });
}
void op_releasedir(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) { fs_of(req).releasedir(req, fi); }
void op_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) { guarded(req, [&] { fs_of(req).open(req, ino, fi); }); }
void op_read(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info* fi) {
  guarded(req, [&] { fs_of(req).read(req, size, off, fi); });
}
void op_release(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) { fs_of(req).release(req, fi); }
void op_statfs(fuse_req_t req, fuse_ino_t) { guarded(req, [&] { fs_of(req).statfs(req); }); }
void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  guarded(req, [&] { fs_of(req).getxattr(req, ino, name, size); });
}
void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  guarded(req, [&] { fs_of(req).listxattr(req, ino, size); });
}
void op_flush(fuse_req_t req, fuse_ino_t, fuse_file_info*) { fuse_reply_err(req, 0); }
void op_fsync(fuse_req_t req, fuse_ino_t, int, fuse_file_info*) { fuse_reply_err(req, 0); }

// Every operation that would change something: the mount is read-only.
void rofs(fuse_req_t req) { fuse_reply_err(req, EROFS); }
void op_setattr(fuse_req_t req, fuse_ino_t, struct stat*, int, fuse_file_info*) { rofs(req); }
void op_mknod(fuse_req_t req, fuse_ino_t, const char*, mode_t, dev_t) { rofs(req); }
void op_mkdir(fuse_req_t req, fuse_ino_t, const char*, mode_t) { rofs(req); }
void op_unlink(fuse_req_t req, fuse_ino_t, const char*) { rofs(req); }
void op_rmdir(fuse_req_t req, fuse_ino_t, const char*) { rofs(req); }
void op_symlink(fuse_req_t req, const char*, fuse_ino_t, const char*) { rofs(req); }
void op_rename(fuse_req_t req, fuse_ino_t, const char*, fuse_ino_t, const char*, unsigned) { rofs(req); }
void op_link(fuse_req_t req, fuse_ino_t, fuse_ino_t, const char*) { rofs(req); }
void op_write(fuse_req_t req, fuse_ino_t, const char*, size_t, off_t, fuse_file_info*) { rofs(req); }
void op_create(fuse_req_t req, fuse_ino_t, const char*, mode_t, fuse_file_info*) { rofs(req); }
void op_setxattr(fuse_req_t req, fuse_ino_t, const char*, const char*, size_t, int) { rofs(req); }
void op_removexattr(fuse_req_t req, fuse_ino_t, const char*) { rofs(req); }
void op_fallocate(fuse_req_t req, fuse_ino_t, int, off_t, off_t, fuse_file_info*) { rofs(req); }

fuse_lowlevel_ops make_operations() {
  fuse_lowlevel_ops ops{};
  ops.init = op_init;
  ops.lookup = op_lookup;
  ops.forget = op_forget;
  ops.forget_multi = op_forget_multi;
  ops.getattr = op_getattr;
  ops.readlink = op_readlink;
  ops.opendir = op_opendir;
  ops.readdir = op_readdir;
  ops.readdirplus = op_readdirplus;
  ops.releasedir = op_releasedir;
  ops.open = op_open;
  ops.read = op_read;
  ops.release = op_release;
  ops.statfs = op_statfs;
  ops.getxattr = op_getxattr;
  ops.listxattr = op_listxattr;
  ops.flush = op_flush;
  ops.fsync = op_fsync;
  ops.setattr = op_setattr;
  ops.mknod = op_mknod;
  ops.mkdir = op_mkdir;
  ops.unlink = op_unlink;
  ops.rmdir = op_rmdir;
  ops.symlink = op_symlink;
  ops.rename = op_rename;
  ops.link = op_link;
  ops.write = op_write;
  ops.create = op_create;
  ops.setxattr = op_setxattr;
  ops.removexattr = op_removexattr;
  ops.fallocate = op_fallocate;
  return ops;
}

}  // namespace

const fuse_lowlevel_ops& Filesystem::operations() {
  static const fuse_lowlevel_ops ops = make_operations();
  return ops;
}

}  // namespace mibz2::fs
