// mibz2 cat: the decompressed content of each FILE, in order, on standard output.
#include <getopt.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <cstring>
#include <string>

#include "bz2/stream_parser.h"
#include "io/fd_io.h"
#include "io/mapped_file.h"
#include "index/index_loader.h"
#include "tools/cli_common.h"
#include "tools/commands.h"

namespace mibz2::tools {
namespace {

void cat_usage(FILE* out) {
  std::fprintf(out,
               "usage: mibz2 cat [-j N] [--offset BYTES] [--length BYTES] [--index-dir DIR] FILE.bz2...\n"
               "Writes the decompressed content of each FILE to standard output, like bzip2 -dc.\n"
               "With --offset or --length, writes only that range of the decompressed content, using\n"
               "the block index (built first if there is none) to decode only the blocks it covers.\n"
               "  -j, --threads N    decoder threads for building an index (default: all cores)\n"
               "      --offset B     first decompressed byte to write (K, M, G suffixes allowed)\n"
               "      --length B     how many bytes to write at most (default: to the end)\n"
               "      --index-dir D  where index files live (default: $XDG_CACHE_HOME/mibz2fs)\n"
               "  -h, --help         this help\n");
}

int cat_range(const char* path, index::IndexStore& store, unsigned threads, uint64_t offset, uint64_t length,
              bz2::BlockDecoder& decoder) {
  const index::Obtained got = get_index(path, store, threads, false, false);
  if (!got.ok) return kExitDataError;
  const index::BlockIndex& idx = *got.index;
  if (offset >= idx.decompressed_size || length == 0) return kExitOk;
  const uint64_t end = offset + std::min(length, idx.decompressed_size - offset);
  io::MappedFile file;
  std::string err;
  if (!file.open(path, &err)) {
    std::fprintf(stderr, "mibz2: %s: %s\n", path, err.c_str());
    return kExitUsage;
  }
  bz2::ByteBuffer block;
  for (size_t i = idx.block_at(offset); offset < end; ++i) {
    const index::BlockRecord& r = idx.blocks[i];
    if (r.damaged()) {
      std::fprintf(stderr, "mibz2: %s: %s is damaged (%s): its bytes cannot be read\n", path,
                   index::describe_block(idx, i).c_str(), r.undecodable() ? "undecodable" : "CRC mismatch");
      return kExitDataError;
    }
    block.clear();
    bz2::BlockResult res;
    const bz2::Error e = decoder.decode(file.bytes(), r.start_bit(), r.level(), block, res);
    if (e || block.size() != idx.block_size(i)) {
      std::fprintf(stderr, "mibz2: %s: %s: %s\n", path, index::describe_block(idx, i).c_str(),
                   e ? bz2::to_string(e).c_str() : "decoded size differs from the index (file changed?)");
      return kExitDataError;
    }
    const uint64_t from = offset - r.out_offset;
    const uint64_t n = std::min<uint64_t>(block.size() - from, end - offset);
    if (const int werr = io::write_all(STDOUT_FILENO, block.data() + from, n)) {
      std::fprintf(stderr, "mibz2: writing output: %s\n", std::strerror(werr));
      return kExitUsage;
    }
    offset += n;
  }
  return kExitOk;
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
      {"threads", required_argument, nullptr, 'j'}, {"offset", required_argument, nullptr, 'O'},
      {"length", required_argument, nullptr, 'L'},  {"index-dir", required_argument, nullptr, 'I'},
      {"help", no_argument, nullptr, 'h'},          {nullptr, 0, nullptr, 0},
  };
  unsigned threads = 0;
  std::optional<uint64_t> offset, length;
  std::string index_dir;
  int c;
  while ((c = getopt_long(argc, argv, "j:h", kOptions, nullptr)) != -1) {
    switch (c) {
      case 'j':
        if (auto n = parse_threads(optarg)) threads = *n;
        else return usage_error("cat", "-j needs a thread count from 1 to 1024");
        break;
      case 'O':
        offset = parse_size(optarg);
        if (!offset) return usage_error("cat", "--offset needs a byte count such as 4096, 64K or 1.5G");
        break;
      case 'L':
        length = parse_size(optarg);
        if (!length) return usage_error("cat", "--length needs a byte count such as 4096, 64K or 1.5G");
        break;
      case 'I': index_dir = optarg; break;
      case 'h': cat_usage(stdout); return kExitOk;
      default: cat_usage(stderr); return kExitUsage;
    }
  }
  if (optind >= argc) {
    cat_usage(stderr);
    return kExitUsage;
  }
  bz2::BlockDecoder decoder;
  index::IndexStore store(index_dir);
  const bool ranged = offset || length;
  int status = kExitOk;
  for (int i = optind; i < argc; ++i) {
    const int s = ranged ? cat_range(argv[i], store, threads, offset.value_or(0), length.value_or(UINT64_MAX), decoder)
                         : cat_one(argv[i], decoder);
    if (s != kExitOk) status = s;
    if (s == kExitDataError || s == kExitUsage) break;  // like bzip2 -dc: stop at the first bad file
  }
  return status;
}

}  // namespace mibz2::tools
