// Why a read of a decompressed file failed, as the Reader found it: the caller needs the kind to
// choose what to do (the mount answers EIO for all of them; mibz2 cat picks its exit status and
// message; the Python module its exception; the catalog's read handle builds a distrusted index
// again only for a file that has not changed), and the place to say where. Found once, where the
// read met it, so that nobody goes back into the index to work it out again.
#pragma once

#include <cerrno>
#include <cstdint>
#include <memory>
#include <string>

namespace mibz2::engine {

struct ReadFailure {
  enum class Kind : uint8_t {
    // The read starts in a block the index records as damaged (a CRC that does not match, a block
    // that does not decode, a file cut short): a fact about the file's bytes.
    kDamaged,
    // A block did not decode as its index record says: the index does not describe the file (it
    // was made for another content, crafted, or the file changed since it was opened). Every later
    // read of the Reader fails the same way.
    kIndexMismatch,
    // The source could not be read (a disk's EIO, an NFS server's ESTALE): nothing is known of
    // the block, and the next read tries again.
    kReadError,
    // Out of memory for a decode, a copy or a job.
    kNoMemory,
    // The file was rewritten or replaced while it was open: what the read would give now is
    // another content's. Never found by the Reader itself: the catalog's read handle says it when
    // it sees the source's stamp changed behind a failure (catalog/read_handle.h).
    kChanged,
  };

  Kind kind = Kind::kReadError;
  uint64_t block = 0;  // the block of the index where the read failed
  int error = EIO;     // errno: the source's for kReadError, ENOMEM, ESTALE for kChanged, else EIO
  // What was found ("CRC mismatch", "read error at byte N (...): ..."), shared so that a failure
  // is copied to every reader waiting for the block without allocating (a read must be answered
  // even when memory ran out); null when there is nothing more to say.
  std::shared_ptr<const std::string> detail;

  std::string details() const { return detail ? *detail : std::string(); }

  // What a read that can say no more returns, negated (Reader::read, a FUSE reply): ENOMEM, or EIO
  // for everything else (a source's own errno too: the file read through the mount is not the
  // source, and EIO is what a read of it documents).
  int read_errno() const { return kind == Kind::kNoMemory ? ENOMEM : kind == Kind::kChanged ? ESTALE : EIO; }
  // Whether it says something about the file's bytes (bzip2's exit status 2) rather than the
  // machine (1): damage and an index that does not match the file.
  bool bad_input() const { return kind == Kind::kDamaged || kind == Kind::kIndexMismatch; }
};

}  // namespace mibz2::engine
