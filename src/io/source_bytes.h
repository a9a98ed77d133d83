// The compressed file as an index build and a read of it see it: by position, with pread, never
// mapped, so a file that shrinks while it is read gives short reads (a truncated index, which the
// catalog then finds stale) and never a SIGBUS. Reads are made outside every lock, a few MB or one
// block at a time.
//
// This is the one path by which a source's bytes are read (builds, the Reader's checked decodes,
// the validation of a copy's index, mibz2 cat -j 1, the fingerprint, the head of a listed file), so
// that every caller sees a read error the same way: as an error with its errno (SourceRead), never
// as a short read. A read error is not a fact about the file's bytes: taken for the end of the
// file it would be stored as a truncation (docs/ARCHITECTURE.md: damage is stored, a failure to read is
// reported and tried again later).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

namespace mibz2::io {

// What one read of a source gave: a count of bytes, or the errno of a read that failed.
struct [[nodiscard]] SourceRead {
  size_t count = 0;   // bytes read: fewer than asked only where the source ends (it shrank)
  int error = 0;      // the errno of a read that failed (count is then 0), or 0
  uint64_t at = 0;    // a failed read: the byte offset of the request that failed (the bad bytes
  size_t length = 0;  // are somewhere in its `length` bytes: a file system fails a whole request)
  // The source is no longer the content it was opened on (a remote object replaced: its ETag
  // changed), so no read of it will give that content's bytes again; error is then ESTALE.
  bool changed = false;

  bool failed() const { return error != 0; }
  static SourceRead failure(int error, uint64_t at, size_t length) { return {0, error, at, length}; }
  static SourceRead changed_failure(uint64_t at, size_t length) { return {0, ESTALE, at, length, true}; }
  // "read error at byte 2097148 (a read of 1048596 bytes): Input/output error (EIO)", or for a
  // changed source "... : the source changed since it was opened (ESTALE)".
  std::string describe() const;
};

// The words of an errno for messages that must name it: "Input/output error (EIO)".
std::string errno_words(int error);

class SourceBytes {
 public:
  // What size() says of a source read once (a pipe) until its end is seen: more than any file.
  static constexpr uint64_t kUnknownSize = uint64_t{1} << 60;

  explicit SourceBytes(uint64_t size) : size_(size) {}
  virtual ~SourceBytes() = default;
  // The size the file had when the build began; nothing is read past it. A source read once says
  // kUnknownSize until a read meets its end, and its size from then on.
  uint64_t size() const { return size_.load(std::memory_order_acquire); }
  // Reads up to `len` bytes at `offset` (clipped to size()): the count (fewer when the file
  // shrank), or the read's error.
  SourceRead read(uint64_t offset, size_t len, uint8_t* out) const {
    const uint64_t size = this->size();
    if (offset >= size) return {};
    if (len > size - offset) len = static_cast<size_t>(size - offset);
    return read_at(offset, len, out);
  }

 protected:
  // A source read once met its end at `size` (before its read returns short).
  void ends_at(uint64_t size) const { size_.store(size, std::memory_order_release); }

 private:
  virtual SourceRead read_at(uint64_t offset, size_t len, uint8_t* out) const = 0;
  mutable std::atomic<uint64_t> size_;
};

// An open file descriptor (not owned), read with pread: short transfers and EINTR are looped over,
// a failed pread is an error where it failed.
class FdBytes final : public SourceBytes {
 public:
  FdBytes(int fd, uint64_t size) : SourceBytes(size), fd_(fd) {}

 private:
  SourceRead read_at(uint64_t offset, size_t len, uint8_t* out) const override;
  const int fd_;
};

// Bytes in memory (tests, fuzzing, mibz2 over a buffer).
class SpanBytes final : public SourceBytes {
 public:
  explicit SpanBytes(std::span<const uint8_t> data) : SourceBytes(data.size()), data_(data) {}

 private:
  SourceRead read_at(uint64_t offset, size_t len, uint8_t* out) const override {
    std::memcpy(out, data_.data() + offset, len);
    return {len};
  }
  const std::span<const uint8_t> data_;
};

}  // namespace mibz2::io
