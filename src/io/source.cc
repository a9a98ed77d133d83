#include "io/source.h"

#include <sys/stat.h>

#include <cerrno>

namespace mibz2::io {

base::Result<SourceStamp> FileSource::stamp_now() const {
  struct stat st;
  if (fstat(fd_.get(), &st) != 0) {
    const int e = errno;
    return base::Status::os_error(e, "cannot stat: " + errno_words(e));
  }
  return SourceStamp::of(st);
}

}  // namespace mibz2::io
