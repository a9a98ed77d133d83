// The compressed file as an index build reads it: by position, with pread, never mapped, so a file
// that shrinks while it is read gives short reads (a truncated index, which the catalog then finds
// stale) and never a SIGBUS. Reads are made outside every lock, a few MB or one block at a time.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "io/fd_io.h"

namespace mibz2::index {

class SourceBytes {
 public:
  // What size() says of a source read once (a pipe) until its end is seen: more than any file.
  static constexpr uint64_t kUnknownSize = uint64_t{1} << 60;

  explicit SourceBytes(uint64_t size) : size_(size) {}
  virtual ~SourceBytes() = default;
  // The size the file had when the build began; nothing is read past it. A source read once says
  // kUnknownSize until a read meets its end, and its size from then on.
  uint64_t size() const { return size_.load(std::memory_order_acquire); }
  // Reads up to `len` bytes at `offset` (clipped to size()). Returns the count, fewer when the
  // file shrank, or -errno.
  ssize_t read(uint64_t offset, size_t len, uint8_t* out) const {
    if (offset >= size_) return 0;
    if (len > size_ - offset) len = static_cast<size_t>(size_ - offset);
    return read_at(offset, len, out);
  }

 protected:
  // A source read once met its end at `size` (before its read returns short).
  void ends_at(uint64_t size) const { size_.store(size, std::memory_order_release); }

 private:
  virtual ssize_t read_at(uint64_t offset, size_t len, uint8_t* out) const = 0;
  mutable std::atomic<uint64_t> size_;
};

// An open file descriptor (not owned).
class FdBytes final : public SourceBytes {
 public:
  FdBytes(int fd, uint64_t size) : SourceBytes(size), fd_(fd) {}
  // Reads from `fd` from now on (another descriptor of the same file: a build that was parked
  // closed its own and reopens it to resume); only while no read is under way.
  void reset(int fd) { fd_.store(fd, std::memory_order_relaxed); }

 private:
  ssize_t read_at(uint64_t offset, size_t len, uint8_t* out) const override {
    return io::pread_full(fd_.load(std::memory_order_relaxed), out, len, offset);
  }
  std::atomic<int> fd_;
};

// Bytes in memory (tests, fuzzing, mibz2 over a buffer).
class SpanBytes final : public SourceBytes {
 public:
  explicit SpanBytes(std::span<const uint8_t> data) : SourceBytes(data.size()), data_(data) {}

 private:
  ssize_t read_at(uint64_t offset, size_t len, uint8_t* out) const override {
    std::memcpy(out, data_.data() + offset, len);
    return static_cast<ssize_t>(len);
  }
  const std::span<const uint8_t> data_;
};

}  // namespace mibz2::index
