// The Filesystem's own life: what it builds (SOURCE, the front door to the engine and the catalog,
// the inode table), its threads (the tree walk, the session watcher), the start and end of the
// kernel session, and what it frees at unmount.
#include "fs/filesystem.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <spdlog/spdlog.h>

#include "fs/source_changes.h"
#include "fs/source_tree.h"

namespace mibz2::fs {
namespace {

catalog::FrontDoorOptions door_options(const FilesystemOptions& options, const catalog::SourceAccess& access) {
  // Drop-behind: what a sequential reader has passed is in the kernel's page cache (keep_cache).
  return {.threads = options.threads, .cache_size = options.cache_size, .drop_behind = true,
          .index_dir = options.index_dir, .access = &access, .named_index = options.named_index};
}

// SOURCE's identity for the root node.
struct stat stat_root(const io::SourceRoot& root) {
  struct stat st{};
  if (const int err = root.lstat("", &st); err != 0)
    spdlog::error("{}: cannot stat SOURCE: {}", root.path(), std::strerror(err));
  return st;
}

}  // namespace

Filesystem::Filesystem(const FilesystemOptions& options, MountSource source)
    : options_(options),
      source_(std::move(source)),
      root_(*source_.root),
      root_stat_(stat_root(root_)),
      door_(std::make_unique<catalog::FrontDoor>(door_options(options, *source_.access))),
      catalog_(door_->catalog()),
      inodes_(root_, io::SourceStamp::of(root_stat_), catalog_),
      source_watcher_(root_),
      operations_({options_, root_, *door_, inodes_, source_watcher_, handles_}) {
  const index::IndexStore& store_ = door_->store();
  if (store_.dir().empty())
    spdlog::warn("{}: indexes are kept in memory only, so every mount indexes every file again (one full decode "
                 "of each); give -o index_dir=DIR to keep them",
                 store_.problem());
  // Test hook: builds are held back while the named file exists (the mount tests of waits and of
  // attribute reads during a build).
  if (const char* hold = std::getenv("MIBZ2FS_TEST_HOLD_BUILDS"); hold && *hold) {
    spdlog::warn("test hook: index builds are held while {} exists", hold);
    catalog_.hold_builds_while([path = std::string(hold)] { return ::access(path.c_str(), F_OK) == 0; });
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
  catalog_.set_distrust_listener([this](const catalog::FileRef& file) { retire(file); });
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
  catalog_.shutdown();
  handles_.close_all();  // the session ended with files still open
  spdlog::info("unmounted {}; engine counters: {} {}", options_.mountpoint, door_->engine().stats().summary(),
               catalog_.summary().counters());
  door_.reset();
}

void Filesystem::set_session(fuse_session* se) {
  session_ = se;
  notifier_.start(se);
  // A remote SOURCE tells nothing of its changes: it is looked at again instead (remote_source_root.h).
  if (!root_.watchable()) return;
  source_watcher_.start(
      FUSE_ROOT_ID, io::SourceStamp::of(root_stat_),
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
void Filesystem::retire(const catalog::FileRef& file) {
  try {
    const std::optional<InodeTable::Retired> r = inodes_.retire(file);
    if (!r) return;
    notifier_.invalidate_inode(r->ino);
    if (r->parent) notifier_.invalidate_entry(r->parent, r->name);
  } catch (const std::exception& e) {  // out of memory: the old node still answers ESTALE
    spdlog::error("{}: cannot retire its node: {}", file->name(), e.what());
  }
}

void Filesystem::start_tree_walk() {
  walker_ = std::thread([this] { guard_thread("tree walk", [this] { walk_tree(); }); });
}

void Filesystem::walk_tree() {
  size_t files = 0;
  for_each_decompressed_file(root_, [this] { return stopping_.load(); }, [&](const std::string& rel, const catalog::ShownEntry& e) {
    const NodeRef node = inodes_.get_or_create(rel, NodeKind::kDecompressed, e.stamp);
    catalog_.prepare(node->file, catalog::Catalog::Need::kSoon);
    ++files;
  });
  spdlog::info("found {} compressed files under {}; {} still to index", files, root_.path(), catalog_.pending());
}

// Threads of our own end with a log line, never with an exception (which would end the daemon).
void Filesystem::guard_thread(const char* what, const std::function<void()>& body) {
  try {
    body();
  } catch (const std::exception& e) {
    spdlog::error("{} stopped: {}", what, e.what());
  }
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
      catalog_.shutdown();
      return;
    }
  }
}

}  // namespace mibz2::fs
