// The FUSE adapter: mirrors the source tree read-only, with compressed files shown decompressed
// through the engine. Each operation replies exactly once; helpers return an errno value.
#pragma once

#include <fuse_lowlevel.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>
#include <unordered_set>

#include "engine/engine.h"
#include "engine/catalog.h"
#include "engine/reader.h"
#include "fs/inode_table.h"
#include "fs/beneath_access.h"
#include "fs/kernel_notifier.h"
#include "fs/source_watcher.h"
#include "io/source_root.h"
#include "index/index_store.h"

namespace mibz2::fs {

// What a mount serves and with what (mibz2fs's command line fills it: src/tools/mount_options.h).
struct FilesystemOptions {
  std::string source;        // absolute path of SOURCE
  std::string mountpoint;    // absolute path of MOUNTPOINT (for the logs)
  unsigned threads = 0;      // decoder threads; 0: engine::default_decoder_threads()
  uint64_t cache_bytes = 0;  // decoded-block cache; 0: engine::default_cache_bytes()
  std::string index_dir;     // empty: index::default_index_dir()
};

class Filesystem {
 public:
  explicit Filesystem(const FilesystemOptions& options);
  ~Filesystem();  // stops the tree walk, the catalog's builds and the pool
  Filesystem(const Filesystem&) = delete;
  Filesystem& operator=(const Filesystem&) = delete;

  // The operations table; userdata must point to a Filesystem* holder (see mibz2fs_main.cc).
  static const fuse_lowlevel_ops& operations();

  // Walks the tree in the background and queues every compressed file for indexing.
  void start_tree_walk();
  // Before the loop starts: the kernel notifier and the source watcher start.
  void set_session(fuse_session* se);
  // The session loop returned: SOURCE is no longer watched and nothing more is sent to the kernel
  // (call before fuse_session_unmount closes the session's descriptor).
  void end_session();

  // --- operations (public for the C callbacks) ---
  void init(fuse_conn_info* conn);
  void lookup(fuse_req_t req, fuse_ino_t parent, const char* name);
  void forget(fuse_ino_t ino, uint64_t nlookup);
  void getattr(fuse_req_t req, fuse_ino_t ino);
  void readlink(fuse_req_t req, fuse_ino_t ino);
  void opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
  void readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi, bool plus);
  void releasedir(fuse_req_t req, fuse_file_info* fi);
  void open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
  void read(fuse_req_t req, size_t size, off_t off, fuse_file_info* fi);
  void release(fuse_req_t req, fuse_file_info* fi);
  void statfs(fuse_req_t req);
  void getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size);
  void listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);

 private:
  // The mirrored listing of a directory node (rebuilt when the source directory changed); the
  // directory's attributes in *dir_st if given.
  int listing(Node& dir, std::shared_ptr<const std::vector<ShownEntry>>* out, struct stat* dir_st = nullptr);
  // lstat of the node's source, through SOURCE's descriptor; ESTALE when the path holds another
  // file than the node's now, or another content of it. Returns an errno value.
  int current(const Node& node, struct stat* st) const;
  // Whether the source as `st` shows it is the file and content the node stands for.
  static bool stands_for(const Node& node, const struct stat& st);
  // Whether a decompressed file's index describes the content its node stands for.
  static bool describes(const index::BlockIndex& index, const Node& node);
  // Whether the requesting user may `mask` (R_OK, X_OK) the file as it is now: 0 or EACCES.
  static int permitted(fuse_req_t req, const struct stat& st, int mask);
  int shown_attributes(Node& node, struct stat* st, bool wait, bool* final, std::stop_token stop = {});
  static void guard_thread(const char* what, const std::function<void()>& body);
  // Answers a read with the engine's result: its bytes straight from the decoded blocks, or the
  // error. Exactly one reply, on whichever thread ends the read.
  static void reply_read(fuse_req_t req, ssize_t n, const std::vector<engine::Slice>& slices) noexcept;
  struct FileHandle;
  struct DirHandle;
  // Answers a read of a plain file: its source's bytes, if it still holds the node's content.
  static void read_plain(fuse_req_t req, const FileHandle& handle, size_t size, off_t off);
  // The attributes of a node. For a decompressed file with `wait` this waits for its index (and
  // fails with EIO if there can be none, EINTR when `stop` is requested first); without, *final
  // says whether the size is real.
  int attributes(Node& node, struct stat* st, bool wait, bool* final, std::stop_token stop = {});
  // What a symlink node points to in the mount.
  int link_target(Node& node, std::string* target);
  // Looks up `name` in `dir` and fills a FUSE entry (counts a lookup, given back on failure).
  int make_entry(Node& dir, const ShownEntry& e, fuse_entry_param* entry);
  // Gives back lookups of a node; a directory whose node leaves the table is no longer watched.
  void forget_lookups(fuse_ino_t ino, uint64_t count) noexcept;
  void walk_tree();
  // Records a handle as open (or no longer) so that unmount can free what the kernel never released.
  void track(FileHandle* h, bool open);
  void track(DirHandle* h, bool open);
  void watch_session();  // releases index waiters when the session ends
  // The catalog found that the index `file` was shown from does not describe it: its node is
  // retired and the kernel told to drop what it cached from that index (never waits).
  void retire(const engine::FileRef& file);

  FilesystemOptions options_;
  io::SourceRoot root_;        // SOURCE: everything under it is reached through this
  struct stat root_stat_;
  BeneathAccess access_;      // the catalog's way to sources: beneath root_, the node's file only
  index::IndexStore store_;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<engine::Catalog> catalog_;  // every decompressed file's index life
  InodeTable inodes_;
  KernelNotifier notifier_;  // started by set_session, stopped by end_session or the destructor
  SourceWatcher source_watcher_;  // the same; tells the notifier what SOURCE changed (source_changes.h)
  std::atomic<fuse_session*> session_{nullptr};  // set by main after the notifier started
  std::thread walker_;
  std::atomic<bool> stopping_{false};
  std::mutex watch_mu_;  // a leaf lock; with watch_cv_, lets the destructor wake the session watcher
  std::condition_variable watch_cv_;
  std::thread watcher_;
  std::mutex handles_mu_;  // a leaf lock: guards the two sets: open handles, freed at unmount if never released
  std::unordered_set<FileHandle*> open_files_;
  std::unordered_set<DirHandle*> open_dirs_;
  double timeout_ = 3600.0;  // attribute and entry cache time: a node's attributes never change (a
                             // new content is a new node), a stale node answers ESTALE at open, and
                             // the source watcher has the kernel drop the names a change concerns
};

}  // namespace mibz2::fs
