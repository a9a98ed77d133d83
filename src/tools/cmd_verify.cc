// mibz2 verify: decode everything, check every CRC, list the damage; exit 2 if there is any.
#include <getopt.h>

#include <cstdio>
#include <string>

#include "tools/cli_common.h"
#include "tools/commands.h"
#include "tools/index_access.h"

namespace mibz2::tools {
namespace {

void verify_usage(FILE* out) {
  std::fprintf(out,
               "usage: mibz2 verify [-j N] [--index-dir DIR] FILE.bz2...\n"
               "Decodes every block of each FILE, checks every block and stream CRC, lists damaged\n"
               "blocks, and refreshes the stored index. Exit status 0 if all is intact, 2 if not.\n"
               "  -j, --threads N    decoder threads (default: all cores)\n"
               "      --index-dir D  where index files live (default: $XDG_CACHE_HOME/mibz2fs)\n"
               "  -h, --help         this help\n");
}

}  // namespace

int cmd_verify(int argc, char** argv) {
  static const option kOptions[] = {
      {"threads", required_argument, nullptr, 'j'},
      {"index-dir", required_argument, nullptr, 'I'},
      {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0},
  };
  unsigned threads = 0;
  std::string index_dir;
  int c;
  while ((c = getopt_long(argc, argv, "j:h", kOptions, nullptr)) != -1) {
    switch (c) {
      case 'j':
        if (auto n = parse_threads(optarg)) threads = *n;
        else return usage_error("verify", "-j needs a thread count from 1 to 1024");
        break;
      case 'I': index_dir = optarg; break;
      case 'h': verify_usage(stdout); return kExitOk;
      default: verify_usage(stderr); return kExitUsage;
    }
  }
  if (optind >= argc) {
    verify_usage(stderr);
    return kExitUsage;
  }
  IndexAccess access("mibz2", threads, index_dir);
  int status = kExitOk;
  for (int i = optind; i < argc; ++i) {
    // A fresh build is a full decode with every CRC checked; its notes list the damage.
    const engine::IndexStatus got = access.obtain(access.file(argv[i]), argv[i], /*rebuild=*/true, /*quiet_notes=*/false);
    if (!got.ready()) {
      status = kExitDataError;
      continue;
    }
    const index::BlockIndex& idx = *got.index;
    const bool intact = idx.damaged_blocks == 0 && idx.truncated_at_bit == 0 &&
                        !(idx.flags & index::BlockIndex::kStreamCrcMismatch);
    std::printf("%s: %s: %zu blocks, %llu stream%s, %s\n", argv[i], intact ? "OK" : "DAMAGED", idx.blocks.size(),
                static_cast<unsigned long long>(idx.stream_count), idx.stream_count == 1 ? "" : "s",
                human_bytes(idx.decompressed_size).c_str());
    if (!intact) status = kExitDataError;
  }
  return status;
}

}  // namespace mibz2::tools
