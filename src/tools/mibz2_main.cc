// mibz2: work with bzip2 files the way mibz2fs does, without mounting anything.
#include <cstdio>
#include <cstring>
#include <string_view>

#include <spdlog/spdlog.h>

#include "tools/commands.h"
#include "version.h"

namespace {

void usage(FILE* out) {
  std::fprintf(out,
               "usage: mibz2 COMMAND [OPTIONS] FILE.bz2...\n"
               "\n"
               "commands:\n"
               "  cat     write the decompressed content (or a range of it) to standard output\n"
               "  index   build and store the block index of files\n"
               "  info    show streams, blocks, sizes, damage and the index of files\n"
               "  verify  decode everything and check every CRC; exit 2 on damage\n"
               "\n"
               "Run 'mibz2 COMMAND --help' for the options of a command.\n"
               "  -h, --help     this help\n"
               "  -V, --version  print the version\n");
}

}  // namespace

namespace mibz2::tools {
int usage_error(const char* command, const char* message) {
  std::fprintf(stderr, "mibz2 %s: %s (try 'mibz2 %s --help')\n", command, message, command);
  return kExitUsage;
}
}  // namespace mibz2::tools

int main(int argc, char** argv) {
  using namespace mibz2::tools;
  // The commands report to the user themselves (stderr, in their own words); the engine's log is
  // for the daemon.
  spdlog::set_level(spdlog::level::off);
  if (argc < 2) {
    usage(stderr);
    return kExitUsage;
  }
  const std::string_view cmd = argv[1];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    usage(stdout);
    return kExitOk;
  }
  if (cmd == "-V" || cmd == "--version") {
    std::printf("mibz2 %s\n", MIBZ2FS_VERSION);
    return kExitOk;
  }
  // Each command sees argv[0] = the command name, as getopt expects.
  if (cmd == "cat") return cmd_cat(argc - 1, argv + 1);
  if (cmd == "index") return cmd_index(argc - 1, argv + 1);
  if (cmd == "info") return cmd_info(argc - 1, argv + 1);
  if (cmd == "verify") return cmd_verify(argc - 1, argv + 1);
  std::fprintf(stderr, "mibz2: unknown command '%s' (try 'mibz2 --help')\n", argv[1]);
  return kExitUsage;
}
