// The random-access engine: one decoder pool and one block cache shared by every open file, and a
// Reader per file. Knows nothing of FUSE; the filesystem and `mibz2 cat` both read through it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "engine/block_cache.h"
#include "engine/decoder_pool.h"
#include "engine/engine_stats.h"
#include "engine/readahead.h"
#include "index/block_index.h"
#include "io/source.h"

namespace mibz2::engine {

class Reader;

struct EngineOptions {
  unsigned threads = 0;        // decoder threads; 0 = default_decoder_threads()
  uint64_t cache_size = 0;     // bytes; 0 = default_cache_size()
  bool readahead = true;       // queue blocks ahead of sequential readers
  uint64_t readahead_bytes = 0;  // per stream; 0 = a quarter of the cache, at most 256 MiB
  // A sequential reader's blocks leave the cache once it has passed them (reader.h): for a reader
  // that keeps the bytes elsewhere (the mount: the kernel's page cache), so that the next decode
  // reuses their memory. Needs readahead (its stream detection).
  bool drop_behind = false;
};

// 1 GiB, or a quarter of physical memory if that is less.
uint64_t default_cache_size();

class Engine {
 public:
  explicit Engine(const EngineOptions& options);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // A Reader over the open `source` (taken over) whose identity, read from it, is `opened`; `path`
  // names it in messages.
  // `file_id` keys the file's blocks in the cache: reuse it when the same unchanged file is opened
  // again, so the cache carries over. Fails (ESTALE) when the file is not the file the index
  // describes. Catalog::open is the way files are opened; this is the step it ends with.
  base::Result<std::shared_ptr<Reader>> open(uint64_t file_id, const std::string& path,
                                             std::unique_ptr<io::Source> source, const index::SourceIdentity& opened,
                                             std::shared_ptr<const index::BlockIndex> index);
  // Forgets a file's cached blocks (the file changed).
  void forget(uint64_t file_id) { cache_.erase_file(file_id); }

  DecoderPool& pool() { return pool_; }
  BlockCache& cache() { return cache_; }
  EngineStats& stats() { return stats_; }
  const EngineOptions& options() const { return options_; }
  ReadAheadLimits readahead_limits() const;

 private:
  EngineOptions options_;
  EngineStats stats_;
  BlockCache cache_;
  DecoderPool pool_;  // last: its workers stop (finishing queued jobs) before the cache goes
};

}  // namespace mibz2::engine
