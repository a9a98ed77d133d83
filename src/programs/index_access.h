// How the programs reach indexes: one engine (the decoder pool that builds and reads), one index
// store and one Catalog for the files a command names, and the progress and messages a user sees
// while an index is loaded or built.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "catalog/catalog.h"
#include "engine/engine.h"
#include "index/index_store.h"
#include "programs/progress_line.h"

namespace mibz2::programs {

class IndexAccess {
 public:
  // `program` prefixes messages ("mibz2 cat", "mibz2fs"); `threads` 0 and `cache_bytes` 0 mean the
  // engine's defaults; `access`, if given, is how sources are reached (else the paths are opened as
  // given) and must outlive this. `warn_unsaved`: say once that an index could not be stored (a
  // command whose job is storing them says it for each file itself).
  IndexAccess(std::string program, unsigned threads, const std::string& index_dir, uint64_t cache_bytes = 0,
              const catalog::SourceAccess* access = nullptr, bool warn_unsaved = true);
  ~IndexAccess();

  engine::Engine& engine() { return *engine_; }
  catalog::Catalog& catalog() { return *catalog_; }

  // The catalog's entry for a path as the user wrote it (made absolute).
  catalog::FileRef file(const std::string& path);
  // Loads or builds the file's index (`rebuild`: builds it even if one is current), with a
  // progress bar on a terminal while building, and messages for a stored index that was not used,
  // for the build's notes (unless `quiet_notes`), for an index directory that cannot be written
  // (once, if so constructed) and for a failure. `shown` names the file in them.
  catalog::IndexStatus obtain(const catalog::FileRef& file, const std::string& shown, bool rebuild, bool quiet_notes);
  // A second progress line under each file's bar (mibz2fs -o wait_index: the total over every
  // file), given the bytes done of the file being built.
  void set_overall_progress(std::function<ProgressFigures(uint64_t file_done)> overall) { overall_ = std::move(overall); }

 private:
  const std::string program_;
  const bool warn_unsaved_;
  index::IndexStore store_;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<catalog::Catalog> catalog_;
  bool warned_unsaved_ = false;
  std::function<ProgressFigures(uint64_t)> overall_;
};

}  // namespace mibz2::programs
