// One open of an indexed .bz2 file for the Python module: the file's shared Reader, read by
// position. Reads are the mount's: every byte of a sound block, a short read where a range runs
// into a damaged block, and then a failure (EIO) naming the file and the block; a stored index
// that turns out not to describe the file is built again once and the read goes on (as mibz2 cat
// does). Lines come from the index (index/line_map.h): the count, and where line N starts, found by
// reading the one block that holds it. No Python here: module.cc releases the GIL around read()
// and line_start().
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "base/status.h"
#include "engine/reader.h"
#include "index/line_map.h"
#include "session.h"

namespace mibz2::python {

class OpenFile {
 public:
  // `file` must be ready in `session` (Session::obtain); fails as Catalog::open does.
  static base::Result<std::unique_ptr<OpenFile>> open(std::shared_ptr<Session> session, catalog::FileRef file,
                                                      std::string shown);

  uint64_t size() const;
  // Up to `length` bytes at decompressed `offset` into `out`: the count (0 at or past the end;
  // fewer than asked where the range runs into a damaged block), or why not (EIO: damage, with the
  // file and the block named; the machine's errno when the source cannot be read).
  base::Result<size_t> read(uint64_t offset, size_t length, uint8_t* out);
  const std::string& shown() const { return shown_; }

  // Lines as `sed` counts them, or nullopt when the index cannot tell (damage, an index made
  // before line counts), with why (naming the file). Fails only when the index was found not to
  // match the file and cannot be built again (as read() fails then).
  struct LineCount {
    std::optional<uint64_t> count;
    std::string unknown_why;  // empty when count is known
  };
  base::Result<LineCount> line_count();
  // The decompressed offset where line `n` (1-based) starts: the size when n is past the last
  // line. Reads at most the block that holds it. Fails as LineMap::line_start does (EINVAL for 0,
  // ENODATA with why when the index cannot tell), or as read() does, with the file named.
  base::Result<uint64_t> line_start(uint64_t n);

 private:
  // The Reader and the line map of its index, taken together (the map points into the index the
  // Reader holds).
  struct Lines {
    std::shared_ptr<engine::Reader> reader;
    std::shared_ptr<const index::LineMap> map;
  };
  OpenFile(std::shared_ptr<Session> session, catalog::FileRef file, std::string shown,
           std::shared_ptr<engine::Reader> reader)
      : session_(std::move(session)), file_(std::move(file)), shown_(std::move(shown)), reader_(std::move(reader)) {}
  // The file's index was distrusted: built again and a new Reader taken, once per open.
  base::Status reopen();
  // After a read through `r` came back with nothing: true when `r`'s index is distrusted and a
  // newer Reader is there to go on with (reopened here, once per open, or by another thread);
  // false when the failure stands (*distrusted: whether because of a distrusted index).
  base::Result<bool> reopened_after(const std::shared_ptr<engine::Reader>& r, bool* distrusted);
  std::shared_ptr<engine::Reader> reader() const;
  Lines lines() const;
  // lines() of an index not found wrong: after a distrust, of the index built again (once per
  // open, as read() does).
  base::Result<Lines> trusted_lines();

  const std::shared_ptr<Session> session_;
  const catalog::FileRef file_;
  const std::string shown_;
  mutable std::mutex mu_;  // guards reader_, line_map_ and reopened_ (reads run at once from several threads)
  std::shared_ptr<engine::Reader> reader_;
  mutable std::shared_ptr<const index::LineMap> line_map_;  // of reader_'s index, made at the first use
  bool reopened_ = false;
};

}  // namespace mibz2::python
