// The front door to the engine: what every front end (the mount, the mibz2 program, the Python
// module) reads compressed files through. It owns the parts and wires them once: the index store,
// the engine (decoder pool and block cache) and the Catalog (each file's index life), torn down in
// the one safe order (the catalog's builds leave the pool before the engine goes). Through it a
// front end
//   - names a file (file(): one entry per path, so that every open of a file shares its index and
//     its Reader);
//   - obtains its index (obtain(): loaded or built, with progress, stopped by the caller);
//   - opens it for reading (open(): a ReadHandle, whose reads say why they failed, and which builds
//     a distrusted index again and goes on only for a file that has not changed: read_handle.h).
// What is left to each front end is its own edge: FUSE replies, a command's messages and exit
// status, Python's exceptions.
//
// Memory: an entry keeps its index (about 36 bytes a block) and its Reader while anything uses it;
// once nothing does, it is kept for a later open of the same path only within a bound in bytes
// (FrontDoorOptions::idle_files_bytes), least recently named first to go. So a process that reads
// file after file for days (a Dask worker) holds the indexes of the files it has open and a bounded
// few more, never one for every file it ever opened.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <mutex>
#include <stop_token>
#include <string>
#include <unordered_map>

#include "base/status.h"
#include "catalog/catalog.h"
#include "catalog/named_index_access.h"
#include "catalog/remote_source_access.h"
#include "catalog/source_access_by_name.h"
#include "catalog/source_access.h"
#include "engine/engine.h"
#include "index/index_store.h"
#include "io/s3_settings.h"

namespace mibz2::catalog {

class ReadHandle;

struct FrontDoorOptions {
  unsigned threads = 0;          // decoder threads; 0: engine::default_decoder_threads()
  uint64_t cache_size = 0;       // decoded-block cache in bytes; 0: engine::default_cache_size()
  bool readahead = true;         // queue blocks ahead of sequential readers
  bool drop_behind = false;      // sequential readers' passed blocks leave the cache (EngineOptions)
  std::string index_dir;         // where indexes are stored; empty: the default rule (index_dir.h)
  // How sources are reached (must outlive the front door); null: by name (source_access_by_name.h),
  // an http(s):// or s3:// URL as a remote object, anything else as the path given.
  const SourceAccess* access = nullptr;
  // An index the user named for the file this door opens (mibz2 --index, mibz2fs -o index=): a
  // path or a URL, read instead of the file's sidecar (named_index_access.h); empty: none.
  std::string named_index{};
  // S3 settings of the remote objects read by name (access null), over the environment's
  // (io/s3_settings.h): fsspec's storage options, as the Python module takes them.
  io::S3Options s3 = {};
  // What entries no one uses may keep of memory (their indexes and Readers) for a later open of
  // the same path; 0: kDefaultIdleFilesBytes.
  uint64_t idle_files_bytes = 0;
};

inline constexpr uint64_t kDefaultIdleFilesBytes = uint64_t{4} << 20;

class FrontDoor {
 public:
  explicit FrontDoor(const FrontDoorOptions& options);
  ~FrontDoor();  // the catalog (its builds leave the pool) before the engine
  FrontDoor(const FrontDoor&) = delete;
  FrontDoor& operator=(const FrontDoor&) = delete;

  engine::Engine& engine() { return *engine_; }
  Catalog& catalog() { return *catalog_; }
  const index::IndexStore& store() const { return store_; }
  const SourceAccess& access() const { return access_; }

  // The entry for the file at `path` (made absolute; a URL is kept as it is): the same one for
  // every call with the same name while anything uses it or it is kept idle (see the top).
  FileRef file(const std::string& path);

  // Called about five times a second while an index is built, with the compressed bytes done and in
  // all (total 0 while it is queued), and once more with (size, size) when a build the caller waited
  // for has finished, however short; returning false stops the wait (the build goes on).
  using Progress = std::function<bool(uint64_t done, uint64_t total)>;
  // Loads or builds the file's index (`force`: builds it even when a stored one is current) and
  // waits for it, after looking whether the source changed since it was indexed. Returns the status
  // it settled in, or the status when `progress` stopped the wait (not settled then).
  IndexStatus obtain(const FileRef& file, bool force, const Progress& progress = {});

  // A handle to read the file (waits for its index as Catalog::open does; a stop request ends the
  // wait with EINTR). Fails as Catalog::open does.
  base::Result<std::unique_ptr<ReadHandle>> open(const FileRef& file, std::stop_token stop = {});

  // Entries kept now (for tests): every one named and not yet forgotten.
  size_t kept_files() const;

 private:
  // Forgets entries nobody uses, oldest first, until those left fit idle_files_bytes. Under mu_.
  void forget_idle_locked();

  const uint64_t idle_files_bytes_;
  const PlainSourceAccess plain_access_;
  const RemoteSourceAccess remote_access_;
  const SourceAccessByName by_name_access_;
  const std::optional<NamedIndexAccess> named_access_;  // over the access given, when an index is named
  const SourceAccess& access_;
  index::IndexStore store_;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<Catalog> catalog_;

  struct Kept {
    FileRef file;
    uint64_t bytes = 0;       // what it holds, once measured idle (memory_of)
    bool with_index = false;  // measured with its index (else measured again, once it has one)
  };
  // Taken before the Catalog's and a CatalogFile's own mutexes (Catalog::add, CatalogFile::current),
  // never after; never held across I/O or a wait.
  mutable std::mutex mu_;
  std::list<Kept> kept_;  // guarded by mu_: every entry file() handed out and not forgotten, most recently named first
  std::unordered_map<std::string, std::list<Kept>::iterator> by_path_;  // guarded by mu_: the same, by absolute path
};

}  // namespace mibz2::catalog
