// The source tree the mount tests mount, and what the mount must show of it: nested directories,
// plain files, symlinks, single-block, multi-block and multistream .bz2 files, .tbz2 and .tbz
// archives, a name collision, a fake .bz2, names with spaces and UTF-8. Each file shown is also
// kept as a plain file outside the mount, so that programs can be run on both and compared.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "test_support.h"

namespace mibz2::test {

namespace stdfs = std::filesystem;

struct Shown {
  enum Kind { kDir, kFile, kSymlink } kind = kFile;
  mode_t mode = 0;        // permission bits
  Bytes content;          // files: what reading gives
  std::string target;     // symlinks
  bool decompressed = false;
  stdfs::path source;     // the source entry
  size_t blocks = 0;      // decompressed: bzip2 blocks in the source
  stdfs::path original;   // files: the content as a plain file outside the mount (for programs)
};


// A source tree being made, with what the mount must show of each entry (by path relative to the
// mount).
class Tree {
 public:
  Tree();
  const stdfs::path& src() const { return src_; }
  const std::map<std::string, Shown>& shown() const { return shown_; }
  const Shown& at(const std::string& rel) const { return shown_.at(rel); }

  void dir(const std::string& rel, mode_t mode = 0755);
  // A file shown as it is.
  void plain(const std::string& rel, const Bytes& content, mode_t mode = 0644);
  // `compressed` stored as source_rel, shown decompressed (as `original`) under shown_rel.
  void bz2(const std::string& source_rel, const std::string& shown_rel, const Bytes& original, const Bytes& compressed,
           mode_t mode = 0644);
  void symlink(const std::string& rel, const std::string& target);
  // Gives the directories their modes (last: a 0500 directory must still be filled).
  void finish();

 private:
  Shown& add_file(const std::string& rel, const Bytes& content, mode_t mode, const stdfs::path& source);

  TempDir dir_;
  stdfs::path src_;
  stdfs::path originals_;
  std::map<std::string, Shown> shown_;
  std::vector<std::pair<stdfs::path, mode_t>> modes_;
};

// The bzip2 blocks of a valid file.
size_t block_count(const Bytes& compressed);

// A name with spaces and characters of three scripts.
extern const std::string kUtf8Name;

// The tree every FsMountTest mounts unless it makes its own.
std::unique_ptr<Tree> make_main_tree();

}  // namespace mibz2::test
