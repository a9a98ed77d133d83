// The FUSE adapter's composition root: a mount's parts (SOURCE, the front door to the engine and
// the catalog, the inode table, the kernel notifier and the source watcher), wired together, with the
// threads of the mount (the tree walk, the session watcher) and the start and end of the kernel
// session. The operations themselves are in operations.h, their C table in fuse_operations.h.
#pragma once

#include <fuse_lowlevel.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>

#include "catalog/catalog.h"
#include "catalog/front_door.h"
#include "fs/mount_source.h"
#include "fs/filesystem_options.h"
#include "fs/inode_table.h"
#include "fs/kernel_notifier.h"
#include "fs/open_handles.h"
#include "fs/operations.h"
#include "fs/source_watcher.h"
#include "io/source_root.h"

namespace mibz2::fs {

class Filesystem {
 public:
  // Serves `source` (open_mount_source's: SOURCE as options.source names it).
  Filesystem(const FilesystemOptions& options, MountSource source);
  ~Filesystem();  // stops the tree walk, the catalog's builds and the pool
  Filesystem(const Filesystem&) = delete;
  Filesystem& operator=(const Filesystem&) = delete;

  // What the session's requests are answered by (the userdata of fuse_operations()).
  Operations& operations() { return operations_; }

  // Walks the tree in the background and queues every compressed file for indexing.
  void start_tree_walk();
  // Before the loop starts: the kernel notifier and the source watcher start.
  void set_session(fuse_session* se);
  // The session loop returned: SOURCE is no longer watched and nothing more is sent to the kernel
  // (call before fuse_session_unmount closes the session's descriptor).
  void end_session();

 private:
  static void guard_thread(const char* what, const std::function<void()>& body);
  void walk_tree();
  void watch_session();  // releases index waiters when the session ends
  // The catalog found that the index `file` was shown from does not describe it: its node is
  // retired and the kernel told to drop what it cached from that index (never waits).
  void retire(const catalog::FileRef& file);

  FilesystemOptions options_;
  MountSource source_;        // SOURCE: everything under it is reached through source_.root, and
                              // the catalog reaches its files through source_.access
  const io::SourceRoot& root_;
  struct stat root_stat_;
  std::unique_ptr<catalog::FrontDoor> door_;  // the index store, the engine and the catalog
  catalog::Catalog& catalog_;  // door_'s: every decompressed file's index life
  InodeTable inodes_;
  KernelNotifier notifier_;  // started by set_session, stopped by end_session or the destructor
  SourceWatcher source_watcher_;  // the same; tells the notifier what SOURCE changed (source_changes.h)
  OpenHandles handles_;       // open files and directories, freed at unmount if never released
  Operations operations_;
  std::atomic<fuse_session*> session_{nullptr};  // set by main after the notifier started
  std::thread walker_;
  std::atomic<bool> stopping_{false};
  std::mutex watch_mu_;  // a leaf lock; with watch_cv_, lets the destructor wake the session watcher
  std::condition_variable watch_cv_;
  std::thread watcher_;
};

}  // namespace mibz2::fs
