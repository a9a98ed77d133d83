// One source file's entry in the Catalog: its path and identity, and its index life (the state of
// catalog.h, guarded by the entry's own mutex, a leaf lock).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "engine/catalog_report.h"
#include "index/block_index.h"
#include "index/index_builder.h"

namespace mibz2::engine {

class Reader;

// One source file's entry. Only the Catalog reads or changes its state.
class CatalogFile {
 public:
  // `device` and `inode`, when not 0, are the identity of the file the entry stands for: a
  // SourceAccess refuses a path that holds another file now.
  explicit CatalogFile(std::string path, uint64_t device = 0, uint64_t inode = 0)
      : path_(std::move(path)), device_(device), inode_(inode) {}
  const std::string& path() const { return path_; }
  uint64_t device() const { return device_; }
  uint64_t inode() const { return inode_; }

 private:
  friend class Catalog;

  const std::string path_;
  const uint64_t device_;
  const uint64_t inode_;
  // A leaf lock (see Catalog's lock order); guards everything below.
  mutable std::mutex mu_;
  std::condition_variable_any settled_;  // state became kReady or kFailed
  IndexState state_ = IndexState::kUnknown;
  bool wanted_now_ = false;               // someone waits: build it first, at demand priority
  std::shared_ptr<const index::BlockIndex> index_;  // kReady
  std::string error_;                     // kFailed
  IndexFailure failure_ = IndexFailure::kNone;  // kFailed
  index::SourceIdentity failed_identity_; // the source as it was when it failed
  uint64_t confirmed_ctime_ns_ = 0;       // the source's ctime when its identity was last confirmed
  uint64_t file_id_ = 0;                  // cache key of the indexed content (new id when it changes)
  IndexOrigin origin_;                    // of the current index, or of the failed attempt
  std::string not_loaded_reason_;         // from the last load, for the build's origin
  bool distrust_stored_ = false;          // a stored index failed a read: build, never load
  std::weak_ptr<Reader> reader_;          // shared by the open handles of this content
  std::shared_ptr<const index::IndexBuilder> builder_;  // kBuilding: for progress
  uint64_t source_size_ = 0;              // compressed size when last opened (for the bytes to do)
};
using FileRef = std::shared_ptr<CatalogFile>;

}  // namespace mibz2::engine
