#include "fs/source_tree.h"

#include <deque>
#include <vector>

#include "fs/source_directory.h"

namespace mibz2::fs {

void for_each_decompressed_file(const io::SourceRoot& root, const std::function<bool()>& stop,
                                const std::function<void(const std::string& rel, const catalog::ShownEntry& entry)>& file) {
  std::deque<std::string> dirs{std::string()};
  while (!dirs.empty() && !stop()) {
    const std::string dir = std::move(dirs.front());
    dirs.pop_front();
    std::vector<catalog::SourceEntry> entries;
    if (list_source_directory(root, dir, &entries) != 0) continue;
    std::vector<catalog::NamingNote> notes;  // logged when the directory is listed through the mount
    for (const catalog::ShownEntry& e : catalog::map_directory(std::move(entries), &notes)) {
      if (stop()) return;
      const std::string rel = io::join_rel(dir, e.source_name);
      if (e.type == catalog::SourceEntry::Type::kDirectory) dirs.push_back(rel);
      else if (e.decompressed && e.type == catalog::SourceEntry::Type::kRegular) file(rel, e);
    }
  }
}

}  // namespace mibz2::fs
