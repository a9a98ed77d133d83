#include "index/source_window.h"

#include <algorithm>
#include <cstring>

namespace mibz2::index {

SourceWindow::SourceWindow(const io::SourceBytes& source, size_t read_size)
    : source_(source), read_size_(std::max<size_t>(read_size, 1)) {}

std::span<const uint8_t> SourceWindow::from(uint64_t byte, size_t want) {
  const uint64_t buf_end = buf_start_ + buf_len_;
  if (byte < buf_start_ || byte > buf_end) {  // a jump forward past the buffer: start afresh there
    buf_start_ = byte;
    buf_len_ = 0;
  } else if (byte + want > buf_end && !ended_) {  // keep what is left from `byte`, read after it
    const size_t keep = static_cast<size_t>(buf_end - byte);
    if (keep) std::memmove(buf_.data(), buf_.data() + (byte - buf_start_), keep);  // an empty buffer has no data()
    buf_start_ = byte;
    buf_len_ = keep;
  }
  if (byte + want > buf_start_ + buf_len_ && !ended_) {
    // No larger than what is left of the file: a small file gets a small buffer (an 8 MiB vector,
    // zeroed first, took 2000 page faults and a memset of `mibz2 cat -j 1` whatever the file).
    const uint64_t file_left = source_.size() - std::min<uint64_t>(buf_start_, source_.size());
    const uint64_t wanted = std::min<uint64_t>(std::max(read_size_, want), file_left);
    const size_t size = static_cast<size_t>(std::max<uint64_t>(wanted, buf_len_));  // never below what it keeps
    buf_.reserve_exact(size);
    buf_.resize_uninitialized(size);
    while (buf_len_ < want && !ended_) {
      const uint64_t at = buf_start_ + buf_len_;
      const size_t ask = static_cast<size_t>(std::min<uint64_t>(buf_.size() - buf_len_, source_.size() - std::min(at, source_.size())));
      const io::SourceRead got = ask ? source_.read(at, ask, buf_.data() + buf_len_) : io::SourceRead{};
      if (got.failed()) read_failure_ = got;
      buf_len_ += got.count;
      if (got.failed() || got.count == 0 || got.count < ask) {
        ended_ = true;
        shrank_ = !got.failed() && buf_start_ + buf_len_ < source_.size();
      }
    }
  }
  const size_t offset = static_cast<size_t>(byte - buf_start_);
  return {buf_.data() + offset, buf_len_ - offset};
}

}  // namespace mibz2::index
