// Where index files live and how they are loaded and saved (index/FORMAT.md, "Where index files
// live"): one file per source, named by basename and a hash of the source's absolute path, written
// atomically, trusted only when the source file's identity still matches.
#pragma once

#include <mutex>
#include <string>

#include "index/block_index.h"

namespace mibz2::index {

// $XDG_CACHE_HOME/mibz2fs, else $HOME/.cache/mibz2fs (empty string if neither is set).
std::string default_index_dir();

// Size, mtime, inode and the fingerprint (XXH3-64 of the first and last 64 KiB) of an open file.
bool identify_source(int fd, SourceIdentity* id, std::string* error);

// The largest index file a source of `source_size` bytes can have (FORMAT.md, "Validity").
uint64_t max_index_file_size(uint64_t source_size);

class IndexStore {
 public:
  // `dir` empty: default_index_dir().
  explicit IndexStore(std::string dir = {});

  const std::string& dir() const { return dir_; }
  // The index file for a source, by its absolute path.
  std::string path_for(const std::string& source_abs_path) const;

  enum class Load { kCurrent, kMissing, kStale, kInvalid };
  // Loads the index of `source_abs_path` if it exists, is valid and matches `id`; otherwise says
  // why not in *reason (for kStale and kInvalid).
  Load load(const std::string& source_abs_path, const SourceIdentity& id, BlockIndex* out, std::string* reason) const;

  // Writes atomically (temporary file, fsync, rename). On failure returns false with *error; the
  // first failure marks the store read-only so callers warn once and keep indexes in memory.
  bool save(const std::string& source_abs_path, const BlockIndex& index, std::string* error);
  bool read_only() const;

 private:
  std::string dir_;
  mutable std::mutex mu_;  // a leaf lock
  bool read_only_ = false;  // guarded by mu_
};

}  // namespace mibz2::index
