// mibz2 info: what the index says about each FILE: streams, blocks, sizes, lines, damage, and where
// its index is.
#include <algorithm>
#include <cstdio>
#include <string>

#include "base/words.h"
#include "index/line_map.h"
#include "programs/cli_common.h"
#include "programs/commands.h"
#include "programs/index_access.h"
#include "programs/info_json.h"
#include "programs/stream_input.h"

namespace mibz2::programs {
namespace {

void print_text(const std::string& path, const catalog::IndexStatus& got) {
  const index::BlockIndex& idx = *got.index;
  std::printf("file:               %s\n", path.c_str());
  std::printf("compressed size:    %llu (%s)\n", static_cast<unsigned long long>(idx.source.size), base::human_bytes(idx.source.size).c_str());
  std::printf("decompressed size:  %llu (%s)\n", static_cast<unsigned long long>(idx.decompressed_size),
              base::human_bytes(idx.decompressed_size).c_str());
  const index::LineMap lines(idx);
  if (const auto count = lines.line_count()) std::printf("lines:              %llu\n", static_cast<unsigned long long>(*count));
  else std::printf("lines:              unknown (%s)\n", lines.unknown_why().c_str());
  std::printf("streams:            %llu\n", static_cast<unsigned long long>(idx.stream_count));
  std::printf("blocks:             %zu\n", idx.blocks.size());
  std::printf("damaged blocks:     %u\n", idx.damaged_blocks);
  for (size_t i = 0; i < idx.blocks.size(); ++i) {
    const index::BlockRecord& r = idx.blocks[i];
    if (!r.damaged()) continue;
    std::printf("  %s: %s; reads of it fail\n", index::describe_block(idx, i).c_str(),
                index::describe_damage(r).c_str());
  }
  if (idx.flags & index::BlockIndex::kStreamCrcMismatch) std::printf("stream CRC:         mismatch\n");
  if (idx.truncated_at_bit)
    std::printf("truncated:          yes, the file ends inside a stream at bit %llu\n",
                static_cast<unsigned long long>(idx.truncated_at_bit));
  if (idx.trailing_bytes) std::printf("trailing garbage:   %llu bytes (ignored)\n", static_cast<unsigned long long>(idx.trailing_bytes));
  std::printf("index:              %s (%s)\n", got.origin.index_path.empty() ? "(none)" : got.origin.index_path.c_str(),
              index_state(got.origin));
}

void print_json(const std::string& path, const catalog::IndexStatus& got) {
  std::printf("%s\n", info_json(path, got).c_str());
}

}  // namespace

int cmd_info(const InfoOptions& o) {
  IndexAccess access("mibz2 info", o.threads, o.index_dir);
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
    if (o.json) print_json(path, got);
    else print_text(path, got);
  }
  return status;
}

}  // namespace mibz2::programs
