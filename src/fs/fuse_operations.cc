#include "fs/fuse_operations.h"

#include <cerrno>
#include <exception>

#include <spdlog/spdlog.h>

#include "fs/operations.h"

namespace mibz2::fs {
namespace {

Operations& ops_of(fuse_req_t req) { return **static_cast<Operations**>(fuse_req_userdata(req)); }

// The one error reply of every operation: an operation replies as its last step and returns 0,
// or returns an errno, sent here. No exception may cross libfuse's C frames: a request that
// throws (out of memory) is answered with EIO and logged, and the daemon goes on. Operations
// reply only as their last step, so one that throws has not replied yet.
template <class F>
void answer(fuse_req_t req, F&& op) {
  int err;
  try {
    err = op(ops_of(req));
  } catch (const std::exception& e) {
    spdlog::error("a request failed: {}", e.what());
    err = EIO;
  }
  if (err) fuse_reply_err(req, err);
}

// The reply of operations that answer only "done" (release, flush: 0) or "refused" (EROFS).
void reply_status(fuse_req_t req, int err) { fuse_reply_err(req, err); }

void op_init(void* userdata, fuse_conn_info* conn) { (*static_cast<Operations**>(userdata))->init(conn); }
void op_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  answer(req, [&](Operations& ops) { return ops.lookup(req, parent, name); });
}
void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t n) {
  ops_of(req).forget(ino, n);  // cannot throw: a count and an erase, nothing allocated
  fuse_reply_none(req);
}
void op_forget_multi(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
  for (size_t i = 0; i < count; ++i) ops_of(req).forget(forgets[i].ino, forgets[i].nlookup);
  fuse_reply_none(req);
}
void op_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  answer(req, [&](Operations& ops) { return ops.getattr(req, ino); });
}
void op_readlink(fuse_req_t req, fuse_ino_t ino) {
  answer(req, [&](Operations& ops) { return ops.readlink(req, ino); });
}
void op_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  answer(req, [&](Operations& ops) { return ops.opendir(req, ino, fi); });
}
void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  answer(req, [&](Operations& ops) { return ops.readdir(req, ino, size, off, fi, false); });
}
void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  answer(req, [&](Operations& ops) { return ops.readdir(req, ino, size, off, fi, true); });
}
void op_releasedir(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  ops_of(req).releasedir(fi);
  reply_status(req, 0);
}
void op_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  answer(req, [&](Operations& ops) { return ops.open(req, ino, fi); });
}
void op_read(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info* fi) {
  answer(req, [&](Operations& ops) { return ops.read(req, size, off, fi); });
}
void op_release(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  ops_of(req).release(fi);
  reply_status(req, 0);
}
void op_statfs(fuse_req_t req, fuse_ino_t) {
  answer(req, [&](Operations& ops) { return ops.statfs(req); });
}
void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  answer(req, [&](Operations& ops) { return ops.getxattr(req, ino, name, size); });
}
void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  answer(req, [&](Operations& ops) { return ops.listxattr(req, ino, size); });
}
void op_flush(fuse_req_t req, fuse_ino_t, fuse_file_info*) { reply_status(req, 0); }
void op_fsync(fuse_req_t req, fuse_ino_t, int, fuse_file_info*) { reply_status(req, 0); }

// Every operation that would change something: the mount is read-only.
void rofs(fuse_req_t req) { reply_status(req, EROFS); }
void op_setattr(fuse_req_t req, fuse_ino_t, struct stat*, int, fuse_file_info*) { rofs(req); }
void op_mknod(fuse_req_t req, fuse_ino_t, const char*, mode_t, dev_t) { rofs(req); }
void op_mkdir(fuse_req_t req, fuse_ino_t, const char*, mode_t) { rofs(req); }
void op_unlink(fuse_req_t req, fuse_ino_t, const char*) { rofs(req); }
void op_rmdir(fuse_req_t req, fuse_ino_t, const char*) { rofs(req); }
void op_symlink(fuse_req_t req, const char*, fuse_ino_t, const char*) { rofs(req); }
void op_rename(fuse_req_t req, fuse_ino_t, const char*, fuse_ino_t, const char*, unsigned) { rofs(req); }
void op_link(fuse_req_t req, fuse_ino_t, fuse_ino_t, const char*) { rofs(req); }
void op_write(fuse_req_t req, fuse_ino_t, const char*, size_t, off_t, fuse_file_info*) { rofs(req); }
void op_create(fuse_req_t req, fuse_ino_t, const char*, mode_t, fuse_file_info*) { rofs(req); }
void op_setxattr(fuse_req_t req, fuse_ino_t, const char*, const char*, size_t, int) { rofs(req); }
void op_removexattr(fuse_req_t req, fuse_ino_t, const char*) { rofs(req); }
void op_fallocate(fuse_req_t req, fuse_ino_t, int, off_t, off_t, fuse_file_info*) { rofs(req); }

fuse_lowlevel_ops make_operations() {
  fuse_lowlevel_ops ops{};
  ops.init = op_init;
  ops.lookup = op_lookup;
  ops.forget = op_forget;
  ops.forget_multi = op_forget_multi;
  ops.getattr = op_getattr;
  ops.readlink = op_readlink;
  ops.opendir = op_opendir;
  ops.readdir = op_readdir;
  ops.readdirplus = op_readdirplus;
  ops.releasedir = op_releasedir;
  ops.open = op_open;
  ops.read = op_read;
  ops.release = op_release;
  ops.statfs = op_statfs;
  ops.getxattr = op_getxattr;
  ops.listxattr = op_listxattr;
  ops.flush = op_flush;
  ops.fsync = op_fsync;
  ops.setattr = op_setattr;
  ops.mknod = op_mknod;
  ops.mkdir = op_mkdir;
  ops.unlink = op_unlink;
  ops.rmdir = op_rmdir;
  ops.symlink = op_symlink;
  ops.rename = op_rename;
  ops.link = op_link;
  ops.write = op_write;
  ops.create = op_create;
  ops.setxattr = op_setxattr;
  ops.removexattr = op_removexattr;
  ops.fallocate = op_fallocate;
  return ops;
}

}  // namespace

const fuse_lowlevel_ops& fuse_operations() {
  static const fuse_lowlevel_ops ops = make_operations();
  return ops;
}

}  // namespace mibz2::fs
