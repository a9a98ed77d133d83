#include "fs/source_watcher.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <utility>

#include <spdlog/spdlog.h>

namespace mibz2::fs {
namespace {

using Clock = std::chrono::steady_clock;

// What a directory's watch reports: its entries coming, going, renamed, written (a download, a
// rewrite in place), their attributes (a chmod, rsync setting times), and the directory itself
// going away. IN_EXCL_UNLINK: writes to a file already deleted from the directory are not news.
constexpr uint32_t kEntryEvents = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB | IN_MODIFY;
constexpr uint32_t kSelfEvents = IN_DELETE_SELF | IN_MOVE_SELF;
constexpr uint32_t kWatchMask = kEntryEvents | kSelfEvents | IN_ONLYDIR | IN_EXCL_UNLINK;
constexpr uint32_t kNameEvents = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO;
constexpr uint32_t kGoneEvents = kSelfEvents | IN_UNMOUNT;

// A burst about one name is reported once this long after its first event (rsync's temporary
// file, its writes, its times, its rename: one report per name).
constexpr auto kBurst = std::chrono::milliseconds(50);
// Writes alone (IN_MODIFY: a download or a copy in progress) are reported once they pause this
// long, and at least every kWriting while they go on: each report sends the kernel to look the
// file up again, which shows (and indexes) its content as it is then.
constexpr auto kWritesPause = std::chrono::milliseconds(200);
constexpr auto kWriting = std::chrono::seconds(1);

std::string watch_limit() {
  std::ifstream in("/proc/sys/fs/inotify/max_user_watches");
  std::string value;
  in >> value;
  return value.empty() ? std::string("unknown") : value;
}

}  // namespace

// Events about one name (or the directory itself, with an empty name) of one watch, not yet reported.
struct SourceWatcher::Pending {
  Clock::time_point first;  // its first event
  Clock::time_point last;   // its latest event
  bool writes_only = true;  // only IN_MODIFY so far
  bool names = false;
  bool gone = false;

  Clock::time_point due() const {
    return writes_only ? std::min(last + kWritesPause, first + kWriting) : first + kBurst;
  }
};

void SourceWatcher::start(fuse_ino_t root_ino, const io::SourceStamp& root_stamp, ChangeListener changed,
                          LossListener lost) {
  std::lock_guard lk(mu_);
  if (stopped_ || inotify_fd_ >= 0 || thread_.joinable()) return;
  changed_ = std::move(changed);
  lost_ = std::move(lost);
  inotify_fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (inotify_fd_ < 0) {
    const int err = errno;
    spdlog::warn("cannot follow changes in SOURCE (inotify: {}{}): a file changed there shows its new size when it "
                 "is next opened, and names and sizes under stat after up to an hour",
                 std::strerror(err), err == EMFILE ? "; see sysctl fs.inotify.max_user_instances" : "");
    return;
  }
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) {
    spdlog::warn("cannot follow changes in SOURCE (eventfd: {})", std::strerror(errno));
    close(inotify_fd_);
    inotify_fd_ = -1;
    return;
  }
  struct stat st;
  const int fd = root_.open("", io::SourceRoot::Kind::kDirectory, &st);
  int err = fd < 0 ? -fd : io::SourceStamp::of(st).same_file(root_stamp) ? add_watch_locked(root_ino, "", fd) : ESTALE;
  if (fd >= 0) close(fd);
  if (err && err != ENOSPC)  // ENOSPC: the watch limit, said by add_watch_locked
    spdlog::warn("{}: not watched for changes ({}): a file changed there shows its new size when it is next "
                 "opened, and names and sizes under stat after up to an hour",
                 root_.path(), std::strerror(err));
  thread_ = std::thread([this] {
    try {
      run();
    } catch (const std::exception& e) {
      spdlog::error("the source watcher stopped: {}; changes in SOURCE are seen at the next open only", e.what());
    }
  });
}

