#include "fs/directory_listing.h"

#include <ctime>
#include <algorithm>

#include <spdlog/spdlog.h>

#include "fs/listing_stamp.h"
#include "fs/node_checks.h"
#include "fs/source_directory.h"

namespace mibz2::fs {
namespace {

uint64_t realtime_ns() {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return io::ns_of(t);
}

}  // namespace

int listing(const io::SourceRoot& root, Node& dir, Listing* out, struct stat* dir_st) {
  struct stat local;
  struct stat& st = dir_st ? *dir_st : local;
  if (const int err = current(root, dir, &st)) return err;
  if (!S_ISDIR(st.st_mode)) return ENOTDIR;
  {
    std::lock_guard lk(dir.listing_mu);
    if (dir.listing && dir.listing_stamp.matches(st)) {
      *out = dir.listing;
      return 0;
    }
  }
  // Built with no lock held (it reads the directory and the head of every .bz2 in it); two
  // threads may both build it, and the last one stores it.
  ListingStamp stamp = ListingStamp::of(st, realtime_ns());
  std::vector<catalog::SourceEntry> entries;
  bool sure = true;
  if (const int err = list_source_directory(root, dir.rel, &entries, &sure)) return err;
  if (!sure) stamp.reusable = false;  // a head could not be read: look again next time
  std::vector<catalog::NamingNote> notes;
  auto shown = std::make_shared<const std::vector<catalog::ShownEntry>>(catalog::map_directory(std::move(entries), &notes));
  {
    std::lock_guard lk(dir.listing_mu);
    const bool first = !dir.listing;
    dir.listing = shown;
    dir.listing_stamp = stamp;
    if (first)
      for (const catalog::NamingNote& n : notes) spdlog::info("{}: {}", root.absolute(io::join_rel(dir.rel, n.source_name)), n.reason);
  }
  *out = std::move(shown);
  return 0;
}

const catalog::ShownEntry* find_shown(const std::vector<catalog::ShownEntry>& entries, const char* name) {
  auto it = std::lower_bound(entries.begin(), entries.end(), name,
                             [](const catalog::ShownEntry& e, const char* n) { return e.name < n; });
  return it == entries.end() || it->name != name ? nullptr : &*it;
}

NodeKind kind_of(const catalog::ShownEntry& e) {
  if (e.decompressed) return e.type == catalog::SourceEntry::Type::kSymlink ? NodeKind::kLinkToDecompressed : NodeKind::kDecompressed;
  switch (e.type) {
    case catalog::SourceEntry::Type::kDirectory: return NodeKind::kDirectory;
    case catalog::SourceEntry::Type::kSymlink: return NodeKind::kSymlink;
    default: return NodeKind::kRegular;
  }
}

mode_t listed_mode(const catalog::ShownEntry& e) {
  return e.type == catalog::SourceEntry::Type::kDirectory ? S_IFDIR : e.type == catalog::SourceEntry::Type::kSymlink ? S_IFLNK : S_IFREG;
}

bool same_type(const catalog::ShownEntry& e, const struct stat& st) {
  return e.type == catalog::SourceEntry::Type::kDirectory ? S_ISDIR(st.st_mode)
         : e.type == catalog::SourceEntry::Type::kSymlink ? S_ISLNK(st.st_mode)
                                                  : S_ISREG(st.st_mode);
}

}  // namespace mibz2::fs
