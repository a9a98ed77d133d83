// Which source file, and which content of it, a node of the mount stands for. The kernel keeps one
// page cache per inode of the mount, shared by every open descriptor of it, so a node must never
// show two contents: a file rewritten in place (same device and inode: `cat new > file`, `cp` over
// it) gets a new node, and the old one keeps its pages for the descriptors opened on it (see
// fs/inode_table.h). The content is told by size, mtime and ctime: a rewrite can put size and mtime
// back (cp -p, rsync -t --inplace), never the ctime. Directories and symlinks are bound to the file
// alone (a directory's times change with every entry; its listing has its own rule,
// fs/listing_stamp.h).
#pragma once

#include <sys/stat.h>

#include <cstdint>

namespace mibz2::io {

// A timestamp in nanoseconds since the epoch.
inline uint64_t ns_of(const struct timespec& t) {
  return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(t.tv_nsec);
}

struct SourceStamp {
  uint64_t device = 0;    // st_dev and st_ino: which file
  uint64_t inode = 0;
  uint64_t size = 0;      // st_size, st_mtim and st_ctim: which content of it (0 for a
  uint64_t mtime_ns = 0;  // directory's or a symlink's stamp)
  uint64_t ctime_ns = 0;

  static SourceStamp of(const struct stat& st) {
    return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_size),
            ns_of(st.st_mtim), ns_of(st.st_ctim)};
  }
  // The stamp without its content part (a directory's, a symlink's).
  SourceStamp file_only() const { return {device, inode, 0, 0, 0}; }
  bool same_file(const SourceStamp& o) const { return device == o.device && inode == o.inode; }
  bool operator==(const SourceStamp&) const = default;
};

}  // namespace mibz2::io
