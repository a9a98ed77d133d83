// The two ways a read of an open file is answered: a plain file's bytes from its source, checked
// against the node's content; a decompressed file's bytes straight from the decoded blocks.
#pragma once

#include <fuse_lowlevel.h>
#include <sys/types.h>

#include <vector>

#include "engine/reader.h"
#include "fs/open_handles.h"

namespace mibz2::fs {

// Answers a read of a plain file with its source's bytes, if it still holds the node's content:
// replies and returns 0, or returns an errno value.
int read_plain(fuse_req_t req, const FileHandle& handle, size_t size, off_t off);

// Answers a read with the engine's result: its bytes straight from the decoded blocks, or the
// error. Exactly one reply, on whichever thread ends the read.
void reply_read(fuse_req_t req, ssize_t n, const std::vector<engine::Slice>& slices) noexcept;

}  // namespace mibz2::fs
