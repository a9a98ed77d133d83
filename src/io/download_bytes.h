// A download written to a local file while it is read: one thread copies a source (a remote
// object, read with its requests side by side: remote_bytes.h) into the file in order, and a build
// reads the file by position behind it, each read waiting until the copy has passed its bytes. So
// an index is built from the bytes as they arrive (mibz2 fetch), in one pass, and what the build
// holds in memory is its window, not the download: the bytes wait in the file.
//
// A copy that fails (a read of the source after its retries, the source changed, a write of the
// file, cancel()) fails every read that waits for bytes it did not write, with its SourceRead, so
// the build fails too and never takes the end of what was written for the end of the file.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "base/status.h"
#include "io/source_bytes.h"

namespace mibz2::io {

class DownloadBytes final : public SourceBytes {
 public:
  // `from` is copied into the file open read-write at `fd` (not owned; both outlive this), `piece`
  // bytes a read of `from`.
  DownloadBytes(const SourceBytes& from, int fd, size_t piece);

  // Copies the whole of `from` (once, on one thread). ok, or why it stopped: the read of `from`
  // that failed (its errno, and the SourceRead in failure()), or the write of the file that failed.
  base::Status run();
  // Stops the copy (at its next piece): the reads still waiting fail with ECANCELED.
  void cancel();
  // Bytes written so far (any thread).
  uint64_t done() const;
  // The read of `from` that stopped the copy, if one did (failed() false otherwise).
  SourceRead failure() const;

 private:
  SourceRead read_at(uint64_t offset, size_t len, uint8_t* out) const override;
  // Ends the copy as failed with `read` (the reads waiting are woken).
  void stop(SourceRead read);

  const SourceBytes& from_;
  const int fd_;
  const size_t piece_;
  mutable std::mutex mu_;                // a leaf lock, never held across a read or a write
  mutable std::condition_variable moved_;  // the front moved on, or the copy stopped
  uint64_t front_ = 0;                   // guarded by mu_: bytes written
  SourceRead failed_;                    // guarded by mu_: why the copy stopped, if it did
  bool cancelled_ = false;               // guarded by mu_
};

}  // namespace mibz2::io
