// The handles of open files and directories (fi->fh), and the record of those open: the kernel
// releases each, except when the session ends with files still open, and then the Filesystem
// frees them at unmount.
#pragma once

#include <fuse_lowlevel.h>
#include <unistd.h>

#include <memory>
#include <mutex>
#include <unordered_set>
#include <vector>

#include "catalog/name_mapping.h"
#include "catalog/read_handle.h"
#include "io/source_stamp.h"

namespace mibz2::fs {

struct FileHandle {
  int fd = -1;                             // plain files: the source, read directly
  io::SourceStamp stamp;                       // plain files: the node's, which every read checks
  std::unique_ptr<catalog::ReadHandle> file;  // decompressed files
  ~FileHandle() {
    if (fd >= 0) close(fd);
  }
};

struct DirHandle {
  std::shared_ptr<const std::vector<catalog::ShownEntry>> entries;
};

class OpenHandles {
 public:
  OpenHandles() = default;
  ~OpenHandles() { close_all(); }
  OpenHandles(const OpenHandles&) = delete;
  OpenHandles& operator=(const OpenHandles&) = delete;

  // Hands `handle` to the kernel as fi->fh with the open reply (an opendir's as well), recorded as
  // open until released; freed here if the reply fails (the request was interrupted).
  template <class Handle>
  void reply_open(fuse_req_t req, fuse_file_info* fi, std::unique_ptr<Handle> handle) {
    track(handle.get(), true);
    fi->fh = reinterpret_cast<uint64_t>(handle.get());
    if (fuse_reply_open(req, fi) == 0) handle.release();
    else track(handle.get(), false);
  }
  // The kernel released fi->fh: no longer recorded, and freed.
  template <class Handle>
  void release(fuse_file_info* fi) {
    auto* h = reinterpret_cast<Handle*>(fi->fh);
    track(h, false);
    delete h;
  }
  // Frees the handles the kernel never released (the session ended with files still open): at
  // unmount, before the engine that their readers read from goes.
  void close_all();

 private:
  // Records a handle as open (or no longer) so that unmount can free what the kernel never released.
  void track(FileHandle* h, bool open);
  void track(DirHandle* h, bool open);

  std::mutex mu_;  // a leaf lock: guards the two sets
  std::unordered_set<FileHandle*> files_;
  std::unordered_set<DirHandle*> dirs_;
};

}  // namespace mibz2::fs
