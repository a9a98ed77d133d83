#include "io/descriptor_limit.h"

#include <cerrno>
#include <cstdio>

#include <atomic>

namespace mibz2::io {
namespace {

std::atomic<DescriptorShortageHook> g_hook{nullptr};
std::atomic<bool> g_said{false};  // the hook was called

// fs.nr_open: the most a process may ever have open (the kernel refuses setrlimit above it).
rlim_t kernel_descriptor_ceiling() {
  unsigned long long n = 0;
  if (FILE* f = std::fopen("/proc/sys/fs/nr_open", "re")) {
    if (std::fscanf(f, "%llu", &n) != 1) n = 0;
    std::fclose(f);
  }
  return n ? static_cast<rlim_t>(n) : rlim_t{1} << 20;  // the kernel's default, 1048576
}

}  // namespace

OpenFileLimit raise_open_file_limit() {
  OpenFileLimit out;
  rlimit lim;
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) {
    out.error = errno;
    return out;
  }
  out.soft_before = out.soft = lim.rlim_cur;
  out.hard = lim.rlim_max;
  // The soft limit of 1024 that most sessions and services start with exists only for select(2),
  // whose fd_set cannot hold a higher descriptor; the hard limit (systemd's default 524288) is
  // what the administrator allows. systemd's advice for programs that use no select (this one
  // does not, nor does libfuse) is to raise the soft limit to the hard one themselves at start.
  // The kernel allocates its descriptor table as descriptors are used, so a high limit costs
  // nothing until it is used. Linux caps the hard limit at fs.nr_open, so it is never really
  // infinite; should a kernel say RLIM_INFINITY, the soft limit goes to fs.nr_open. The programs
  // this one runs (fusermount3 at unmount) inherit the raised limit: none of them uses select.
  rlim_t want = lim.rlim_max;
  if (want == RLIM_INFINITY) want = kernel_descriptor_ceiling();
  if (lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur >= want) return out;  // nothing to raise
  lim.rlim_cur = want;
  if (setrlimit(RLIMIT_NOFILE, &lim) != 0) {
    out.error = errno;
    return out;
  }
  out.soft = want;
  return out;
}

rlim_t open_file_limit() {
  rlimit lim;
  return getrlimit(RLIMIT_NOFILE, &lim) == 0 ? lim.rlim_cur : RLIM_INFINITY;
}

int note_open_errno(int err) {
  if (err != EMFILE && err != ENFILE) return err;
  // A shortage before the hook is set (before the daemon's log exists) is not the one it says.
  if (const DescriptorShortageHook hook = g_hook.load(); hook && !g_said.exchange(true)) hook(err);
  return err;
}

void on_descriptor_shortage(DescriptorShortageHook hook) { g_hook.store(hook); }

}  // namespace mibz2::io
