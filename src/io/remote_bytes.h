// A remote object (HTTP(S) or S3) as a source of compressed bytes, read by position like a local
// file (source_bytes.h), by range requests (http_client.h).
//
// How its reads are served, for the ways sources are read (an index build scans forward a few MB
// at a time while its decoders re-read the blocks just scanned; a Reader reads one block's bytes
// per decode; mibz2 cat -j 1 reads 8 MB pieces in order):
//   - a read fetches only the bytes no extent holds, widened to whole pages (page_bytes) where no
//     extent is in the way: a random block read costs about the block's compressed size;
//   - fetched extents are kept, bounded in bytes (cache_bytes), so that the decodes of blocks a
//     scan just read are served locally (range_cache.h);
//   - a sequential reader (sequential_reads.h) gets read-ahead: up to readahead_bytes ahead of
//     its front are fetched in requests of request_bytes, readahead_requests of them in flight at
//     once, on the client's fetch pool, so that a scan runs at the link's speed and not at one
//     connection's; a large read is likewise fetched in pieces side by side;
//   - every request carries the ETag the object was opened with (http_client.h). Once one finds
//     the object changed, every read fails with SourceRead::changed (ESTALE), also for bytes it
//     holds: an open gives one content or none. Any other failed read is a SourceRead failure
//     with its errno (EIO after the client's retries), never kept: the next read asks again.
//
// Thread-safe: any thread may read. No lock is held across a request; readers of an extent being
// fetched wait on that extent's own condition variable.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "base/status.h"
#include "io/http_client.h"
#include "io/remote_object.h"
#include "io/s3_settings.h"
#include "io/source_bytes.h"

namespace mibz2::io {

struct RemoteBytesOptions {
  size_t page_bytes = 16 << 10;     // a fetch is widened to whole pages of this size
  size_t cache_bytes = 64 << 20;    // extents kept, fetched or being fetched
  size_t readahead_bytes = 16 << 20;  // ahead of a sequential reader's front; 0: no read-ahead
  size_t request_bytes = 2 << 20;   // one read-ahead request; a larger read is fetched in pieces
  size_t readahead_requests = 4;    // read-ahead requests in flight at once for this source
  // Every read is known to come in order from the start (a download, mibz2 fetch): the whole
  // read-ahead window from the first read, not only once the reads look sequential and as far as
  // they have come.
  bool in_order = false;
};

// Counts since the source was opened (for tests and benchmarks).
struct RemoteBytesStats {
  uint64_t reads = 0;               // read() calls that reached the network or the cache
  uint64_t fetches = 0;             // range requests made (demand and read-ahead), done or not
  uint64_t readahead_fetches = 0;   // of those, read-ahead
  uint64_t fetched_bytes = 0;       // bytes of the requests that succeeded
  uint64_t failed_fetches = 0;
};

class RemoteBytes final : public SourceBytes {
 public:
  // `info` is the object's stat (HttpClient::stat): its size is this source's size, and its
  // ETag is what every request must find.
  RemoteBytes(std::shared_ptr<HttpClient> client, RemoteObject object, ObjectInfo info,
              RemoteBytesOptions options = {});
  // Cancels its read-ahead (requests in flight stop within about a second, on their own
  // threads); does not wait for them.
  ~RemoteBytes() override;
  RemoteBytes(const RemoteBytes&) = delete;
  RemoteBytes& operator=(const RemoteBytes&) = delete;

  const RemoteObject& object() const;
  const ObjectInfo& info() const;
  // Whether a request found the object changed since it was opened (reads fail from then on).
  bool changed() const;
  // Why the last failed read failed, in words (the object, redacted, and the cause), or ok.
  base::Status last_failure() const;
  RemoteBytesStats stats() const;

 private:
  SourceRead read_at(uint64_t offset, size_t len, uint8_t* out) const override;

  struct State;
  const std::shared_ptr<HttpClient> client_;  // outlives every request of state_'s
  const std::shared_ptr<State> state_;        // shared with the read-ahead requests in flight
};

// The object a URL names, and its stat: the URL taken apart, the S3 settings resolved (for s3://,
// from `s3` and the environment), and the stat made. For a caller that chooses how to read it by
// its size (mibz2 fetch); fails as open_remote_bytes does.
struct StatedObject {
  RemoteObject object;
  ObjectInfo info;
};
base::Result<StatedObject> stat_remote_object(HttpClient& client, std::string_view url, const S3Options& s3 = {});

// Opens the object a URL names: the URL taken apart, the S3 settings resolved (for s3://, from
// `s3` and the environment), and the object's stat made. Fails as those do (EINVAL for a URL that
// is not one, ENOENT, EACCES, EIO, EISDIR for an s3:// prefix).
base::Result<std::unique_ptr<RemoteBytes>> open_remote_bytes(std::shared_ptr<HttpClient> client, std::string_view url,
                                                             const S3Options& s3 = {},
                                                             RemoteBytesOptions options = {});

}  // namespace mibz2::io
