#include "io/source_bytes.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>


namespace mibz2::io {

std::string errno_words(int error) {
  const char* name = strerrorname_np(error);
  return std::string(std::strerror(error)) + " (" + (name ? std::string(name) : "errno " + std::to_string(error)) + ")";
}

std::string SourceRead::describe() const {
  return "read error at byte " + std::to_string(at) + " (a read of " + std::to_string(length) +
         (length == 1 ? " byte): " : " bytes): ") +
         (changed ? "the source changed since it was opened (ESTALE)" : errno_words(error));
}

SourceRead FdBytes::read_at(uint64_t offset, size_t len, uint8_t* out) const {
  size_t done = 0;
  while (done < len) {
    const ssize_t n = ::pread(fd_, out + done, len - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return SourceRead::failure(errno, offset + done, len - done);
    }
    if (n == 0) break;  // the end of the file: it is shorter than size() now
    done += static_cast<size_t>(n);
  }
  return {done};
}

}  // namespace mibz2::io
