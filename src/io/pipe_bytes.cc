#include "io/pipe_bytes.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

namespace mibz2::io {
namespace {

// One read of the descriptor fills a chunk of this size (or ends at the end of the input): large
// enough that a block or a scan piece spans few chunks, small enough to free memory finely.
constexpr size_t kChunkBytes = 1 << 20;

}  // namespace

void PipeBytes::release_before(uint64_t offset) {
  std::lock_guard lk(mu_);
  while (!chunks_.empty() && base_ + chunks_.front().size() <= offset) {
    base_ += chunks_.front().size();
    chunks_.pop_front();
  }
}

int PipeBytes::error() const {
  std::lock_guard lk(mu_);
  return error_;
}

uint64_t PipeBytes::bytes_read() const {
  std::lock_guard lk(mu_);
  return end_;
}

uint64_t PipeBytes::bytes_kept() const {
  std::lock_guard lk(mu_);
  return end_ - base_;
}

void PipeBytes::read_more(std::unique_lock<std::mutex>& lk, uint64_t need) const {
  reading_ = true;
  const uint64_t from = end_;
  lk.unlock();
  // Out of memory (for the chunk, or to keep it) the input ends here, failed, as for a read error:
  // bytes taken from the pipe and not kept are gone, so nothing after them may be served; and
  // reading_ is cleared below whatever happened, or every other reader would wait for good.
  size_t got = 0;
  int err = 0;
  bool ended = false;
  std::vector<uint8_t> chunk;
  try {
    chunk.resize(kChunkBytes);
  } catch (const std::bad_alloc&) {
    err = ENOMEM;
    ended = true;
  }
  // Fills one chunk, or stops early once `need` is reached (a reader waits for it) or at the end.
  while (!ended && got < chunk.size() && (got == 0 || from + got < need)) {
    const ssize_t n = ::read(fd_, chunk.data() + got, chunk.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : 0;
      ended = true;
      break;
    }
    got += static_cast<size_t>(n);
  }
  chunk.resize(got);
  if (got < kChunkBytes / 2) chunk.shrink_to_fit();  // non-binding: never throws
  lk.lock();
  if (got) {
    try {
      chunks_.push_back(std::move(chunk));
    } catch (const std::bad_alloc&) {
      got = 0;
      err = ENOMEM;
      ended = true;
    }
  }
  end_ += got;
  if (ended) {
    at_end_ = true;
    error_ = err;
    if (!err) ends_at(end_);  // a failed read is not the end: how long the input is stays unknown
  }
  reading_ = false;
  more_.notify_all();
}

SourceRead PipeBytes::read_at(uint64_t offset, size_t len, uint8_t* out) const {
  std::unique_lock lk(mu_);
  const uint64_t need = offset + len;
  while (end_ < need && !at_end_) {
    if (reading_) more_.wait(lk);
    else read_more(lk, need);
  }
  if (offset < base_) return SourceRead::failure(EINVAL, offset, len);  // released
  if (end_ < need && error_) return SourceRead::failure(error_, end_, static_cast<size_t>(need - end_));
  if (offset >= end_) return {};
  size_t n = static_cast<size_t>(std::min<uint64_t>(len, end_ - offset));
  const size_t total = n;
  uint64_t at = base_;
  for (const std::vector<uint8_t>& c : chunks_) {
    if (n == 0) break;
    if (offset < at + c.size()) {
      const size_t in = static_cast<size_t>(offset - at);
      const size_t take = std::min(n, c.size() - in);
      std::memcpy(out, c.data() + in, take);
      out += take;
      offset += take;
      n -= take;
    }
    at += c.size();
  }
  return {total};
}

}  // namespace mibz2::io
