// An opened source of compressed bytes, as a build, a Reader and the check of a stored index hold
// one: its bytes read by position (SourceBytes: the one path every read takes), the stamp of the
// content it was opened on, and a way to tell whether it still is that content. A local file is a
// FileSource (a descriptor read with pread); a remote object is another kind of Source, behind the
// same interface, so that nothing above the catalog's SourceAccess knows which it reads.
#pragma once

#include <cstdint>
#include <memory>

#include "base/status.h"
#include "io/source_bytes.h"
#include "io/source_stamp.h"
#include "io/unique_fd.h"

namespace mibz2::io {

// The stamp of an open file (fstat of `fd`), or why it cannot be had.
base::Result<SourceStamp> stamp_of(int fd);

class Source : public SourceBytes {
 public:
  // A source of `size` bytes opened on the content `stamp` names.
  Source(uint64_t size, const SourceStamp& stamp) : SourceBytes(size), stamp_(stamp) {}

  // Which file (or object) and which content of it this source was opened on.
  const SourceStamp& stamp() const { return stamp_; }
  // What it is now, or why that cannot be told: a file's descriptor stated again (a rewrite in
  // place changes its size, mtime or ctime); an object's stamp as its server last gave it.
  virtual base::Result<SourceStamp> stamp_now() const = 0;
  // Whether it still is the content it was opened on (false when that cannot be told).
  bool unchanged() const {
    const base::Result<SourceStamp> now = stamp_now();
    return now.ok() && *now == stamp_;
  }

 private:
  const SourceStamp stamp_;
};

// A local file: its descriptor (owned: closed with it), read through `bytes` (FdBytes over it, or
// what a test puts in between), and stated with fstat.
class FileSource final : public Source {
 public:
  FileSource(UniqueFd fd, const SourceStamp& stamp, std::unique_ptr<SourceBytes> bytes)
      : Source(stamp.size, stamp), fd_(std::move(fd)), bytes_(std::move(bytes)) {}
  int fd() const { return fd_.get(); }
  base::Result<SourceStamp> stamp_now() const override;

 private:
  SourceRead read_at(uint64_t offset, size_t len, uint8_t* out) const override { return bytes_->read(offset, len, out); }
  const UniqueFd fd_;
  const std::unique_ptr<SourceBytes> bytes_;
};

}  // namespace mibz2::io
