// The C operations table handed to fuse_session_new: trampolines from libfuse's C callbacks to
// the Filesystem's operations, and the answers of everything a read-only mount refuses.
#include "fs/filesystem.h"

#include <cerrno>
#include <exception>

#include <spdlog/spdlog.h>

namespace mibz2::fs {
namespace {

Filesystem& fs_of(fuse_req_t req) { return **static_cast<Filesystem**>(fuse_req_userdata(req)); }

}  // namespace

// --- the C callback table ---

namespace {

// No exception may cross libfuse's C frames: a request that throws (out of memory) is answered
// with EIO and logged, and the daemon goes on. Operations reply only as their last step, so one
// that throws has not replied yet.
template <class F>
void guarded(fuse_req_t req, F&& op) {
  try {
    op();
  } catch (const std::exception& e) {
    spdlog::error("a request failed: {}", e.what());
    fuse_reply_err(req, EIO);
  }
}

void op_init(void* userdata, fuse_conn_info* conn) { (*static_cast<Filesystem**>(userdata))->init(conn); }
void op_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  guarded(req, [&] { fs_of(req).lookup(req, parent, name); });
}
void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t n) {
  fs_of(req).forget(ino, n);  // cannot throw: a count and an erase, nothing allocated
  fuse_reply_none(req);
}
void op_forget_multi(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
  for (size_t i = 0; i < count; ++i) fs_of(req).forget(forgets[i].ino, forgets[i].nlookup);
  fuse_reply_none(req);
}
void op_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) { guarded(req, [&] { fs_of(req).getattr(req, ino); }); }
void op_readlink(fuse_req_t req, fuse_ino_t ino) { guarded(req, [&] { fs_of(req).readlink(req, ino); }); }
void op_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  guarded(req, [&] { fs_of(req).opendir(req, ino, fi); });
}
void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  guarded(req, [&] { fs_of(req).readdir(req, ino, size, off, fi, false); });
}
void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  guarded(req, [&] { fs_of(req).readdir(req, ino, size, off, fi, true); });
}
void op_releasedir(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) { fs_of(req).releasedir(req, fi); }
void op_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) { guarded(req, [&] { fs_of(req).open(req, ino, fi); }); }
void op_read(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info* fi) {
  guarded(req, [&] { fs_of(req).read(req, size, off, fi); });
}
void op_release(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) { fs_of(req).release(req, fi); }
void op_statfs(fuse_req_t req, fuse_ino_t) { guarded(req, [&] { fs_of(req).statfs(req); }); }
void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  guarded(req, [&] { fs_of(req).getxattr(req, ino, name, size); });
}
void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  guarded(req, [&] { fs_of(req).listxattr(req, ino, size); });
}
void op_flush(fuse_req_t req, fuse_ino_t, fuse_file_info*) { fuse_reply_err(req, 0); }
void op_fsync(fuse_req_t req, fuse_ino_t, int, fuse_file_info*) { fuse_reply_err(req, 0); }

// Every operation that would change something: the mount is read-only.
void rofs(fuse_req_t req) { fuse_reply_err(req, EROFS); }
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

const fuse_lowlevel_ops& Filesystem::operations() {
  static const fuse_lowlevel_ops ops = make_operations();
  return ops;
}

}  // namespace mibz2::fs
