// A regular file mapped read-only and shared (MAP_SHARED): its pages are the page cache's, one copy
// per machine however many processes map the file. What an index file is read through, so that 32
// Dask workers on a node hold one copy of a dump's index, not 32 (index/FORMAT.md, "One copy a
// machine").
//
// A file can change under its mapping, and nothing here can stop it:
//   - cut short (truncate, `cp` over it, a write with O_TRUNC): the kernel raises SIGBUS at the next
//     touch of a page past the new end. A guard, installed with the first mapping, catches SIGBUS
//     for addresses inside a live MappedFile: it marks that MappedFile revoked and maps zero pages
//     of its own over the whole range, so that the touch, and every later one, reads zeros. A SIGBUS
//     anywhere else goes on to the handler that was there before (by default: the process dies, as
//     it would have).
//   - rewritten in place at the same size (`dd conv=notrunc`, or `cp` once it has written the file
//     back up to where a reader touches): the bytes change, with no signal.
// So a reader of a mapping treats its bytes as input that may change at any time: it copies what it
// uses before it checks it, never lets a mapped value size an allocation or index memory without a
// bound, and believes nothing it computed once revoked() is true. A file replaced by a rename (as
// every index file is written) changes nothing here: the mapping keeps the old file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "base/status.h"

namespace mibz2::io {

class MappedFile {
 public:
  // Maps the first `size` bytes of the regular file open at `fd` (size > 0; the descriptor may be
  // closed afterwards). Fails with the errno of mmap, or EMFILE when the guard's table of live
  // mappings is full (kMaxMappings): the caller then reads the file into memory instead.
  static base::Result<std::shared_ptr<const MappedFile>> map(int fd, size_t size);
  // At most this many live mappings in a process (the SIGBUS guard's table is fixed, a handler
  // cannot allocate). Each open dump's index takes one.
  static constexpr size_t kMaxMappings = 4096;

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  // Whether the file was cut short under the mapping (a SIGBUS was caught in it): its bytes are
  // zeros from then on, and whatever was computed from them may be wrong.
  bool revoked() const;

  // For tests: how many SIGBUS the guard turned into zero pages, in all mappings of this process.
  static uint64_t caught_for_testing();

 private:
  MappedFile(const uint8_t* data, size_t size, size_t slot) : data_(data), size_(size), slot_(slot) {}
  const uint8_t* data_;
  size_t size_;
  size_t slot_;  // this mapping's entry in the guard's table (mapped_file.cc)
};

}  // namespace mibz2::io
