// A source that can be read only once, in order: a pipe (mibz2 cat - reads standard input). An
// index build reads its source by position, from several threads, ahead of where its consumer is;
// PipeBytes reads the descriptor forward as far as the furthest position asked for and keeps the
// bytes from the point its consumer released (release_before) up to there, so memory stays bounded
// by what the build has in flight (its window of blocks and a scan chunk), not by the input.
//
// Its size() is SourceBytes::kUnknownSize until a read meets the end of the input, then the real
// size. A read of the descriptor that fails is no end: the size stays unknown, and every read
// that needs bytes past where it failed gets its error (so a build fails on it, and never takes
// the input for a truncated one). A position already released reads as an error (EINVAL): only a
// decode made stale by resolution can ask for one.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "io/source_bytes.h"

namespace mibz2::io {

class PipeBytes final : public SourceBytes {
 public:
  explicit PipeBytes(int fd) : SourceBytes(kUnknownSize), fd_(fd) {}  // fd is not owned

  // Bytes before `offset` are never read again: their memory goes.
  void release_before(uint64_t offset);
  // The errno of a read of the descriptor that failed (the input then ends there), or 0.
  int error() const;
  // Bytes read from the descriptor so far, and of those the bytes still kept (not released).
  uint64_t bytes_read() const;
  uint64_t bytes_kept() const;

 private:
  SourceRead read_at(uint64_t offset, size_t len, uint8_t* out) const override;
  // Reads more of the descriptor (with mu_ released); called by one thread at a time.
  void read_more(std::unique_lock<std::mutex>& lk, uint64_t need) const;

  const int fd_;
  mutable std::mutex mu_;               // a leaf lock; never held across a read of fd_
  mutable std::condition_variable more_;  // a read of fd_ ended: more bytes, or the end
  // --- guarded by mu_ ---
  mutable std::deque<std::vector<uint8_t>> chunks_;  // the kept bytes, in order, from base_
  mutable uint64_t base_ = 0;          // position of chunks_.front()'s first byte
  mutable uint64_t end_ = 0;           // bytes read from fd_
  mutable bool reading_ = false;       // a thread is reading fd_
  mutable bool at_end_ = false;        // fd_ reached its end (or failed)
  mutable int error_ = 0;              // the errno of the read of fd_ that failed, or 0
};

}  // namespace mibz2::io
