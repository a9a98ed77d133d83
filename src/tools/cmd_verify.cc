// mibz2 verify: decode everything, check every CRC, list the damage; exit 2 if there is any.
#include <algorithm>
#include <cstdio>
#include <string>

#include "tools/cli_common.h"
#include "tools/commands.h"
#include "tools/index_access.h"

namespace mibz2::tools {

int cmd_verify(const FileOptions& o) {
  IndexAccess access("mibz2 verify", o.threads, o.index_dir);
  int status = kExitOk;
  for (const std::string& path : o.files) {
    // A fresh build is a full decode with every CRC checked; its notes list the damage.
    const engine::IndexStatus got = access.obtain(access.file(path), path, /*rebuild=*/true, /*quiet_notes=*/false);
    if (!got.ready()) {
      status = std::max(status, exit_status_of(got));
      continue;
    }
    const index::BlockIndex& idx = *got.index;
    const bool intact = idx.damaged_blocks == 0 && idx.truncated_at_bit == 0 &&
                        !(idx.flags & index::BlockIndex::kStreamCrcMismatch);
    std::printf("%s: %s: %s, %s, %s\n", path.c_str(), intact ? "OK" : "DAMAGED",
                plural(idx.blocks.size(), "block").c_str(), plural(idx.stream_count, "stream").c_str(),
                human_bytes(idx.decompressed_size).c_str());
    if (!intact) status = kExitDataError;
  }
  return status;
}

}  // namespace mibz2::tools
