// Whole-buffer write and read on file descriptors: loop over short transfers and EINTR.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace mibz2::io {

// Writes all of [data, data+size). Returns 0 or an errno value (EPIPE when the reader went away).
int write_all(int fd, const void* data, size_t size);

// Opens `path` (symlinks followed) read-only as a source is opened: a regular file only, never
// blocking on a fifo, never a controlling terminal. Returns the descriptor and fills *st, or -errno
// (EISDIR for a directory, EINVAL for anything else that is not a regular file).
int open_regular(const char* path, struct stat* st);
// The same for `name` in the directory open at `dir_fd` (an O_PATH descriptor will do), never
// following `name` if it is a symlink; *dir_st is fstat of `dir_fd`: the directory the file was
// really found in, for rules about who can write there (index/index_trust.h).
int open_regular_in(int dir_fd, const char* name, struct stat* st, struct stat* dir_st);

// Reads up to size bytes at offset, looping until size bytes or end of file. Returns the byte
// count, or -errno.
ssize_t pread_full(int fd, void* data, size_t size, uint64_t offset);

}  // namespace mibz2::io
