// How source names appear in the mount: X.bz2 as X, X.tbz2 and X.tbz as X.tar, with the rules
// for collisions (a real file keeps its name; the compressed one stays visible, raw, under its own)
// and for files that only look compressed (shown raw under their own name).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/source_stamp.h"

namespace mibz2::catalog {

// The decompressed name for a compressed-looking name, or nullopt ("a.txt", ".bz2", "x.tar", and
// "..bz2", which would be shown as "..").
std::optional<std::string> decompressed_name(std::string_view name);

// The names of a directory that may be shown otherwise when the source entry `name` appears,
// disappears or changes (name given, and each at most once): `name` itself, the name it is shown
// under ("X" for "X.bz2", "X.tar" for "X.tbz2"), and the names of the entries that compete with it
// for a name or are shown under a name it takes ("X.bz2" when "X" comes or goes: a real name wins,
// the compressed one is shown raw; "X.tbz" when "X.tar.bz2" comes, the first by source name wins).
// Each is both a name the mount may show and a source name a node may stand for.
std::vector<std::string> names_affected_by(std::string_view name);

// One source directory entry, as the listing needs it.
struct SourceEntry {
  std::string name;
  enum class Type { kDirectory, kRegular, kSymlink, kOther } type;
  // A regular file whose content starts with a bzip2 stream header, or a symlink with a relative
  // target that is such a file.
  bool is_bzip2 = false;
  io::SourceStamp stamp{};  // as listed (the entry itself, not a symlink's target)
};

// One entry of the mirrored directory.
struct ShownEntry {
  std::string name;         // as shown in the mount
  std::string source_name;  // the entry in the source directory
  SourceEntry::Type type;
  bool decompressed;        // shown decompressed (a symlink: pointing to the decompressed name)
  io::SourceStamp stamp{};      // the source entry's, as listed
};

// A note for the log about a name that could not be shown decompressed.
struct NamingNote {
  std::string source_name;
  std::string reason;
};

// The mirrored listing of one directory: every source entry exactly once, sorted by shown name.
std::vector<ShownEntry> map_directory(std::vector<SourceEntry> entries, std::vector<NamingNote>* notes);

}  // namespace mibz2::catalog
