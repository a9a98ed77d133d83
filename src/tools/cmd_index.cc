// mibz2 index: build (or refresh) the block index of each FILE and store it.
#include <getopt.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "tools/cli_common.h"
#include "tools/commands.h"
#include "tools/index_access.h"

namespace mibz2::tools {
namespace {

void index_usage(FILE* out) {
  std::fprintf(out,
               "usage: mibz2 index [-j N] [--index-dir DIR] [--force] FILE.bz2...\n"
               "Builds the block index of each FILE (a full parallel decode) and stores it, so that\n"
               "mibz2fs and mibz2 cat --offset start at once. Files whose stored index is current are\n"
               "left alone unless --force is given.\n"
               "  -j, --threads N    decoder threads (default: all cores)\n"
               "      --index-dir D  where index files live (default: $XDG_CACHE_HOME/mibz2fs)\n"
               "  -f, --force        rebuild even when the stored index is current\n"
               "  -h, --help         this help\n");
}

}  // namespace

int cmd_index(int argc, char** argv) {
  static const option kOptions[] = {
      {"threads", required_argument, nullptr, 'j'}, {"index-dir", required_argument, nullptr, 'I'},
      {"force", no_argument, nullptr, 'f'},         {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0},
  };
  unsigned threads = 0;
  std::string index_dir;
  bool force = false;
  int c;
  while ((c = getopt_long(argc, argv, "j:fh", kOptions, nullptr)) != -1) {
    switch (c) {
      case 'j':
        if (auto n = parse_threads(optarg)) threads = *n;
        else return usage_error("index", "-j needs a thread count from 1 to 1024");
        break;
      case 'I': index_dir = optarg; break;
      case 'f': force = true; break;
      case 'h': index_usage(stdout); return kExitOk;
      default: index_usage(stderr); return kExitUsage;
    }
  }
  if (optind >= argc) {
    index_usage(stderr);
    return kExitUsage;
  }
  IndexAccess access("mibz2", threads, index_dir);
  int status = kExitOk;
  for (int i = optind; i < argc; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const engine::IndexStatus got = access.obtain(access.file(argv[i]), argv[i], force, false);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!got.ready()) {
      status = kExitDataError;
      continue;
    }
    const index::BlockIndex& idx = *got.index;
    const engine::IndexOrigin& origin = got.origin;
    std::printf("%s: %zu blocks in %llu stream%s, %s -> %s", argv[i], idx.blocks.size(),
                static_cast<unsigned long long>(idx.stream_count), idx.stream_count == 1 ? "" : "s",
                human_bytes(idx.source.size).c_str(), human_bytes(idx.decompressed_size).c_str());
    if (origin.built)
      std::printf(", indexed in %.2f s (%.0f MB/s compressed)", secs, secs > 0 ? static_cast<double>(idx.source.size) / secs / 1e6 : 0.0);
    else
      std::printf(", index current");
    if (idx.damaged_blocks) std::printf(", %u damaged block%s", idx.damaged_blocks, idx.damaged_blocks == 1 ? "" : "s");
    if (idx.truncated_at_bit) std::printf(", truncated");
    const bool stored = origin.saved || !origin.built;
    std::printf("%s%s\n", stored ? ", index " : "", stored ? origin.index_path.c_str() : "");
  }
  return status;
}

}  // namespace mibz2::tools
