// Gets the index of a source file: the persisted one when it is current, else a fresh parallel
// build that is then persisted. The one entry point the programs and the filesystem use.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "index/block_index.h"
#include "index/index_store.h"

namespace mibz2::index {

struct ObtainOptions {
  unsigned threads = 0;        // build threads; 0 = all cores
  bool force_rebuild = false;  // ignore a current index
  // Called about five times a second from the calling thread while a build runs.
  std::function<void(uint64_t done_bytes, uint64_t total_bytes)> progress;
};

struct Obtained {
  bool ok = false;
  std::string error;            // why there is no index (unreadable file, not bzip2, ...)
  std::shared_ptr<const BlockIndex> index;
  std::string index_path;       // where it is (or would be) stored
  bool built = false;           // built now (false: loaded)
  bool saved = false;           // persisted after building
  std::string not_loaded_reason;  // why a stored index was not used (stale, damaged), if any
  std::string save_error;       // why it could not be persisted, if it was not
  std::vector<std::string> notes;  // damage and warnings found while building
};

// `source_path` may be relative; the index is keyed by the absolute, symlink-resolved path.
Obtained obtain_index(const std::string& source_path, IndexStore& store, const ObtainOptions& options);

// The stored index if it is current; ok=false otherwise (nothing is built).
Obtained load_if_current(const std::string& source_path, IndexStore& store);

// Decodes the whole file on `threads` threads, handing each block's bytes to `sink` in file order,
// and stores the index built on the way (one pass instead of an index build and then a decode).
// A damaged block reaches the sink with damaged=true and no bytes. If the sink returns false the
// decode stops and nothing is stored (the result says stopped).
struct StreamedBlock {
  const uint8_t* data;
  size_t size;
  size_t block;
  bool damaged;
};
Obtained decode_and_index(const std::string& source_path, IndexStore& store, unsigned threads,
                          const std::function<bool(const StreamedBlock&)>& sink, bool* stopped);

// The absolute, symlink-resolved path (or the input, if it cannot be resolved).
std::string absolute_path(const std::string& path);

}  // namespace mibz2::index
