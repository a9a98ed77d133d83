// The front doors the Python module reads through (catalog/front_door.h): one per set of settings
// in the process, shared by every mibz2.open() that asks for the same settings, so that threads and
// cache are not multiplied by the number of open files (many worker processes on one machine, each
// with its own). Nothing here knows Python: module.cc binds it.
//
// Fork: a child process inherits the memory of the front doors but not their decoder threads. A
// front door made in another process is never handed out: front_door_for() makes a new one, and the
// old one is left alone (its destructor would wait for threads that do not exist in the child).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "catalog/front_door.h"
#include "io/s3_settings.h"

namespace mibz2::python {

struct DoorSettings {
  unsigned threads = 0;     // decoder threads; 0: the engine's default
  uint64_t cache_size = 0;  // bytes; 0: the engine's default
  std::string index_dir;    // empty: the default rule (index/index_dir.h), as mibz2 and mibz2fs
  io::S3Options s3 = {};    // over the environment's, for s3:// URLs (io/s3_settings.h)
  bool operator==(const DoorSettings&) const = default;
};

// The front door with these settings in this process, made at the first call.
std::shared_ptr<catalog::FrontDoor> front_door_for(const DoorSettings& settings);
// Forgets every front door of this process (interpreter exit): each goes when its last file closes.
void release_front_doors();

}  // namespace mibz2::python
