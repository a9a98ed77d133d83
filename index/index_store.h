// Where index files live and how they are loaded and saved (index/FORMAT.md, "Where index files
// live"): one file per source, named by basename and a hash of the source's absolute path, written
// atomically, trusted only when the source file's identity still matches.
#pragma once

#include <mutex>
#include <string>

#include "index/block_index.h"

namespace mibz2::index {

// The directory the rule of index/index_dir.h gives this process (empty string if none).
std::string default_index_dir();

// Size, mtime, inode and the fingerprint (XXH3-64 of the first and last 64 KiB) of an open file.
bool identify_source(int fd, SourceIdentity* id, std::string* error);

// The largest index file a source of `source_size` bytes can have (FORMAT.md, "Validity").
uint64_t max_index_file_size(uint64_t source_size);

class IndexStore {
 public:
  // `dir` empty: default_index_dir(); root's /var/cache/mibz2fs is created (0700) or checked here,
  // and left unused (dir() empty) if it is not safe (index/index_dir.h).
  explicit IndexStore(std::string dir = {});

  // Empty when there is no place to store indexes (then problem() says why).
  const std::string& dir() const { return dir_; }
  const std::string& problem() const { return problem_; }
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
  std::string problem_;  // why dir_ is empty
  mutable std::mutex mu_;  // a leaf lock
  bool read_only_ = false;  // guarded by mu_
};

}  // namespace mibz2::index
