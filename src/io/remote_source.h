// A remote object (HTTP(S) or S3) as an opened Source (source.h), as the catalog holds a local
// file's descriptor: its bytes read by range (remote_bytes.h), and a stamp that tells which object
// and which content of it was opened, so that the catalog's rules for a file rewritten in place
// hold for an object replaced on its server.
//
// The stamp of a remote object (remote_stamp):
//   - device 0, inode the XXH3-64 of the object's URL (as messages show it: redacted, so that a
//     presigned URL signed again is still the same object) and its ETag: another object, or
//     another content under the same URL, is another "file";
//   - size the object's size, mtime its Last-Modified (0 when the server sends none);
//   - ctime 0: an object has no change time apart from its content (a new ETag).
// So an index built from this very object (same URL, ETag, size, Last-Modified) is current, with
// no sampled check; one made from a local copy (or another URL) matches only by content (size and
// fingerprint) and is checked on a sample of its blocks first, as any copy's is.
//
// Whether the source is still what it was opened on (Source::unchanged) is what its requests
// found: each carries the ETag it was opened with (If-Match), so once one finds the object
// replaced, stamp_now() fails with ESTALE and every read fails too, also for bytes held locally.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "io/http_client.h"
#include "io/remote_bytes.h"
#include "io/source.h"
#include "io/source_stamp.h"

namespace mibz2::io {

// The stamp of an object named `shown` (RemoteObject::shown) whose stat gave `info`.
SourceStamp remote_stamp(const std::string& shown, const ObjectInfo& info);

class RemoteSource final : public Source {
 public:
  explicit RemoteSource(std::unique_ptr<RemoteBytes> bytes);

  // The stamp it was opened with, or ESTALE (naming the object) once a request found it replaced.
  base::Result<SourceStamp> stamp_now() const override;
  const RemoteBytes& bytes() const { return *bytes_; }

 private:
  SourceRead read_at(uint64_t offset, size_t len, uint8_t* out) const override { return bytes_->read(offset, len, out); }
  const std::unique_ptr<RemoteBytes> bytes_;
};

}  // namespace mibz2::io
