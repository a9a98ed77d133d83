#include "fs/source_tree.h"

#include <deque>
#include <vector>

#include "fs/name_mapping.h"
#include "fs/source_directory.h"

namespace mibz2::fs {

void for_each_decompressed_file(const std::string& root, const std::function<bool()>& stop,
                                const std::function<void(const std::string& path)>& file) {
  std::deque<std::string> dirs{root};
  while (!dirs.empty() && !stop()) {
    const std::string dir = std::move(dirs.front());
    dirs.pop_front();
    std::vector<SourceEntry> entries;
    if (list_source_directory(dir, &entries) != 0) continue;
    std::vector<NamingNote> notes;  // logged when the directory is listed through the mount
    for (const ShownEntry& e : map_directory(std::move(entries), &notes)) {
      if (stop()) return;
      const std::string path = child_path(dir, e.source_name);
      if (e.type == SourceEntry::Type::kDirectory) dirs.push_back(path);
      else if (e.decompressed && e.type == SourceEntry::Type::kRegular) file(path);
    }
  }
}

}  // namespace mibz2::fs
