// The engine the Python module reads through: one index store, one Engine (decoder pool, block
// cache) and one Catalog per set of settings, shared by every mibz2.open() in the process that asks
// for the same settings, so that threads and cache are not multiplied by the number of open files
// (issue 25: many worker processes on one machine). Nothing here knows Python: module.cc binds it.
//
// Fork: a child process inherits the memory of the engines but not their decoder threads. A
// session made in another process is never handed out: session_for() makes a new one, and the old
// one is left alone (its destructor would wait for threads that do not exist in the child).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

#include "base/status.h"
#include "catalog/catalog.h"
#include "engine/engine.h"
#include "engine/reader.h"
#include "index/index_store.h"

namespace mibz2::python {

struct SessionOptions {
  unsigned threads = 0;      // decoder threads; 0: the engine's default
  uint64_t cache_bytes = 0;  // 0: the engine's default
  std::string index_dir;     // empty: index::default_index_dir(), as mibz2 and mibz2fs
  bool operator==(const SessionOptions&) const = default;
};

class Session {
 public:
  explicit Session(const SessionOptions& options);
  ~Session();  // the catalog's builds leave the pool before the engine goes
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const SessionOptions& options() const { return options_; }
  pid_t pid() const { return pid_; }
  engine::Engine& engine() { return *engine_; }
  catalog::Catalog& catalog() { return *catalog_; }
  const index::IndexStore& store() const { return store_; }

  // The catalog's entry for `path` (made absolute): one per path for the session's life, so that
  // every open of a file shares its index and its Reader.
  catalog::FileRef file(const std::string& path);

  // Loads or builds the file's index (`rebuild`: builds it even when one is current) and waits for
  // it, calling `tick` with the compressed bytes done and in all about five times a second while it
  // is built (total 0 while the build is queued), and once more with (compressed size, compressed
  // size) when a build it waited for succeeded, however short; a tick that returns false stops the
  // wait (the build goes on). Returns the status it settled in (not settled when a tick stopped the
  // wait).
  catalog::IndexStatus obtain(const catalog::FileRef& file, bool rebuild,
                             const std::function<bool(uint64_t done, uint64_t total)>& tick);

 private:
  const SessionOptions options_;
  const pid_t pid_;
  index::IndexStore store_;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<catalog::Catalog> catalog_;
  std::mutex mu_;  // guards files_
  std::unordered_map<std::string, catalog::FileRef> files_;  // by absolute path
};

// The session with these settings in this process, made at the first call.
std::shared_ptr<Session> session_for(const SessionOptions& options);
// Forgets every session of this process (interpreter exit): each goes when its last file closes.
void release_sessions();

}  // namespace mibz2::python
