// A SourceBytes read front to back through one buffer, as bz2::decode_sequential walks it (mibz2 cat
// -j 1): large preads, never a mapping, so a file truncated while it is read ends the input early
// (a truncation error, and shrank() says why) instead of killing the reader with SIGBUS.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "base/byte_buffer.h"
#include "bz2/stream_parser.h"
#include "io/source_bytes.h"

namespace mibz2::index {

class SourceWindow final : public bz2::SequentialInput {
 public:
  // `read_size`: the buffer's size, or the file's when that is smaller. Each refill keeps what the
  // decoder still needs (at most one block, 3 MiB) and reads the rest, so 8 MiB makes reads of
  // 5 MiB or more.
  explicit SourceWindow(const io::SourceBytes& source, size_t read_size = 8 << 20);

  std::span<const uint8_t> from(uint64_t byte, size_t want) override;
  uint64_t size() const override { return source_.size(); }

  // Why the input ended before size(): a read failed (its errno, and where), or the file shrank.
  int read_error() const { return read_failure_.error; }
  const io::SourceRead& read_failure() const { return read_failure_; }
  bool shrank() const { return shrank_; }
  // Bytes of buffer held (for tests).
  size_t buffer_bytes() const { return buf_.capacity(); }

 private:
  const io::SourceBytes& source_;
  const size_t read_size_;
  base::ByteBuffer buf_;  // not zeroed: only the bytes read into it are ever handed out
  uint64_t buf_start_ = 0;  // file offset of buf_[0]
  size_t buf_len_ = 0;      // bytes of buf_ holding file bytes
  bool ended_ = false;      // nothing can be read past buf_start_ + buf_len_
  io::SourceRead read_failure_;  // the read that failed, if one did
  bool shrank_ = false;
};

}  // namespace mibz2::index
