// Tells the kernel to drop what it cached of the mount: an inode's pages and attributes
// (fuse_lowlevel_notify_inval_inode) or a name in a directory (fuse_lowlevel_notify_inval_entry),
// when what the daemon showed under them is no longer true (an index found not to describe its
// file; a source that changed).
//
// The notifications are sent from a thread of their own, in the order they were asked for. They
// must never be sent from where the kernel may wait for the daemon: invalidating an inode's pages
// waits for the page locks of its reads in progress, and a read in progress waits for its reply
// from the daemon. A mismatch is found by the decoder thread that is about to answer such a read,
// so asking only queues, and never waits.
#pragma once

#include <fuse_lowlevel.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

namespace mibz2::fs {

class KernelNotifier {
 public:
  KernelNotifier() = default;
  ~KernelNotifier() { stop(); }
  KernelNotifier(const KernelNotifier&) = delete;
  KernelNotifier& operator=(const KernelNotifier&) = delete;

  // Starts sending to `session`'s kernel connection (what was asked before waits until then).
  void start(fuse_session* session);
  // Ends sending: what is still queued is dropped, the thread is joined; later requests are
  // ignored. Call it before the session's descriptor is closed (fuse_session_unmount).
  void stop();

  // The kernel drops the inode's cached pages and attributes (asked again at the next access).
  void invalidate_inode(fuse_ino_t ino);
  // The kernel drops the name `name` in directory `parent` (looked up again at the next access).
  void invalidate_entry(fuse_ino_t parent, std::string name);

  // At most this many notifications wait; more are dropped (and that is logged once).
  static constexpr size_t kMaxQueued = 4096;

 private:
  struct Notice {
    fuse_ino_t ino = 0;  // invalidate_inode; or, with a name, the parent of invalidate_entry
    std::string name;    // invalidate_entry
    bool entry = false;
  };
  void push(Notice notice);
  void run();
  void send(const Notice& notice);

  std::mutex mu_;  // a leaf lock, never held while a notification is sent
  std::condition_variable wake_;
  // --- guarded by mu_ ---
  std::deque<Notice> queue_;
  bool stopping_ = false;
  bool warned_full_ = false;
  fuse_session* session_ = nullptr;
  std::thread thread_;  // started by start(), joined by stop()
};

}  // namespace mibz2::fs