void SourceWatcher::stop() {
  std::thread thread;
  {
    std::lock_guard lk(mu_);
    stopped_ = true;
    thread.swap(thread_);
    if (wake_fd_ >= 0) {
      const uint64_t one = 1;
      [[maybe_unused]] const ssize_t n = write(wake_fd_, &one, sizeof one);
    }
  }
  if (thread.joinable()) thread.join();
  std::lock_guard lk(mu_);
  if (inotify_fd_ >= 0) close(inotify_fd_);  // closes every watch with it
  if (wake_fd_ >= 0) close(wake_fd_);
  inotify_fd_ = wake_fd_ = -1;
  nodes_of_.clear();
  watch_of_.clear();
}

size_t SourceWatcher::watches() const {
  std::lock_guard lk(mu_);
  return nodes_of_.size();
}

void SourceWatcher::watch(fuse_ino_t dir, const std::string& rel, const io::SourceStamp& stamp) {
  {
    std::lock_guard lk(mu_);
    if (inotify_fd_ < 0 || watch_of_.count(dir)) return;
  }
  // Opened beneath SOURCE with no symlink on the way, and checked to be the node's directory: the
  // watch is on that inode, whatever the path holds later.
  struct stat st;
  const int fd = root_.open(rel, io::SourceRoot::Kind::kDirectory, &st);
  if (fd < 0) return;  // gone or replaced since the lookup: the node answers ESTALE, nothing to follow
  if (io::SourceStamp::of(st).same_file(stamp)) {
    std::lock_guard lk(mu_);
    if (inotify_fd_ >= 0 && !watch_of_.count(dir)) add_watch_locked(dir, rel, fd);
  }
  close(fd);
}

int SourceWatcher::add_watch_locked(fuse_ino_t dir, const std::string& rel, int fd) {
  if (const size_t limit = test_limit_.load(); limit && nodes_of_.size() >= limit) {
    warn_limit_once(rel, ENOSPC);
    return ENOSPC;
  }
  // The open descriptor names the directory: no path in SOURCE is resolved again.
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  const int wd = inotify_add_watch(inotify_fd_, path.c_str(), kWatchMask);
  if (wd < 0) {
    const int err = errno;
    if (err == ENOSPC) warn_limit_once(rel, err);
    else spdlog::debug("{}: not watched for changes: {}", root_.absolute(rel), std::strerror(err));
    return err;
  }
  std::vector<fuse_ino_t>& nodes = nodes_of_[wd];  // one watch per inode: a second node shares it
  if (std::find(nodes.begin(), nodes.end(), dir) == nodes.end()) nodes.push_back(dir);
  watch_of_[dir] = wd;
  return 0;
}

void SourceWatcher::warn_limit_once(const std::string& rel, int err) {
  if (warned_limit_.exchange(true)) return;
  const size_t test_limit = test_limit_.load();
  spdlog::warn("{}: not watched for changes ({}; the limit is fs.inotify.max_user_watches = {}{}): changes in this "
               "directory and in others past the limit are not followed: a file changed there shows its new size "
               "when it is next opened, and names and sizes under stat after up to an hour. Raise the sysctl "
               "(said once)",
               root_.absolute(rel), std::strerror(err), watch_limit(),
               test_limit ? ", here a test's limit of " + std::to_string(test_limit) : std::string());
}

void SourceWatcher::unwatch(fuse_ino_t dir) noexcept {
  std::lock_guard lk(mu_);
  const auto it = watch_of_.find(dir);
  if (it == watch_of_.end()) return;
  const int wd = it->second;
  watch_of_.erase(it);
  const auto nodes = nodes_of_.find(wd);
  if (nodes == nodes_of_.end()) return;
  std::erase(nodes->second, dir);
  if (!nodes->second.empty()) return;
  nodes_of_.erase(nodes);
  // Fails with EINVAL when the kernel removed it already (the directory was deleted).
  if (inotify_fd_ >= 0) inotify_rm_watch(inotify_fd_, wd);
}

