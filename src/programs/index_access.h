// How the programs reach indexes: the front door (catalog/front_door.h: the index store, the engine
// and the catalog) for the files a command names, with the progress and messages a user sees while
// an index is loaded or built.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "catalog/catalog.h"
#include "catalog/front_door.h"
#include "engine/engine.h"
#include "programs/progress_line.h"

namespace mibz2::programs {

class IndexAccess {
 public:
  // `program` prefixes messages ("mibz2 cat", "mibz2fs"); `options` are the front door's (threads,
  // cache, index directory, how sources are reached). `warn_unsaved`: say once that an index could
  // not be stored (a command whose job is storing them says it for each file itself).
  IndexAccess(std::string program, const catalog::FrontDoorOptions& options, bool warn_unsaved = true);

  catalog::FrontDoor& door() { return door_; }
  engine::Engine& engine() { return door_.engine(); }
  catalog::Catalog& catalog() { return door_.catalog(); }

  // The entry for a path as the user wrote it.
  catalog::FileRef file(const std::string& path) { return door_.file(path); }
  // Loads or builds the file's index (`force`: builds it even if one is current), with a progress
  // bar on a terminal while building, and messages for a stored index that was not used, for the
  // build's notes (unless `quiet_notes`), for an index directory that cannot be written (once, if
  // so constructed) and for a failure. `shown` names the file in them.
  catalog::IndexStatus obtain(const catalog::FileRef& file, const std::string& shown, bool force, bool quiet_notes);
  // A second progress line under each file's bar (mibz2fs -o wait_index: the total over every
  // file), given the bytes done of the file being built.
  void set_overall_progress(std::function<ProgressFigures(uint64_t file_done)> overall) { overall_ = std::move(overall); }

 private:
  const std::string program_;
  const bool warn_unsaved_;
  catalog::FrontDoor door_;
  bool warned_unsaved_ = false;
  std::function<ProgressFigures(uint64_t)> overall_;
};

}  // namespace mibz2::programs
