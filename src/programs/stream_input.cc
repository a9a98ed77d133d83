#include "programs/stream_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "io/pipe_bytes.h"
#include "io/source_url.h"

namespace mibz2::programs {

std::string stream_kind(const std::string& path) {
  if (io::is_url(path)) return {};
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return {};
  switch (st.st_mode & S_IFMT) {
    case S_IFREG:
    case S_IFDIR: return {};
    case S_IFIFO: return "a fifo";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    default: return "not a regular file";
  }
}

base::Result<io::UniqueFd> open_stream(const std::string& path) {
  // Blocking (a fifo waits for its writer, as bzip2 waits), never a controlling terminal.
  io::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOCTTY | O_CLOEXEC));
  if (!fd.valid()) {
    const int e = errno;
    return base::Status::os_error(e, std::strerror(e));
  }
  struct stat st;
  MIBZ2_RETURN_ERROR_IF(fstat(fd.get(), &st) == 0 && S_ISDIR(st.st_mode), EISDIR, std::strerror(EISDIR));
  return fd;
}

std::string not_indexed_message(const std::string& kind) {
  return kind + ", not a regular file: only regular files are indexed (mibz2 cat and mibz2 verify read it as a stream)";
}

StreamPass pass_stream(IndexAccess& access, int fd,
                       const std::function<bool(const index::BlockStream::Block&)>& sink) {
  io::PipeBytes input(fd);
  StreamPass pass;
  pass.result = access.catalog().stream_once(input, [&](const index::BlockStream::Block& b) {
    input.release_before(b.record.start_bit() / 8);
    return sink(b);
  });
  pass.read_error = input.error();
  return pass;
}

}  // namespace mibz2::programs
