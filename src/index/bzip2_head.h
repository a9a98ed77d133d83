// Whether a file is bzip2 by its first bytes, read through the one path every source read takes
// (io/source_bytes.h): what the mount and the Python module check before they show a name
// decompressed.
#pragma once

namespace mibz2::index {

// Whether an open file's content starts like a bzip2 stream ("BZh1".."BZh9"), read through the
// same path: 1 yes, 0 no (shorter, or other bytes), or -errno when its head cannot be read.
int starts_like_bzip2(int fd);

}  // namespace mibz2::index
