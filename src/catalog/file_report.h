// What the index of one file says, as every front end reports it: `mibz2 info` (text and --json)
// and the Python module's mibz2.info() give these fields, under these names, from this one place.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog_report.h"

namespace mibz2::catalog {

struct DamagedBlockReport {
  uint64_t block = 0;
  uint64_t start_bit = 0, end_bit = 0;  // where it is in the compressed file
  uint64_t offset = 0, size = 0;        // the decompressed bytes it stands for
  // "crc_mismatch", "undecodable", "truncated", "stream_crc_mismatch", "empty_stream_crc_mismatch"
  std::string kind;
  std::string words;  // what is wrong, for people: "CRC mismatch: reads of it fail"
  std::string where;  // describe_block's words: "block 3 (bits 80..9100, bytes 1800000..2700000)"
};

struct FileReport {
  std::string file;  // as the user named it
  uint64_t compressed_size = 0;
  uint64_t decompressed_size = 0;
  std::optional<uint64_t> lines;  // as `sed -n '$='` counts them; nullopt: unknown, lines_unknown says why
  std::string lines_unknown;
  uint64_t streams = 0;
  uint64_t blocks = 0;
  std::vector<DamagedBlockReport> damaged_blocks;
  bool offsets_shifted = false;      // an undecodable block: offsets after it are not exact
  bool stream_crc_mismatch = false;
  uint64_t truncated_at_bit = 0;     // nonzero: the file ends inside a stream there
  uint64_t trailing_bytes = 0;       // ignored bytes after the last stream
  std::string index_path;            // where the index is (empty: none)
  std::string index_state;           // how it came to be: "current", "built now", ...
};

// The report of `file` (named so in it) whose index is ready in `got`.
FileReport report_file(const std::string& file, const IndexStatus& got);
// The words of FileReport::index_state.
const char* index_state(const IndexOrigin& origin);

}  // namespace mibz2::catalog
