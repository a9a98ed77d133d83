#include "fs/extended_attributes.h"

#include <sys/stat.h>

#include <cerrno>

#include "index/line_map.h"

namespace mibz2::fs {

Xattr xattr_named(std::string_view name) {
  static constexpr std::pair<std::string_view, Xattr> kNames[] = {
      {"user.mibz2fs.stats", Xattr::kStats},
      {"user.mibz2fs.index", Xattr::kIndex},
      {"user.mibz2fs.compressed_size", Xattr::kCompressedSize},
      {"user.mibz2fs.blocks", Xattr::kBlocks},
      {"user.mibz2fs.damaged_blocks", Xattr::kDamagedBlocks},
      {"user.mibz2fs.damage", Xattr::kDamage},
      {"user.mibz2fs.lines", Xattr::kLines},
  };
  for (const auto& [n, x] : kNames)
    if (n == name) return x;
  return Xattr::kUnknown;
}

std::string index_xattr_value(Xattr which, const index::BlockIndex& index) {
  if (which == Xattr::kBlocks) return std::to_string(index.blocks.size());
  if (which == Xattr::kDamagedBlocks) return std::to_string(index.damaged_blocks);
  if (which == Xattr::kLines) {
    const index::LineMap lines(index);
    if (const auto count = lines.line_count()) return std::to_string(*count);
    return "unknown: " + lines.unknown_why();
  }
  std::string value;
  for (const std::string& line : index::damage_report(index)) value += line + "\n";
  return value;
}

int fits_xattr_buffer(const std::string& value, size_t size) { return size != 0 && size < value.size() ? ERANGE : 0; }

int ExtendedAttributes::get(const Node& node, std::string_view name, std::string* value) const {
  const Xattr which = xattr_named(name);
  // On the mount's root directory: the engine's and the catalog's counters, and the indexing of the
  // whole mount (the same name as a file's index state).
  if (node.ino == FUSE_ROOT_ID && (which == Xattr::kStats || which == Xattr::kIndex)) {
    const catalog::CatalogSummary summary = catalog_.summary();
    *value = which == Xattr::kIndex ? summary.describe()
                                    : engine_.stats().summary() + " " + summary.counters() + " nodes=" +
                                          std::to_string(inodes_.size()) + " watched_dirs=" +
                                          std::to_string(watcher_.watches());
    return 0;
  }
  // Extended attributes of decompressed files, read by name and never listed: the first two always,
  // the others once the index is ready (reading an attribute never waits for an index: until then
  // they are ENODATA).
  if (node.kind != NodeKind::kDecompressed) return ENODATA;
  const catalog::FileRef& file = node.file;
  // Never waits for an index: a file not indexed yet says so, and its attributes that need the
  // index are not there yet (ENODATA). They tell how the source file is now, whatever content the
  // node was made for (the kernel caches none of them): an ESTALE here would send the kernel to
  // the new node, whose attributes it must ask first, and that getattr waits for the index.
  switch (which) {
    case Xattr::kCompressedSize: {
      struct stat st;
      if (const int err = root_.lstat(node.rel, &st)) return err;
      if (!io::SourceStamp::of(st).same_file(node.stamp)) return ESTALE;  // another file: its own node answers
      *value = std::to_string(st.st_size);
      return 0;
    }
    case Xattr::kIndex:
      catalog_.refresh(file);
      catalog_.prepare(file, catalog::Catalog::Need::kSoon);  // a changed source: queued again
      *value = catalog_.status(file).describe();
      return 0;
    case Xattr::kBlocks:
    case Xattr::kDamagedBlocks:
    case Xattr::kDamage:
    case Xattr::kLines: {
      catalog_.refresh(file);
      const auto idx = catalog_.status(file).index;
      if (!idx) return ENODATA;
      *value = index_xattr_value(which, *idx);
      return 0;
    }
    case Xattr::kStats:
    case Xattr::kUnknown: break;
  }
  return ENODATA;
}

// Our attributes describe the mounted file, not its content: a copy made with `cp -a`,
// `rsync -X` or `tar --xattrs` (which copy every attribute listed) would carry them as stale
// lies. So none is listed; each is read by its name (getfattr -n).
std::string ExtendedAttributes::listed() { return std::string(); }

}  // namespace mibz2::fs
