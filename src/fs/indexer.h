// Gets every compressed file of the mount its index: the stored one when it is current (at once),
// otherwise a build in the background on the engine's decoder pool, at background priority so
// that reads always go first. Builds run one file at a time on all workers; files waiting for a
// build are served newest request first, and a caller that needs a file's size now (stat, open)
// moves it to the front and waits for it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "fs/compressed_file.h"
#include "index/index_store.h"

namespace mibz2::fs {

class Indexer {
 public:
  Indexer(engine::Engine& engine, index::IndexStore& store);
  ~Indexer();  // shutdown(), then waits until no build job is left on the pool

  // Cancels the running build and settles every waiting file as failed, so that no request
  // thread stays blocked on an index at unmount.
  void shutdown();

  // Makes sure the file's index is ready or on its way. `urgent` puts it first in line.
  void ensure(const std::shared_ptr<CompressedFile>& file, bool urgent);
  // ensure(urgent) and wait until the index is ready (true) or failed (false, error in the file).
  bool wait_ready(const std::shared_ptr<CompressedFile>& file);
  // Re-indexes the file if the source no longer matches its index (size, mtime or inode).
  // Returns true if it changed. Call before serving an open.
  bool refresh_if_changed(const std::shared_ptr<CompressedFile>& file);

  // Files queued or building (for diagnostics and the wait_index progress).
  size_t pending() const;

 private:
  struct Build;
  bool load_stored(const std::shared_ptr<CompressedFile>& file);  // true: settled (loaded or failed)
  void queue_build(const std::shared_ptr<CompressedFile>& file, bool urgent);
  void submit_step(const std::shared_ptr<Build>& build);
  void start_next_build();
  void start_build(const std::shared_ptr<CompressedFile>& file);
  void run_step(const std::shared_ptr<Build>& build, engine::WorkerContext& ctx);
  void finish_build(const std::shared_ptr<Build>& build);
  void settle(const std::shared_ptr<CompressedFile>& file, std::shared_ptr<const index::BlockIndex> index,
              std::string error);

  engine::Engine& engine_;
  index::IndexStore& store_;

  mutable std::mutex mu_;       // guards the fields below; never held across I/O or a decode
  std::condition_variable idle_;  // no build and no build job left (for the destructor)
  std::vector<std::shared_ptr<CompressedFile>> waiting_;  // back = next to build (newest first)
  std::shared_ptr<Build> current_;  // the build running now
  bool building_ = false;
  unsigned jobs_ = 0;           // build jobs queued or running on the pool
  bool stopping_ = false;
  std::atomic<bool> warned_read_only_{false};
};

// A fresh cache key for a file's content.
uint64_t new_file_id();

}  // namespace mibz2::fs
