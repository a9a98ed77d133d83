// mibz2-latency-fs: a read-only passthrough FUSE filesystem that waits a fixed time before every
// read request, to stand for NFS, sshfs or object storage behind FUSE when measuring mibz2fs with
// its source on slow storage (scripts/bench-remote), and that can fail reads as a flaky disk does,
// to test what mibz2fs and mibz2 do with read errors. Never installed; not for production.
//
//   mibz2-latency-fs [-o delay_ms=N] [-o fail_from=A,fail_to=B[,fail_while=PATH]]
//                    [FUSE options] SOURCE MOUNTPOINT
//
// delay_ms: the wait before every read (default 5; 0: none). fail_from, fail_to: every read that
// overlaps bytes [A, B) of any file fails with EIO (none when B <= A, the default). fail_while:
// the fault is on only while PATH exists, so a test turns it on and off without unmounting.
// Reads bypass the page cache (direct_io), so that every read mibz2fs makes reaches the delay (and
// the fault), and may be up to 1 MiB each (max_write raises the kernel's max_pages, which bounds
// reads too). At unmount it prints on stderr how many read requests it served and how many bytes,
// and how many it failed.
#define FUSE_USE_VERSION 314

#include <dirent.h>
#include <climits>
#include <fcntl.h>
#include <fuse.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

struct Options {
  int delay_ms = 5;
  unsigned long long fail_from = 0;  // reads overlapping [fail_from, fail_to) fail with EIO
  unsigned long long fail_to = 0;
  char* fail_while = nullptr;        // only while this path exists (always, if not given)
};
Options options;
std::string source;
std::atomic<uint64_t> read_requests{0};
std::atomic<uint64_t> read_bytes{0};
std::atomic<uint64_t> failed_requests{0};

const fuse_opt kOpts[] = {{"delay_ms=%d", offsetof(Options, delay_ms), 0},
                          {"fail_from=%llu", offsetof(Options, fail_from), 0},
                          {"fail_to=%llu", offsetof(Options, fail_to), 0},
                          {"fail_while=%s", offsetof(Options, fail_while), 0},
                          FUSE_OPT_END};

// Whether a read of [offset, offset + size) meets the fault.
bool fails(off_t offset, size_t size) {
  const auto from = static_cast<unsigned long long>(offset);
  if (size == 0 || from >= options.fail_to || from + size <= options.fail_from) return false;
  return !options.fail_while || access(options.fail_while, F_OK) == 0;
}

std::string real(const char* path) { return source + path; }

void* init(fuse_conn_info* conn, fuse_config* cfg) {
  cfg->direct_io = 1;
  cfg->use_ino = 1;
  cfg->attr_timeout = 60;
  cfg->entry_timeout = 60;
  conn->max_write = 1 << 20;  // libfuse then asks the kernel for 256 pages a request: 1 MiB reads
  return nullptr;
}

int getattr(const char* path, struct stat* st, fuse_file_info*) {
  return lstat(real(path).c_str(), st) == 0 ? 0 : -errno;
}

int readlink_op(const char* path, char* buf, size_t size) {
  const ssize_t n = readlink(real(path).c_str(), buf, size - 1);
  if (n < 0) return -errno;
  buf[n] = 0;
  return 0;
}

int readdir_op(const char* path, void* buf, fuse_fill_dir_t fill, off_t, fuse_file_info*, fuse_readdir_flags) {
  DIR* d = opendir(real(path).c_str());
  if (!d) return -errno;
  while (const dirent* e = readdir(d)) fill(buf, e->d_name, nullptr, 0, static_cast<fuse_fill_dir_flags>(0));
  closedir(d);
  return 0;
}

int open_op(const char* path, fuse_file_info* fi) {
  if ((fi->flags & O_ACCMODE) != O_RDONLY) return -EROFS;
  const int fd = open(real(path).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  fi->fh = static_cast<uint64_t>(fd);
  return 0;
}

int read_op(const char*, char* buf, size_t size, off_t offset, fuse_file_info* fi) {
  if (options.delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(options.delay_ms));
  if (fails(offset, size)) {
    failed_requests.fetch_add(1, std::memory_order_relaxed);
    return -EIO;
  }
  const ssize_t n = pread(static_cast<int>(fi->fh), buf, size, offset);
  if (n < 0) return -errno;
  read_requests.fetch_add(1, std::memory_order_relaxed);
  read_bytes.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
  return static_cast<int>(n);
}

int release_op(const char*, fuse_file_info* fi) {
  close(static_cast<int>(fi->fh));
  return 0;
}

int statfs_op(const char* path, struct statvfs* st) { return statvfs(real(path).c_str(), st) == 0 ? 0 : -errno; }

void destroy(void*) {
  std::fprintf(stderr, "mibz2-latency-fs: %llu read requests, %llu bytes, %d ms each, %llu failed\n",
               static_cast<unsigned long long>(read_requests.load()),
               static_cast<unsigned long long>(read_bytes.load()), options.delay_ms,
               static_cast<unsigned long long>(failed_requests.load()));
}

}  // namespace

int main(int argc, char** argv) {
  fuse_args args = FUSE_ARGS_INIT(argc, argv);
  if (fuse_opt_parse(&args, &options, kOpts, nullptr) != 0) return 1;
  // The first non-option argument is SOURCE; the rest go to fuse_main (MOUNTPOINT, options).
  fuse_args rest = FUSE_ARGS_INIT(0, nullptr);
  for (int i = 0; i < args.argc; ++i) {
    const char* a = args.argv[i];
    if (i > 0 && source.empty() && a[0] != '-' && (i == 0 || std::strcmp(args.argv[i - 1], "-o") != 0)) {
      char resolved[PATH_MAX];
      if (!realpath(a, resolved)) {
        std::fprintf(stderr, "mibz2-latency-fs: %s: %s\n", a, std::strerror(errno));
        return 1;
      }
      source = resolved;
      continue;
    }
    fuse_opt_add_arg(&rest, a);
  }
  if (source.empty() || options.delay_ms < 0) {
    std::fprintf(stderr,
                 "usage: mibz2-latency-fs [-o delay_ms=N] [-o fail_from=A,fail_to=B[,fail_while=PATH]] "
                 "[FUSE options] SOURCE MOUNTPOINT\n");
    return 1;
  }
  fuse_operations ops{};
  ops.init = init;
  ops.getattr = getattr;
  ops.readlink = readlink_op;
  ops.readdir = readdir_op;
  ops.open = open_op;
  ops.read = read_op;
  ops.release = release_op;
  ops.statfs = statfs_op;
  ops.destroy = destroy;
  const int rc = fuse_main(rest.argc, rest.argv, &ops, nullptr);
  fuse_opt_free_args(&rest);
  fuse_opt_free_args(&args);
  return rc;
}
