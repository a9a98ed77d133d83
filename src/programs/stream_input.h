// Inputs that can be read only once, in order: standard input ("-"), and any FILE named on the
// command line that is not a regular file but can be read, as bzip2 -dc and bzip2 -t read them:
// a fifo, a pipe named as /dev/stdin or /dev/fd/N (a shell's <(command)), a character or block
// device. Such an input cannot be seeked, so it has no index: it is decoded in one parallel pass
// as it comes (Catalog::stream_once over io::PipeBytes, memory bounded whatever its length).
// Only regular files are indexed (mibz2 index, info; a range of mibz2 cat); a directory stays an
// error.
#pragma once

#include <functional>
#include <string>

#include "base/status.h"
#include "index/block_stream.h"
#include "index/index_builder.h"
#include "io/unique_fd.h"
#include "programs/index_access.h"

namespace mibz2::programs {

// What a stream is, for messages ("a fifo", "a character device", ...), when `path` names one:
// something that exists (symlinks followed) and is neither a regular file nor a directory. Empty
// otherwise: a regular file, a directory, a path that cannot be looked up (the commands then
// say why as for any file), or a URL (a remote object, read by range like a file).
std::string stream_kind(const std::string& path);

// Opens a stream read-only. Like bzip2, it waits on a fifo until a writer comes. Returns the
// descriptor, or why not in strerror's words (EISDIR if it became a directory meanwhile).
base::Result<io::UniqueFd> open_stream(const std::string& path);

// The message of index and info for a stream: it is not indexed, and what reads it instead.
std::string not_indexed_message(const std::string& kind);

// One pass over the stream on `fd` (not closed here), each block handed to `sink` in order (false
// stops the pass) and its input forgotten behind it.
struct StreamPass {
  index::BuildResult result;
  int read_error = 0;  // errno of a read of the input that failed (the input then ended there)
};
StreamPass pass_stream(IndexAccess& access, int fd,
                       const std::function<bool(const index::BlockStream::Block&)>& sink);

}  // namespace mibz2::programs
