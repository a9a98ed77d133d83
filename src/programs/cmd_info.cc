// mibz2 info: what the index says about each FILE: streams, blocks, sizes, lines, damage, and where
// its index is.
#include <algorithm>
#include <cstdio>
#include <string>

#include "base/words.h"
#include "programs/cli_common.h"
#include "programs/commands.h"
#include "programs/index_access.h"
#include "programs/info_json.h"
#include "programs/stream_input.h"

namespace mibz2::programs {
namespace {

void print_text(const catalog::FileReport& r) {
  std::printf("file:               %s\n", r.file.c_str());
  std::printf("compressed size:    %llu (%s)\n", static_cast<unsigned long long>(r.compressed_size),
              base::human_bytes(r.compressed_size).c_str());
  std::printf("decompressed size:  %llu (%s)\n", static_cast<unsigned long long>(r.decompressed_size),
              base::human_bytes(r.decompressed_size).c_str());
  if (r.lines) std::printf("lines:              %llu\n", static_cast<unsigned long long>(*r.lines));
  else std::printf("lines:              unknown (%s)\n", r.lines_unknown.c_str());
  std::printf("streams:            %llu\n", static_cast<unsigned long long>(r.streams));
  std::printf("blocks:             %llu\n", static_cast<unsigned long long>(r.blocks));
  std::printf("damaged blocks:     %zu\n", r.damaged_blocks.size());
  for (const catalog::DamagedBlockReport& d : r.damaged_blocks)
    std::printf("  %s: %s; reads of it fail\n", d.where.c_str(), d.words.c_str());
  if (r.stream_crc_mismatch) std::printf("stream CRC:         mismatch\n");
  if (r.truncated_at_bit)
    std::printf("truncated:          yes, the file ends inside a stream at bit %llu\n",
                static_cast<unsigned long long>(r.truncated_at_bit));
  if (r.trailing_bytes)
    std::printf("trailing garbage:   %llu bytes (ignored)\n", static_cast<unsigned long long>(r.trailing_bytes));
  std::printf("index:              %s (%s)\n", r.index_path.empty() ? "(none)" : r.index_path.c_str(), r.index_state.c_str());
}

}  // namespace

int cmd_info(const InfoOptions& o) {
  IndexAccess access("mibz2 info", {.threads = o.threads, .index_dir = o.index_dir, .named_index = o.index});
  int status = kExitOk;
  for (const std::string& path : o.files) {
    if (const std::string kind = stream_kind(path); !kind.empty()) {
      std::fprintf(stderr, "mibz2 info: %s: %s\n", path.c_str(), not_indexed_message(kind).c_str());
      status = std::max(status, kExitEnvironment);
      continue;
    }
    const catalog::IndexStatus got = access.obtain(access.file(path), path, false, true);
    if (!got.ready()) {
      status = std::max(status, exit_status_of(got.error));
      continue;
    }
    const catalog::FileReport report = catalog::report_file(path, got);
    if (o.json) std::printf("%s\n", info_json(report).c_str());
    else print_text(report);
  }
  return status;
}

}  // namespace mibz2::programs
