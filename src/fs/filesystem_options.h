// What a mount serves and with what: the Filesystem's options (filesystem.h).
#pragma once

#include <cstdint>
#include <string>

namespace mibz2::fs {

// What a mount serves and with what (mibz2fs's command line fills it: src/programs/mount_options.h).
struct FilesystemOptions {
  std::string source;        // absolute path of SOURCE
  std::string mountpoint;    // absolute path of MOUNTPOINT (for the logs)
  unsigned threads = 0;      // decoder threads; 0: engine::default_decoder_threads()
  uint64_t cache_size = 0;   // decoded-block cache in bytes; 0: engine::default_cache_size()
  std::string index_dir;     // empty: index::default_index_dir()
  std::string named_index;   // -o index=: the index of the one file shown (a path or a URL), or empty
};

}  // namespace mibz2::fs
