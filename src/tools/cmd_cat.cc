// mibz2 cat: the decompressed content of each FILE, in order, on standard output.
#include <getopt.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <vector>
#include <optional>
#include <cstring>
#include <string>

#include "bz2/stream_parser.h"
#include "io/fd_io.h"
#include "io/mapped_file.h"
#include "engine/engine.h"
#include "engine/reader.h"
#include "engine/catalog.h"
#include "tools/cli_common.h"
#include "tools/commands.h"
#include "tools/index_access.h"

namespace mibz2::tools {
namespace {

void cat_usage(FILE* out) {
  std::fprintf(out,
               "usage: mibz2 cat [-j N] [--offset BYTES] [--length BYTES] [--index-dir DIR] FILE.bz2...\n"
               "Writes the decompressed content of each FILE to standard output, like bzip2 -dc.\n"
               "It decodes on N threads: a file with a current block index through the engine with\n"
               "read-ahead; one without in a single parallel pass that stores the index on the way.\n"
               "With --offset or --length it decodes only the blocks the range covers (building the\n"
               "index first if there is none). -j 1 on a whole file streams through it on one thread\n"
               "and needs no index.\n"
               "  -j, --threads N    decoder threads (default: all cores)\n"
               "      --offset B     first decompressed byte to write (K, M, G suffixes allowed)\n"
               "      --length B     how many bytes to write at most (default: to the end)\n"
               "      --index-dir D  where index files live (default: $XDG_CACHE_HOME/mibz2fs)\n"
               "  -h, --help         this help\n");
}

// One thread streaming through the whole file, like bzip2 -dc.
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

// The end of the output of a whole file or of a range that reaches the end: like bzip2 -dc, a file
// cut short or a stream whose CRC does not match is an error even when every block was written.
int check_tail(const char* path, const index::BlockIndex& idx) {
  if (idx.truncated_at_bit) {
    std::fprintf(stderr, "mibz2: %s: file ends inside a stream at bit %llu (truncated)\n",
                 path, static_cast<unsigned long long>(idx.truncated_at_bit));
    return kExitDataError;
  }
  if (idx.flags & index::BlockIndex::kStreamCrcMismatch) {
    std::fprintf(stderr, "mibz2: %s: stream CRC mismatch\n", path);
    return kExitDataError;
  }
  return kExitOk;
}

// A whole file with no current index: decoded in parallel in one pass, in order, storing the
// index found on the way (so the next cat, range or mount of it starts at once).
int cat_streaming(const char* path, IndexAccess& access, const engine::FileRef& file) {
  int write_errno = 0;
  std::string damage;
  access.catalog().stream(file, [&](const index::BlockStream::Block& b) {
    if (b.damaged()) {
      damage = "block " + std::to_string(b.number) + " is damaged (" + index::describe_damage(b.record) +
               "): its bytes cannot be read";
      return false;
    }
    write_errno = io::write_all(STDOUT_FILENO, b.bytes.data(), b.bytes.size());
    return write_errno == 0;
  });
  const engine::IndexStatus got = access.catalog().status(file);
  const bool stopped = write_errno || !damage.empty();
  if (!stopped)
    for (const std::string& n : got.origin.notes) std::fprintf(stderr, "mibz2: %s: %s\n", path, n.c_str());
  if (write_errno) {
    std::fprintf(stderr, "mibz2: writing output: %s\n", std::strerror(write_errno));
    return kExitUsage;
  }
  if (!damage.empty()) {
    std::fprintf(stderr, "mibz2: %s: %s (run 'mibz2 info %s' for all the damage)\n", path, damage.c_str(), path);
    return kExitDataError;
  }
  if (!got.ready()) {
    std::fprintf(stderr, "mibz2: %s: %s\n", path, got.error.c_str());
    return kExitDataError;
  }
  return check_tail(path, *got.index);
}

// Through the engine: the index (built if missing), the decoder pool and read-ahead.
int cat_engine(const char* path, IndexAccess& access, const engine::FileRef& file, uint64_t offset, uint64_t length) {
  if (!access.obtain(file, path, false, false).ready()) return kExitDataError;
  std::string err;
  const std::shared_ptr<engine::Reader> reader = access.catalog().open(file, &err);
  if (!reader) {
    std::fprintf(stderr, "mibz2: %s: %s\n", path, err.c_str());
    return kExitUsage;
  }
  const uint64_t size = reader->size();
  const uint64_t begin = std::min(offset, size);
  const uint64_t end = begin + std::min(length, size - begin);
  const bool reaches_end = length >= size - begin;
  constexpr size_t kChunk = 4 << 20;
  std::vector<uint8_t> buf(kChunk);
  offset = begin;
  while (offset < end) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kChunk, end - offset));
    const ssize_t n = reader->read(offset, want, buf.data());
    if (n <= 0) {
      const index::BlockIndex& idx = reader->index();
      const size_t b = idx.block_at(offset);
      const std::string why = idx.blocks[b].damaged() ? index::describe_damage(idx.blocks[b])
                                                       : std::strerror(n < 0 ? static_cast<int>(-n) : EIO);
      std::fprintf(stderr, "mibz2: %s: cannot read decompressed bytes at %llu: %s (%s)\n", path,
                   static_cast<unsigned long long>(offset), why.c_str(), index::describe_block(idx, b).c_str());
      return kExitDataError;
    }
    if (const int werr = io::write_all(STDOUT_FILENO, buf.data(), static_cast<size_t>(n))) {
      std::fprintf(stderr, "mibz2: writing output: %s\n", std::strerror(werr));
      return kExitUsage;
    }
    offset += static_cast<uint64_t>(n);
  }
  return reaches_end ? check_tail(path, reader->index()) : kExitOk;
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
  // A whole file: with -j 1, one thread streaming through it as bzip2 -dc does (no index);
  // otherwise through the engine if its index is current, else one parallel pass that also
  // stores the index. A range always goes through the engine (index built first if missing).
  const bool whole = !offset && !length;
  const bool streaming = threads == 1 && whole;
  bz2::BlockDecoder decoder;
  std::unique_ptr<IndexAccess> access;
  // One pass over the data needs the cache only to hold what is decoded ahead of the writer.
  if (!streaming)
    access = std::make_unique<IndexAccess>("mibz2", threads, index_dir,
                                           std::min<uint64_t>(engine::default_cache_bytes(), uint64_t{256} << 20));
  int status = kExitOk;
  for (int i = optind; i < argc; ++i) {
    int s;
    if (streaming) {
      s = cat_one(argv[i], decoder);
    } else {
      const engine::FileRef file = access->file(argv[i]);
      if (whole && !access->catalog().load_if_current(file)) s = cat_streaming(argv[i], *access, file);
      else s = cat_engine(argv[i], *access, file, offset.value_or(0), length.value_or(UINT64_MAX));
    }
    if (s != kExitOk) status = s;
    if (s == kExitDataError || s == kExitUsage) break;  // like bzip2 -dc: stop at the first bad file
  }
  return status;
}

}  // namespace mibz2::tools
