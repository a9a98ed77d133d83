// One open of an indexed .bz2 file for the Python module: the file's shared Reader, read by
// position. Reads are the mount's: every byte of a sound block, a short read where a range runs
// into a damaged block, and then a failure (EIO) naming the file and the block; a stored index
// that turns out not to describe the file is built again once and the read goes on (as mibz2 cat
// does). No Python here: module.cc releases the GIL around read().
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "base/status.h"
#include "engine/reader.h"
#include "session.h"

namespace mibz2::python {

class OpenFile {
 public:
  // `file` must be ready in `session` (Session::obtain); fails as Catalog::open does.
  static base::Result<std::unique_ptr<OpenFile>> open(std::shared_ptr<Session> session, engine::FileRef file,
                                                      std::string shown);

  uint64_t size() const;
  // Up to `length` bytes at decompressed `offset` into `out`: the count (0 at or past the end;
  // fewer than asked where the range runs into a damaged block), or why not (EIO: damage, with the
  // file and the block named; the machine's errno when the source cannot be read).
  base::Result<size_t> read(uint64_t offset, size_t length, uint8_t* out);
  const std::string& shown() const { return shown_; }

 private:
  OpenFile(std::shared_ptr<Session> session, engine::FileRef file, std::string shown,
           std::shared_ptr<engine::Reader> reader)
      : session_(std::move(session)), file_(std::move(file)), shown_(std::move(shown)), reader_(std::move(reader)) {}
  // The file's index was distrusted: built again and a new Reader taken, once per open.
  base::Status reopen();
  std::shared_ptr<engine::Reader> reader() const;

  const std::shared_ptr<Session> session_;
  const engine::FileRef file_;
  const std::string shown_;
  mutable std::mutex mu_;  // guards reader_ and reopened_ (reads run at once from several threads)
  std::shared_ptr<engine::Reader> reader_;
  bool reopened_ = false;
};

}  // namespace mibz2::python
