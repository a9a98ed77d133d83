// The state of one compressed source file shown decompressed: its index (ready, being built, or
// failed), the engine Reader while it is open, and the cache key of its current content.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "engine/reader.h"
#include "index/block_index.h"

namespace mibz2::fs {

class CompressedFile {
 public:
  // kUnknown -> kLoading (one thread reads the stored index) -> kReady, or -> kQueued (waits for a
  // build) -> kBuilding -> kReady or kFailed. A change of the source sends it back to kUnknown.
  enum class State { kUnknown, kLoading, kQueued, kBuilding, kReady, kFailed };

  explicit CompressedFile(std::string source) : source_(std::move(source)) {}

  const std::string& source() const { return source_; }

  // --- all below guarded by mu ---
  mutable std::mutex mu;
  std::condition_variable settled;  // state became kReady or kFailed
  State state = State::kUnknown;
  bool wanted_urgently = false;     // someone waits for it while it loads: build it first if needed
  std::shared_ptr<const index::BlockIndex> index;
  std::string error;                // why kFailed
  index::SourceIdentity failed_identity;  // the source as it was when it failed (size, mtime, inode)
  uint64_t file_id = 0;             // cache key of the indexed content (new id when it changes)
  uint64_t build_done = 0;          // progress of a build, compressed bytes
  uint64_t build_total = 0;
  std::weak_ptr<engine::Reader> reader;  // shared by the open handles of this file
  uint64_t generation = 0;          // bumped when the content changes (for kernel cache decisions)

 private:
  const std::string source_;
};

}  // namespace mibz2::fs
