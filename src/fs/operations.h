// The FUSE operations of the mount, in the shape of libfuse's passthrough_hp: each finds its node
// through find_node() (node_checks.h), computes its answer and either replies with it as its last
// step and returns 0, or returns an errno, which the operations table (fuse_operations.cc) sends
// as the one error reply. Never both, never twice.
//
// The Filesystem (filesystem.h) makes the parts they work with and outlives them.
#pragma once

#include <fuse_lowlevel.h>

#include <cstdint>

#include "catalog/catalog.h"
#include "catalog/front_door.h"
#include "engine/engine.h"
#include "engine/reader.h"
#include "fs/extended_attributes.h"
#include "fs/filesystem_options.h"
#include "fs/inode_table.h"
#include "fs/node_attributes.h"
#include "fs/open_handles.h"
#include "fs/source_watcher.h"
#include "index/index_store.h"
#include "io/source_root.h"

namespace mibz2::fs {

class Operations {
 public:
  // What the operations serve from; all of it made by the Filesystem, which outlives this.
  struct Parts {
    const FilesystemOptions& options;
    const io::SourceRoot& root;
    catalog::FrontDoor& door;  // the index store, the engine and the catalog
    InodeTable& inodes;
    SourceWatcher& watcher;
    OpenHandles& handles;
  };
  explicit Operations(const Parts& parts);

  void init(fuse_conn_info* conn);
  int lookup(fuse_req_t req, fuse_ino_t parent, const char* name);
  // Gives back lookups of a node; a directory whose node leaves the table is no longer watched.
  void forget(fuse_ino_t ino, uint64_t count) noexcept;
  int getattr(fuse_req_t req, fuse_ino_t ino);
  int readlink(fuse_req_t req, fuse_ino_t ino);
  int opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
  int readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi, bool plus);
  void releasedir(fuse_file_info* fi);
  int open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
  int read(fuse_req_t req, size_t size, off_t off, fuse_file_info* fi);
  void release(fuse_file_info* fi);
  int statfs(fuse_req_t req);
  int getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size);
  int listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);

 private:
  // Looks up the shown entry `e` of `dir` and fills a FUSE entry (counts a lookup, given back on failure).
  int make_entry(Node& dir, const catalog::ShownEntry& e, fuse_entry_param* entry);
  // open's two kinds of file: the source's descriptor, or the decompressed file's Reader.
  int open_plain(fuse_req_t req, const Node& node, FileHandle* handle);
  int open_decompressed(fuse_req_t req, const Node& node, FileHandle* handle);
  // Replies to getxattr/listxattr: the size when asked for it, ERANGE when the buffer is short.
  static int reply_xattr(fuse_req_t req, const std::string& value, size_t size);

  Parts parts_;
  // Attribute and entry cache time. A local SOURCE: an hour, since a node's attributes never change
  // (a new content is a new node), a stale node answers ESTALE at open, and the source watcher has
  // the kernel drop the names a change concerns. A remote one tells of no change: a few seconds,
  // after which the kernel asks again and the object is looked at again (remote_source_root.h).
  const double timeout_;
  NodeAttributes attributes_;
  ExtendedAttributes xattrs_;
};

}  // namespace mibz2::fs
