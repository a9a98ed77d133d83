#include "fs/file_reads.h"

#include <sys/stat.h>
#include <sys/uio.h>

#include <cerrno>
#include <memory>

#include <spdlog/spdlog.h>

#include "io/fd_io.h"

namespace mibz2::fs {

// A plain file's descriptor reads the source file itself, which a rewrite in place changes under
// it: the bytes are read first, then the source's stamp checked, and they are served only if it
// is still the node's (a write, a truncation or a chmod during or before the read changed the
// ctime at least). Otherwise EIO: the content this descriptor was opened on is gone, and the
// kernel's page cache of the node must never get another content's pages.
int read_plain(fuse_req_t req, const FileHandle& handle, size_t size, off_t off) {
  std::unique_ptr<uint8_t[]> buf(new uint8_t[size]);
  const ssize_t n = io::pread_full(handle.fd, buf.get(), size, static_cast<uint64_t>(off));
  if (n < 0) return static_cast<int>(-n);
  struct stat st;
  if (fstat(handle.fd, &st) != 0) return errno;
  if (io::SourceStamp::of(st) != handle.stamp) return EIO;
  fuse_reply_buf(req, reinterpret_cast<const char*>(buf.get()), static_cast<size_t>(n));
  return 0;
}

void reply_read(fuse_req_t req, ssize_t n, const std::vector<engine::Slice>& slices) noexcept {
  int err = n < 0 ? static_cast<int>(-n) : 0;
  if (err == 0 && slices.empty()) {
    fuse_reply_buf(req, nullptr, 0);  // at or past the end
    return;
  }
  // Written straight from the decoded blocks (the kernel copies them once, from here); the slices
  // hold their blocks until this returns.
  if (err == 0) {
    try {
      thread_local std::vector<iovec> iov;
      iov.resize(slices.size());
      for (size_t i = 0; i < slices.size(); ++i) iov[i] = iovec{const_cast<uint8_t*>(slices[i].data), slices[i].size};
      fuse_reply_iov(req, iov.data(), static_cast<int>(iov.size()));
    } catch (const std::exception& e) {
      spdlog::error("a read failed: {}", e.what());
      err = EIO;
    }
  }
  if (err) fuse_reply_err(req, err);
}

}  // namespace mibz2::fs
