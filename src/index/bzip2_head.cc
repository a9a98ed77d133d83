#include "index/bzip2_head.h"

#include <cstdint>

#include "bz2/stream_parser.h"
#include "io/source_bytes.h"

namespace mibz2::index {

int starts_like_bzip2(int fd) {
  uint8_t head[4];
  const io::SourceRead got = io::FdBytes(fd, sizeof head).read(0, sizeof head, head);
  if (got.failed()) return -got.error;
  int level;
  return got.count == sizeof head &&
         bz2::classify_stream_start({head, sizeof head}, 0, &level) == bz2::StreamStart::kStream;
}


}  // namespace mibz2::index
