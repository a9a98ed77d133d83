#include "io/source.h"

#include <sys/stat.h>

#include <cerrno>

namespace mibz2::io {

base::Result<SourceStamp> stamp_of(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int e = errno;
    return base::Status::os_error(e, "cannot stat: " + errno_words(e));
  }
  return SourceStamp::of(st);
}

base::Result<SourceStamp> FileSource::stamp_now() const { return stamp_of(fd_.get()); }

}  // namespace mibz2::io
