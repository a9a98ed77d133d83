// One open of a decompressed file, as every front end reads it (FrontDoor::open makes it): the
// file's shared Reader, reads that say why they failed, and the file's lines.
//
// The rule when a read fails, in one place:
//   - a damaged block is a fact about the file: the read fails there (every byte before it was
//     served), with the block and what is wrong with it;
//   - a failure of any other kind (an index that does not match the file, a read error) behind which
//     the source is no longer the content this handle opened (its descriptor's fstat, or its path's
//     stat, gives another file, size, mtime or ctime: rewritten in place, truncated, replaced) is
//     kChanged (ESTALE): the bytes already served belong to that content, and the new content is
//     only for a new open. Never a continuation with another content's bytes;
//   - an index that does not match a file that is provably the same (nothing written since the
//     handle opened it: the stamp is unchanged) was wrong, not the file: it is built again from the
//     file, once per handle, and the read goes on at the same offset (every byte served so far came
//     from a block that matched its record, at the same offset in any index of the same content);
//   - anything else (a read error, no memory) fails the read and is tried again at the next.
// The mount reads without that recovery (read_async): it cannot replace what the kernel cached from
// the distrusted index, and retires the node instead (fs/filesystem.h).
//
// Thread-safe: a handle may be read from several threads at once (Python's pread).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "base/status.h"
#include "catalog/catalog_file.h"
#include "engine/read_failure.h"
#include "engine/reader.h"
#include "index/block_index.h"
#include "index/line_map.h"
#include "io/source_stamp.h"

namespace mibz2::catalog {

class FrontDoor;

// What a read gave: a byte count (0 at or past the end; fewer than asked where the range runs
// into a damaged block), or why it failed, in words that name the place.
struct ReadResult {
  size_t bytes = 0;
  std::optional<engine::ReadFailure> failure;
  std::string why;  // the failure in words, without the file's name: "damaged at decompressed byte 7 (block 3, ...): CRC mismatch"

  bool ok() const { return !failure; }
  // The failure as a Status with the file's name `shown` (if any) before the words: EBADMSG for
  // damage and an index that does not match (bad input: base/status.h), ESTALE when the file
  // changed, the source's errno for a read error (an environment failure), ENOMEM.
  base::Status status(const std::string& shown) const;
};

class ReadHandle {
 public:
  // Use FrontDoor::open.
  ReadHandle(FrontDoor& door, FileRef file, std::shared_ptr<engine::Reader> reader);
  ReadHandle(const ReadHandle&) = delete;
  ReadHandle& operator=(const ReadHandle&) = delete;

  const FileRef& file() const { return file_; }
  uint64_t size() const { return reader()->size(); }
  // The index reads go through now (a new one after a rebuild).
  std::shared_ptr<const index::BlockIndex> index() const { return reader()->shared_index(); }

  // Up to `length` bytes at decompressed `offset` into `out`, by the rule at the top.
  ReadResult read(uint64_t offset, size_t length, uint8_t* out);
  // The mount's read: never waits for a decode and never recovers (engine::Reader::read_async).
  void read_async(uint64_t offset, size_t length, engine::Reader::ReadDone done) {
    reader()->read_async(offset, length, std::move(done));
  }

  // Lines as `sed` counts them, or nullopt with why (after damage, an index made before line
  // counts). Fails only as read() does when the index is found not to match the file.
  struct LineCount {
    std::optional<uint64_t> count;
    std::string unknown_why;  // empty when count is known
  };
  base::Result<LineCount> line_count();
  // The decompressed offset where line `n` (1-based) starts: the size when n is past the last
  // line. Reads at most the block that holds it. Fails as index::LineMap::line_start does (EINVAL
  // for 0, ENODATA with why when the index cannot tell) or as read() does.
  base::Result<uint64_t> line_offset(uint64_t n);

  // The Reader reads go through now and the line map of its index, taken together (the map points
  // into the index the Reader holds).
  struct Lines {
    std::shared_ptr<engine::Reader> reader;
    std::shared_ptr<const index::LineMap> map;
  };
  Lines lines() const;

 private:
  std::shared_ptr<engine::Reader> reader() const;
  // After a read through `r` failed with `why`: by the rule at the top, the Reader to go on with
  // (a new one, or another thread's since), or the failure that stands (*why, made kChanged when
  // the source changed).
  std::shared_ptr<engine::Reader> recover(const std::shared_ptr<engine::Reader>& r, engine::ReadFailure* why);
  // Whether the source is still the content `r` was opened on, by its descriptor and by its path.
  bool unchanged(const engine::Reader& r) const;

  FrontDoor& door_;
  const FileRef file_;
  const io::SourceStamp opened_;  // the content this handle reads (its first Reader's)
  mutable std::mutex mu_;         // guards reader_, line_map_ and rebuilt_
  std::shared_ptr<engine::Reader> reader_;
  mutable std::shared_ptr<const index::LineMap> line_map_;  // of reader_'s index, made at the first use
  bool rebuilt_ = false;  // the index was built again once already
};

// A read's failure in words, for the index it was read through: where (the decompressed offset and
// the block) and what was found.
std::string describe_read_failure(const engine::ReadFailure& failure, uint64_t offset, const index::BlockIndex& index);

}  // namespace mibz2::catalog
