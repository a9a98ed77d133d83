// The handles of open files and directories (fi->fh), shared by the operations and the
// Filesystem, which frees at unmount those the kernel never released.
#pragma once

#include <unistd.h>

#include <memory>
#include <vector>

#include "fs/filesystem.h"

namespace mibz2::fs {

struct Filesystem::FileHandle {
  int fd = -1;                             // plain files: the source, read directly
  SourceStamp stamp;                       // plain files: the node's, which every read checks
  std::shared_ptr<engine::Reader> reader;  // decompressed files
  ~FileHandle() {
    if (fd >= 0) close(fd);
  }
};

struct Filesystem::DirHandle {
  std::shared_ptr<const std::vector<ShownEntry>> entries;
};

}  // namespace mibz2::fs
