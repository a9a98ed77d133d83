// The extended attributes of the mount (user.mibz2fs.*), read by name and never listed: a
// decompressed file's compressed size, index state, blocks, damage and lines, and on the mount's root the
// engine's and the catalog's counters and the indexing of the whole mount. Reading one never waits
// for an index.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "catalog/catalog.h"
#include "engine/engine.h"
#include "fs/inode_table.h"
#include "fs/source_watcher.h"
#include "index/block_index.h"
#include "io/source_root.h"

namespace mibz2::fs {

enum class Xattr {
  kUnknown,
  kStats,           // user.mibz2fs.stats (the root only)
  kIndex,           // user.mibz2fs.index (the root: the whole mount's; a decompressed file: its own)
  kCompressedSize,  // user.mibz2fs.compressed_size
  kBlocks,          // user.mibz2fs.blocks          \ .
  kDamagedBlocks,   // user.mibz2fs.damaged_blocks   | once the index is ready
  kDamage,          // user.mibz2fs.damage           |
  kLines,           // user.mibz2fs.lines           /
};

// The attribute called `name`.
Xattr xattr_named(std::string_view name);

// The value of an attribute an index answers (kBlocks, kDamagedBlocks, kDamage, kLines). kLines is
// the decimal line count as `sed` counts, or "unknown: WHY" when the index cannot tell (damage, or
// an index made before line counts): never a guess.
std::string index_xattr_value(Xattr which, const index::BlockIndex& index);

// Whether `value` fits the caller's buffer of `size` bytes (0 asks for the size): 0 or ERANGE.
int fits_xattr_buffer(const std::string& value, size_t size);

class ExtendedAttributes {
 public:
  ExtendedAttributes(const io::SourceRoot& root, engine::Engine& engine, catalog::Catalog& catalog,
                     const InodeTable& inodes, const SourceWatcher& watcher)
      : root_(root), engine_(engine), catalog_(catalog), inodes_(inodes), watcher_(watcher) {}

  // The value of `name` on `node` into *value: 0, or ENODATA (no such attribute on this node, or
  // not before its index is ready), ESTALE (the path holds another file now), or lstat's errno.
  int get(const Node& node, std::string_view name, std::string* value) const;
  // What listxattr shows: nothing (see the .cc).
  static std::string listed();

 private:
  const io::SourceRoot& root_;
  engine::Engine& engine_;
  catalog::Catalog& catalog_;
  const InodeTable& inodes_;
  const SourceWatcher& watcher_;
};

}  // namespace mibz2::fs
