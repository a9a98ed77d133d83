// mibz2 verify: decode everything, check every CRC, list the damage; exit 2 if there is any. A
// stream ("-", a fifo, a pipe) is verified in one pass, as bzip2 -t verifies it.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "base/words.h"
#include "programs/cli_common.h"
#include "programs/commands.h"
#include "programs/index_access.h"
#include "programs/stream_input.h"

namespace mibz2::programs {
namespace {

// The one line of a file verified: "NAME: OK: 3 blocks, 1 stream, 2.1 MiB" (DAMAGED when not).
bool report(const std::string& name, const index::BlockIndex& idx) {
  const bool intact = idx.damaged_blocks == 0 && idx.truncated_at_bit == 0 &&
                      !(idx.flags & index::BlockIndex::kStreamCrcMismatch);
  std::printf("%s: %s: %s, %s, %s\n", name.c_str(), intact ? "OK" : "DAMAGED",
              base::plural(idx.blocks.size(), "block").c_str(), base::plural(idx.stream_count, "stream").c_str(),
              base::human_bytes(idx.decompressed_size).c_str());
  return intact;
}

// A stream (standard input, a fifo, a pipe, a device: stream_input.h), verified as bzip2 -t
// verifies one: every block decoded and checked in one pass, nothing stored (it has no index).
// `fd` -1: open `path` first.
int verify_stream(IndexAccess& access, const std::string& path, int fd) {
  const std::string name = fd >= 0 ? std::string("(stdin)") : path;
  io::UniqueFd own;  // the stream opened here, closed as the pass is done
  if (fd < 0) {
    base::Result<io::UniqueFd> opened = open_stream(path);
    if (!opened.ok()) {
      std::fprintf(stderr, "mibz2 verify: %s: %s\n", name.c_str(), opened.status().message().c_str());
      return kExitEnvironment;
    }
    own = std::move(opened).value();
    fd = own.get();
  }
  const StreamPass pass = pass_stream(access, fd, [](const index::BlockStream::Block&) { return true; });
  own.reset();
  const index::BuildResult& r = pass.result;
  if (pass.read_error) {
    std::fprintf(stderr, "mibz2 verify: %s: reading: %s\n", name.c_str(), std::strerror(pass.read_error));
    return kExitEnvironment;
  }
  if (!r.ok()) {
    std::fprintf(stderr, "mibz2 verify: %s: %s\n", name.c_str(), r.error.message().c_str());
    return kExitDataError;
  }
  for (const std::string& n : r.notes) std::fprintf(stderr, "mibz2 verify: %s: %s\n", name.c_str(), n.c_str());
  std::fflush(stderr);
  return report(name, r.index) ? kExitOk : kExitDataError;
}

}  // namespace

int cmd_verify(const FileOptions& o) {
  IndexAccess access("mibz2 verify", {.threads = o.threads, .index_dir = o.index_dir, .named_index = o.index});
  int status = kExitOk;
  for (const std::string& path : o.files) {
    if (path == "-" || !stream_kind(path).empty()) {
      status = std::max(status, verify_stream(access, path, path == "-" ? STDIN_FILENO : -1));
      continue;
    }
    // A fresh build is a full decode with every CRC checked; its notes list the damage.
    const catalog::IndexStatus got = access.obtain(access.file(path), path, /*force=*/true, /*quiet_notes=*/false);
    if (!got.ready()) {
      status = std::max(status, exit_status_of(got.error));
      continue;
    }
    if (!report(path, *got.index)) status = kExitDataError;
  }
  return status;
}

}  // namespace mibz2::programs
