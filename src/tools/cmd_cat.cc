// mibz2 cat: the decompressed content of each FILE, in order, on standard output.
#include <getopt.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "bz2/stream_parser.h"
#include "io/fd_io.h"
#include "io/mapped_file.h"
#include "tools/commands.h"

namespace mibz2::tools {
namespace {

void cat_usage(FILE* out) {
  std::fprintf(out,
               "usage: mibz2 cat [-j N] FILE.bz2...\n"
               "Writes the decompressed content of each FILE to standard output, like bzip2 -dc.\n"
               "  -j, --threads N  decoder threads (accepted; decoding is single-threaded for now)\n"
               "  -h, --help       this help\n");
}

int cat_one(const char* path, bz2::BlockDecoder& decoder) {
  io::MappedFile file;
  std::string err;
  if (!file.open(path, &err)) {
    std::fprintf(stderr, "mibz2: %s: %s\n", path, err.c_str());
    return kExitUsage;
  }
  file.advise_sequential();
  int write_errno = 0;
  bz2::SequentialSink sink;
  sink.write = [&](const uint8_t* data, size_t size) {
    write_errno = io::write_all(STDOUT_FILENO, data, size);
    return write_errno == 0;
  };
  sink.warn = [&](const std::string& message) { std::fprintf(stderr, "mibz2: %s: %s\n", path, message.c_str()); };
  const bz2::Error e = bz2::decode_sequential(file.bytes(), decoder, sink);
  if (write_errno) {
    std::fprintf(stderr, "mibz2: writing output: %s\n", std::strerror(write_errno));
    return kExitUsage;
  }
  if (e) {
    std::fprintf(stderr, "mibz2: %s: %s\n", path, bz2::to_string(e).c_str());
    return kExitDataError;
  }
  return kExitOk;
}

}  // namespace

int cmd_cat(int argc, char** argv) {
  static const option kOptions[] = {
      {"threads", required_argument, nullptr, 'j'},
      {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0},
  };
  int c;
  while ((c = getopt_long(argc, argv, "j:h", kOptions, nullptr)) != -1) {
    switch (c) {
      case 'j': {
        char* end = nullptr;
        const long n = std::strtol(optarg, &end, 10);
        if (!*optarg || *end || n < 1 || n > 1024) {
          std::fprintf(stderr, "mibz2 cat: -j needs a thread count from 1 to 1024, not '%s'\n", optarg);
          return kExitUsage;
        }
        break;
      }
      case 'h': cat_usage(stdout); return kExitOk;
      default: cat_usage(stderr); return kExitUsage;
    }
  }
  if (optind >= argc) {
    cat_usage(stderr);
    return kExitUsage;
  }
  bz2::BlockDecoder decoder;
  int status = kExitOk;
  for (int i = optind; i < argc; ++i) {
    const int s = cat_one(argv[i], decoder);
    if (s != kExitOk) status = s;
    if (s == kExitDataError || s == kExitUsage) break;  // like bzip2 -dc: stop at the first bad file
  }
  return status;
}

}  // namespace mibz2::tools
