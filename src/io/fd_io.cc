#include "io/fd_io.h"

#include "io/descriptor_limit.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace mibz2::io {

int write_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return 0;
}

namespace {

// A descriptor just opened, if it is a regular file (*st filled); else closed, and -errno.
int regular_only(int fd, struct stat* st) {
  if (fd < 0) return -note_open_errno(errno);
  int err = 0;
  if (fstat(fd, st) != 0) err = errno;
  else if (!S_ISREG(st->st_mode)) err = S_ISDIR(st->st_mode) ? EISDIR : EINVAL;
  if (err) {
    ::close(fd);
    return -err;
  }
  return fd;
}

}  // namespace

int open_regular(const char* path, struct stat* st) {
  return regular_only(::open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), st);
}

int open_regular_in(int dir_fd, const char* name, struct stat* st, struct stat* dir_st) {
  if (fstat(dir_fd, dir_st) != 0) return -errno;
  return regular_only(::openat(dir_fd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC), st);
}

ssize_t pread_full(int fd, void* data, size_t size, uint64_t offset) {
  char* p = static_cast<char*>(data);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, p + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(done);
}

}  // namespace mibz2::io
