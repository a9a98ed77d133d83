#include "fs/kernel_notifier.h"

#include <cerrno>
#include <cstring>
#include <exception>

#include <spdlog/spdlog.h>

namespace mibz2::fs {

void KernelNotifier::start(fuse_session* session) {
  std::lock_guard lk(mu_);
  if (thread_.joinable() || stopping_) return;
  session_ = session;
  thread_ = std::thread([this] { run(); });
}

void KernelNotifier::stop() {
  std::thread thread;
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
    queue_.clear();
    thread.swap(thread_);
  }
  wake_.notify_all();
  if (thread.joinable()) thread.join();
}

void KernelNotifier::invalidate_inode(fuse_ino_t ino) { push(Notice{ino, {}, false}); }

void KernelNotifier::invalidate_entry(fuse_ino_t parent, std::string name) {
  push(Notice{parent, std::move(name), true});
}

void KernelNotifier::push(Notice notice) {
  {
    std::lock_guard lk(mu_);
    if (stopping_) return;
    if (queue_.size() >= kMaxQueued) {
      if (!warned_full_) spdlog::warn("more than {} kernel notifications waiting: some are dropped", kMaxQueued);
      warned_full_ = true;
      return;
    }
    queue_.push_back(std::move(notice));
  }
  wake_.notify_one();
}

void KernelNotifier::run() {
  for (;;) {
    Notice notice;
    {
      std::unique_lock lk(mu_);
      wake_.wait(lk, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      notice = std::move(queue_.front());
      queue_.pop_front();
    }
    try {
      send(notice);
    } catch (const std::exception& e) {  // out of memory for the message: the thread goes on
      spdlog::error("kernel notification: {}", e.what());
    }
  }
}

void KernelNotifier::send(const Notice& n) {
  // session_ was set before this thread started and never changes.
  // May block while the kernel waits for the page locks of the inode's reads in progress: they
  // are answered by other threads.
  const int rc = n.entry ? fuse_lowlevel_notify_inval_entry(session_, n.ino, n.name.data(), n.name.size())
                         : fuse_lowlevel_notify_inval_inode(session_, n.ino, 0, 0);
  // ENOENT: the kernel holds nothing of it (never looked up, or forgotten): nothing to drop.
  if (rc != 0 && rc != -ENOENT)
    spdlog::warn("cannot tell the kernel to drop {} {}: {}", n.entry ? "the name" : "the cached pages of inode",
                 n.entry ? n.name : std::to_string(n.ino), std::strerror(-rc));
}

}  // namespace mibz2::fs
