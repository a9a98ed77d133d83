// The subcommands of the mibz2 program. mibz2_main.cc parses the command line (CLI11) into these
// options; each command returns the exit status, bzip2's:
//   0  success;
//   1  an environmental problem: a file that cannot be opened or read, output or an index that
//      cannot be written, bad usage;
//   2  corrupt or truncated input, or input that is not bzip2.
// Several files: each is tried, and the status is the worst of them (cat stops at damage).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "catalog/catalog.h"
#include "programs/line_range.h"

namespace mibz2::programs {

inline constexpr int kExitOk = 0;
inline constexpr int kExitEnvironment = 1;
inline constexpr int kExitDataError = 2;

// The exit status for a failure by its kind: 1 for an environmental problem (base::is_environment:
// a file that cannot be opened, read or written, memory ran out), 2 when the content is not usable
// bzip2 (and for a stopped build, which no command sees).
int exit_status_of(const base::Status& failure);

// Options every command takes.
struct FileOptions {
  unsigned threads = 0;           // -j: 0 = engine::default_decoder_threads()
  std::string index_dir;          // --index-dir, absolute; empty: index::default_index_dir()
  std::string index;              // --index (cat, info, verify): the one FILE's index, a path or URL
  std::vector<std::string> files;
};

struct CatOptions : FileOptions {
  std::optional<uint64_t> offset;  // --offset
  std::optional<uint64_t> length;  // --length
  std::optional<LineRange> lines;  // --lines (never with --offset or --length)
};
struct IndexOptions : FileOptions {
  bool force = false;  // --force: rebuild even when the stored index is current
  std::string output;  // --output: also write the index to this file (a sidecar); one FILE only
};
struct InfoOptions : FileOptions {
  bool json = false;  // --json: one JSON object per file
};

// mibz2 fetch URL FILE: the files are the URL and FILE.
struct FetchOptions : FileOptions {
  std::string url;
  std::string file;
  bool force = false;      // --force: replace an existing FILE
  std::string output;      // --output: also write the index to this file (a sidecar)
  bool quiet = false;      // --quiet: no progress line, no summary
  unsigned connections = 8;  // --connections: range requests in flight at once
};

int cmd_cat(const CatOptions& options);
int cmd_index(const IndexOptions& options);
int cmd_info(const InfoOptions& options);
int cmd_verify(const FileOptions& options);
int cmd_fetch(const FetchOptions& options);

}  // namespace mibz2::programs
