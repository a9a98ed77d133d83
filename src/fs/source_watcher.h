// Follows changes in the source directories the kernel knows through the mount, with inotify, so
// that what the kernel cached of them (names and attributes, for an hour) can be dropped within a
// second of the change: a dump renamed over the old one by a mirror's rsync, a file rewritten in
// place, added or deleted.
//
// Watched: SOURCE itself, and each directory while the kernel holds a node of it (watch() when it
// is looked up, unwatch() when the last lookup is forgotten): the kernel can only hold names in
// directories it holds. Each watch is the directory's inode, reached beneath SOURCE (io::SourceRoot,
// never through a symlink) and checked to be the node's, so a directory renamed away stays watched
// under the node that stands for it, and one put in its place is not watched for that node.
//
// Not seen: changes that make no inotify event here: those made on another machine to a network
// file system (NFS, CIFS/SMB, a FUSE source; changes made through this machine's own mount of it
// are seen), and directories past the watch limit (fs.inotify.max_user_watches, counted per user
// for all of that user's programs: logged once, and those directories are then not followed).
// Such changes are still seen at the next open of a file (which checks its source), and names and
// sizes after the kernel's attribute timeout.
//
// Events come from a thread of the watcher's own, coalesced: a burst of events about one name (a
// download writes many times, rsync writes a temporary file and renames it) is reported once, at
// most 50 ms after its first event; writes alone (IN_MODIFY) are reported when they pause for
// 200 ms, and at least once a second while they go on.
#pragma once

#include <fuse_lowlevel.h>

#include <atomic>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "io/source_root.h"
#include "io/source_stamp.h"

namespace mibz2::fs {

class SourceWatcher {
 public:
  // What changed in the directory of node `dir`: the entry `name`, or with an empty name the
  // directory itself (its attributes; `gone` when it was deleted or moved away, or its file
  // system unmounted). `names`: entries were added, removed or renamed (the directory's own
  // attributes changed with them).
  struct Change {
    fuse_ino_t dir = 0;
    std::string name;
    bool names = false;
    bool gone = false;
  };
  // Called on the watcher's thread with the changes due at once (each directory and name once);
  // must not block for long (the next events wait) and must not wait for the kernel.
  using ChangeListener = std::function<void(const std::vector<Change>&)>;
  // Events were lost (the kernel's queue overflowed): anything may have changed.
  using LossListener = std::function<void()>;

  explicit SourceWatcher(const io::SourceRoot& root) : root_(root) {}
  ~SourceWatcher() { stop(); }
  SourceWatcher(const SourceWatcher&) = delete;
  SourceWatcher& operator=(const SourceWatcher&) = delete;

  // Starts following SOURCE (as node `root_ino`, stamped `root_stamp`) and the directories
  // watch() names, reporting to the listeners from a thread of its own. Without inotify (too many
  // instances: fs.inotify.max_user_instances) it says so once and follows nothing.
  void start(fuse_ino_t root_ino, const io::SourceStamp& root_stamp, ChangeListener changed, LossListener lost);
  // Ends following: the thread is joined, the watches closed; later calls do nothing. Call it
  // before the kernel notifier stops.
  void stop();

  // Follows the directory `rel` for node `dir`, if it is still the file `stamp` names (device and
  // inode). Blocks only on opening the directory (as a lookup's own lstat does), never on the
  // watcher's thread.
  void watch(fuse_ino_t dir, const std::string& rel, const io::SourceStamp& stamp);
  // Stops following the directory of node `dir` (its node left the table). Never allocates.
  void unwatch(fuse_ino_t dir) noexcept;

  // Test hooks: at most `n` directories watched, as if fs.inotify.max_user_watches were reached;
  // more than `n` names waiting to be reported count as a loss, as an overflow of the kernel's queue.
  void limit_watches_for_testing(size_t n) { test_limit_ = n; }
  void limit_pending_for_testing(size_t n) { max_pending_ = n; }
  // Directories watched now (tests, stats).
  size_t watches() const;

 private:
  struct Pending;
  void run();
  // Adds the watch for `dir` on the open directory `fd` (under mu_). Returns 0 or an errno value.
  int add_watch_locked(fuse_ino_t dir, const std::string& rel, int fd);
  void warn_limit_once(const std::string& rel, int err);

  const io::SourceRoot& root_;
  ChangeListener changed_;  // set by start() before the thread starts, then read only by it
  LossListener lost_;
  std::atomic<size_t> test_limit_{0};  // 0: no limit but the kernel's
  std::atomic<size_t> max_pending_{16384};  // more names waiting are a loss (set before start())
  std::atomic<bool> warned_limit_{false};

  // Held while a watch is added or removed (inotify_add_watch of an open descriptor and
  // inotify_rm_watch: no path resolution in SOURCE, no I/O) and while the thread maps a watch to
  // its nodes: so that a watch is never removed between its adding and its recording.
  mutable std::mutex mu_;
  // --- guarded by mu_ ---
  bool stopped_ = false;                                      // stop() was called: start() does nothing
  int inotify_fd_ = -1;                                       // -1: not following
  int wake_fd_ = -1;                                          // eventfd: stop() wakes the thread
  std::unordered_map<int, std::vector<fuse_ino_t>> nodes_of_;  // watch -> the directory nodes on it
  std::unordered_map<fuse_ino_t, int> watch_of_;             // directory node -> its watch
  std::thread thread_;
};

}  // namespace mibz2::fs
