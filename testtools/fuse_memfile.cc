// The ceiling for scripts/bench-fs: a trivial low-level FUSE file system holding its files in
// memory, mounted with the same request loop as mibz2fs (the same -o max_threads,
// max_idle_threads and clone_fd, the same defaults, the same init settings), so that every figure
// bench-fs measures through mibz2fs can be set against what this kernel and libfuse allow at all.
// A read is answered straight from memory with fuse_reply_buf: no lock, no copy of our own.
//
//   mibz2-bench-memfile [-f] [-o max_threads=N,max_idle_threads=N,clone_fd] --size BYTES
//                       [--files N] MOUNTPOINT
//
// The mount shows `file` and `seq0` .. `seqN-1` (default 0 of them), all of BYTES bytes and all
// the same bytes (each its own inode, so that readers of different files are different files to
// the kernel). Runs until unmounted (fusermount3 -u) or signalled. Not installed.
#include <fuse_lowlevel.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fs/fuse_session_settings.h"

namespace {

constexpr fuse_ino_t kRoot = FUSE_ROOT_ID;
constexpr fuse_ino_t kFirstFile = 2;

struct MemFs {
  std::vector<char> bytes;
  std::vector<std::string> names;  // names[i] is inode kFirstFile + i
};

MemFs& fs_of(fuse_req_t req) { return *static_cast<MemFs*>(fuse_req_userdata(req)); }

void fill_stat(const MemFs& fs, fuse_ino_t ino, struct stat* st) {
  *st = {};
  st->st_ino = ino;
  if (ino == kRoot) {
    st->st_mode = S_IFDIR | 0555;
    st->st_nlink = 2;
  } else {
    st->st_mode = S_IFREG | 0444;
    st->st_nlink = 1;
    st->st_size = static_cast<off_t>(fs.bytes.size());
  }
}

bool is_file(const MemFs& fs, fuse_ino_t ino) { return ino >= kFirstFile && ino < kFirstFile + fs.names.size(); }

void op_init(void*, fuse_conn_info* conn) { mibz2::fs::configure_connection(conn); }

void op_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  const MemFs& fs = fs_of(req);
  if (parent != kRoot) return void(fuse_reply_err(req, ENOENT));
  for (size_t i = 0; i < fs.names.size(); ++i) {
    if (fs.names[i] != name) continue;
    fuse_entry_param e{};
    e.ino = kFirstFile + i;
    e.attr_timeout = e.entry_timeout = 3600.0;
    fill_stat(fs, e.ino, &e.attr);
    return void(fuse_reply_entry(req, &e));
  }
  fuse_reply_err(req, ENOENT);
}

void op_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  const MemFs& fs = fs_of(req);
  if (ino != kRoot && !is_file(fs, ino)) return void(fuse_reply_err(req, ENOENT));
  struct stat st;
  fill_stat(fs, ino, &st);
  fuse_reply_attr(req, &st, 3600.0);
}

void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) {
  const MemFs& fs = fs_of(req);
  if (ino != kRoot) return void(fuse_reply_err(req, ENOTDIR));
  std::vector<char> buf(size);
  size_t used = 0;
  for (size_t i = static_cast<size_t>(off); i < fs.names.size(); ++i) {
    struct stat st;
    fill_stat(fs, kFirstFile + i, &st);
    const size_t n = fuse_add_direntry(req, buf.data() + used, size - used, fs.names[i].c_str(), &st,
                                       static_cast<off_t>(i + 1));
    if (n > size - used) break;
    used += n;
  }
  fuse_reply_buf(req, buf.data(), used);
}

void op_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  if (!is_file(fs_of(req), ino)) return void(fuse_reply_err(req, EISDIR));
  if ((fi->flags & O_ACCMODE) != O_RDONLY) return void(fuse_reply_err(req, EROFS));
  fuse_reply_open(req, fi);
}

void op_read(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info*) {
  const MemFs& fs = fs_of(req);
  const size_t total = fs.bytes.size();
  const size_t from = std::min(static_cast<size_t>(off), total);
  fuse_reply_buf(req, fs.bytes.data() + from, std::min(size, total - from));
}

int usage() {
  std::fputs("usage: mibz2-bench-memfile [-f] [-o max_threads=N,max_idle_threads=N,clone_fd] --size BYTES "
             "[--files N] MOUNTPOINT\n",
             stderr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  // Our own two options first; everything else is libfuse's (fuse_parse_cmdline), as for mibz2fs.
  size_t size = 0;
  size_t files = 0;
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--size" || a == "--files") && i + 1 < argc) {
      const size_t v = std::strtoull(argv[++i], nullptr, 10);
      (a == "--size" ? size : files) = v;
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (size == 0) return usage();
  fuse_args args = FUSE_ARGS_INIT(static_cast<int>(rest.size()), rest.data());
  fuse_cmdline_opts opts{};
  if (fuse_parse_cmdline(&args, &opts) != 0 || !opts.mountpoint) return usage();
  // Unless given, the loop settings are mibz2fs's own defaults (fuse_parse_cmdline fills in
  // libfuse's, which are not ours).
  bool threads_given = false, idle_given = false;
  for (char* a : rest) {
    const std::string s = a;
    threads_given |= s.find("max_threads=") != std::string::npos;
    idle_given |= s.find("max_idle_threads=") != std::string::npos;
  }
  const mibz2::fs::FuseLoopSettings defaults = mibz2::fs::default_fuse_loop();
  if (!threads_given) opts.max_threads = defaults.max_threads;
  if (!idle_given) opts.max_idle_threads = threads_given ? opts.max_threads : defaults.max_idle_threads;

  MemFs fs;
  fs.bytes.resize(size);
  // Bytes that are not all alike (so nothing in the path can shortcut zero pages).
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < size; i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(fs.bytes.data() + i, &x, std::min<size_t>(8, size - i));
  }
  fs.names.push_back("file");
  for (size_t i = 0; i < files; ++i) fs.names.push_back("seq" + std::to_string(i));

  fuse_lowlevel_ops ops{};
  ops.init = op_init;
  ops.lookup = op_lookup;
  ops.getattr = op_getattr;
  ops.readdir = op_readdir;
  ops.open = op_open;
  ops.read = op_read;
  fuse_session* se = fuse_session_new(&args, &ops, sizeof ops, &fs);
  if (!se) return 1;
  int rc = 1;
  if (fuse_set_signal_handlers(se) == 0 && fuse_session_mount(se, opts.mountpoint) == 0) {
    fuse_daemonize(opts.foreground);
    fuse_loop_config* cfg = fuse_loop_cfg_create();
    fuse_loop_cfg_set_max_threads(cfg, opts.max_threads);
    fuse_loop_cfg_set_idle_threads(cfg, opts.max_idle_threads);
    fuse_loop_cfg_set_clone_fd(cfg, static_cast<unsigned>(opts.clone_fd));
    rc = fuse_session_loop_mt(se, cfg) == 0 ? 0 : 1;
    fuse_loop_cfg_destroy(cfg);
    fuse_session_unmount(se);
  }
  fuse_remove_signal_handlers(se);
  fuse_session_destroy(se);
  free(opts.mountpoint);
  fuse_opt_free_args(&args);
  return rc;
}