void SourceWatcher::run() {
  // Both descriptors were opened before this thread started and are closed after it ends.
  pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  std::map<std::pair<fuse_ino_t, std::string>, Pending> pending;  // by directory node and name
  bool lost = false;
  alignas(inotify_event) char buf[64 * 1024];
  for (;;) {
    int timeout_ms = -1;
    if (lost) {
      timeout_ms = 0;
    } else if (!pending.empty()) {
      Clock::time_point next = Clock::time_point::max();
      for (const auto& [key, p] : pending) next = std::min(next, p.due());
      const auto wait = std::chrono::ceil<std::chrono::milliseconds>(next - Clock::now()).count();
      timeout_ms = static_cast<int>(std::clamp<decltype(wait)>(wait, 0, 1000));
    }
    if (poll(fds, 2, timeout_ms) < 0 && errno != EINTR) {
      spdlog::error("the source watcher stopped: poll: {}; changes in SOURCE are seen at the next open only",
                    std::strerror(errno));
      return;
    }
    if (fds[1].revents) return;  // stop()
    if (fds[0].revents & POLLIN) {
      for (;;) {
        const ssize_t n = read(fds[0].fd, buf, sizeof buf);
        if (n <= 0) break;  // EAGAIN: all read
        const Clock::time_point now = Clock::now();
        // Each event is mapped to the directory nodes on its watch as it is read: an IN_IGNORED
        // (the directory deleted) may follow the events it comes after in the same read.
        std::lock_guard lk(mu_);
        for (ssize_t off = 0; off + static_cast<ssize_t>(sizeof(inotify_event)) <= n;) {
          const auto* ev = reinterpret_cast<const inotify_event*>(buf + off);
          off += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
          if (ev->mask & IN_Q_OVERFLOW) {
            lost = true;
            continue;
          }
          const auto watch = nodes_of_.find(ev->wd);
          if (watch == nodes_of_.end()) continue;  // removed by unwatch(): its node is gone
          if (ev->mask & IN_IGNORED) {  // the kernel removed the watch (its directory deleted)
            for (const fuse_ino_t dir : watch->second) watch_of_.erase(dir);
            nodes_of_.erase(watch);
            continue;
          }
          if (!(ev->mask & (kEntryEvents | kGoneEvents))) continue;
          // The name is NUL-padded; a name is bytes, whatever they are.
          const std::string name = ev->len ? std::string(ev->name, strnlen(ev->name, ev->len)) : std::string();
          for (const fuse_ino_t dir : watch->second) {
            Pending& p = pending.try_emplace({dir, name}, Pending{now, now}).first->second;
            p.last = now;
            if (ev->mask & ~(IN_MODIFY | IN_ISDIR)) p.writes_only = false;
            if (ev->mask & kNameEvents) p.names = true;
            if (name.empty() && (ev->mask & kGoneEvents)) p.gone = true;
          }
        }
        // More names waiting than that (a tree being unpacked): reported as a loss instead
        // (everything dropped once), so that the pending set stays bounded.
        if (pending.size() > max_pending_.load()) lost = true;
      }
    }
    if (lost) {
      pending.clear();
      lost = false;
      try {
        lost_();
      } catch (const std::exception& e) {
        spdlog::error("source watcher: {}", e.what());
      }
      continue;
    }
    const Clock::time_point now = Clock::now();
    std::vector<Change> due;
    for (auto it = pending.begin(); it != pending.end();) {
      if (it->second.due() > now) {
        ++it;
        continue;
      }
      due.push_back(Change{it->first.first, it->first.second, it->second.names, it->second.gone});
      it = pending.erase(it);
    }
    if (due.empty()) continue;
    try {
      changed_(due);
    } catch (const std::exception& e) {  // out of memory: these changes go unreported
      spdlog::error("source watcher: {}", e.what());
    }
  }
}

}  // namespace mibz2::fs
