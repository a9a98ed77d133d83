// mibz2 index: build (or refresh) the block index of each FILE and store it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "base/words.h"
#include "index/index_store.h"
#include "programs/cli_common.h"
#include "programs/commands.h"
#include "programs/index_access.h"
#include "programs/stream_input.h"

namespace mibz2::programs {

int cmd_index(const IndexOptions& o) {
  // Storing the index is this command's whole job: one that cannot be stored is an error for its
  // file (said here, for each), not the once-only warning of the other commands.
  IndexAccess access("mibz2 index", {.threads = o.threads, .index_dir = o.index_dir}, /*warn_unsaved=*/false);
  int status = kExitOk;
  for (const std::string& path : o.files) {
    if (const std::string kind = stream_kind(path); !kind.empty()) {
      std::fprintf(stderr, "mibz2 index: %s: %s\n", path.c_str(), not_indexed_message(kind).c_str());
      status = std::max(status, kExitEnvironment);
      continue;
    }
    const auto t0 = std::chrono::steady_clock::now();
    const catalog::IndexStatus got = access.obtain(access.file(path), path, o.force, false);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!got.ready()) {
      status = std::max(status, exit_status_of(got.error));
      continue;
    }
    const index::BlockIndex& idx = *got.index;
    const catalog::IndexOrigin& origin = got.origin;
    std::printf("%s: %s in %s, %s -> %s", path.c_str(), base::plural(idx.blocks.size(), "block").c_str(),
                base::plural(idx.stream_count, "stream").c_str(), base::human_bytes(idx.source.size).c_str(),
                base::human_bytes(idx.decompressed_size).c_str());
    if (origin.built)
      std::printf(", indexed in %.2f s (%.0f MB/s compressed)", secs, secs > 0 ? static_cast<double>(idx.source.size) / secs / 1e6 : 0.0);
    else if (origin.validated)
      std::printf(", index of the same content validated (%zu blocks in %.0f ms)", origin.blocks_validated,
                  origin.validation_seconds * 1000);
    else
      std::printf(", index current");
    if (idx.damaged_blocks) std::printf(", %s", base::plural(idx.damaged_blocks, "damaged block").c_str());
    if (idx.truncated_at_bit) std::printf(", truncated");
    const bool stored = origin.saved || !origin.built;
    if (stored) std::printf(", index %s", origin.index_path.c_str());
    std::printf("\n");
    if (!stored) {
      std::fflush(stdout);
      std::fprintf(stderr, "mibz2 index: %s: index not stored: %s\n", path.c_str(), origin.save_error.c_str());
      status = std::max(status, kExitEnvironment);
    }
    if (!o.output.empty()) {
      // The index as the catalog holds it: this file's identity, so that mounts of this very file
      // take it at once and copies of it check a sample first.
      if (const base::Status written = index::write_index_file(o.output, idx); !written.ok()) {
        std::fflush(stdout);
        std::fprintf(stderr, "mibz2 index: %s: %s\n", path.c_str(), written.message().c_str());
        status = std::max(status, exit_status_of(written));
      } else {
        std::printf("%s: index written to %s\n", path.c_str(), o.output.c_str());
      }
    }
  }
  return status;
}

}  // namespace mibz2::programs
