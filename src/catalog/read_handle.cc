#include "catalog/read_handle.h"

#include <sys/stat.h>

#include <cerrno>
#include <utility>

#include "catalog/front_door.h"

namespace mibz2::catalog {

using Kind = engine::ReadFailure::Kind;

std::string describe_read_failure(const engine::ReadFailure& failure, uint64_t offset, const index::BlockIndex& index) {
  const std::string at = "decompressed byte " + std::to_string(offset);
  const std::string block = failure.block < index.blocks.size() ? index::describe_block(index, failure.block)
                                                                : "block " + std::to_string(failure.block);
  switch (failure.kind) {
    case Kind::kDamaged:
      return "damaged at " + at + " (" + block + "): " + index::describe_damage(index.blocks[failure.block]);
    case Kind::kIndexMismatch:
      return "the index does not match the file at " + at + " (" + (failure.detail ? *failure.detail : block) + ")";
    case Kind::kReadError:
      return "cannot read the source at " + at + " (" + block + "): " +
             (failure.detail ? *failure.detail : io::errno_words(failure.error));
    case Kind::kNoMemory:
      return "out of memory reading " + at + " (" + block + ")";
    case Kind::kChanged:
      return "the file changed while it was read (found at " + at + "): open it again for its new content";
  }
  return "cannot read " + at;
}

base::Status ReadResult::status(const std::string& shown) const {
  if (!failure) return {};
  const std::string words = shown.empty() ? why : shown + ": " + why;
  switch (failure->kind) {
    case Kind::kReadError: return base::Status::os_error(failure->error, words);
    case Kind::kNoMemory: return base::Status::error(ENOMEM, words);
    case Kind::kChanged: return base::Status::error(ESTALE, words);
    case Kind::kDamaged:
    case Kind::kIndexMismatch: break;
  }
  return base::Status::error(EBADMSG, words);
}

ReadHandle::ReadHandle(FrontDoor& door, FileRef file, std::shared_ptr<engine::Reader> reader)
    : door_(door), file_(std::move(file)), opened_(reader->opened_stamp()), reader_(std::move(reader)) {}

std::shared_ptr<engine::Reader> ReadHandle::reader() const {
  std::lock_guard lk(mu_);
  return reader_;
}

ReadHandle::Lines ReadHandle::lines() const {
  std::lock_guard lk(mu_);
  // One pass over the index's newline counts: made once per Reader, not per question.
  if (!line_map_) line_map_ = std::make_shared<const index::LineMap>(reader_->index());
  return {reader_, line_map_};
}

bool ReadHandle::unchanged(const engine::Reader& r) const {
  if (r.opened_stamp() != opened_ || !r.source_unchanged()) return false;
  // A rename over the path leaves the descriptor on the old file, unchanged: an index built again
  // now would be the new file's.
  const base::Result<io::SourceStamp> now = door_.access().stamp(*file_);
  return now.ok() && *now == opened_;
}

std::shared_ptr<engine::Reader> ReadHandle::recover(const std::shared_ptr<engine::Reader>& r,
                                                    engine::ReadFailure* why) {
  if (why->kind == Kind::kDamaged) return nullptr;
  if (!unchanged(*r)) {
    *why = engine::ReadFailure{Kind::kChanged, why->block, ESTALE, why->detail};
    return nullptr;
  }
  if (why->kind != Kind::kIndexMismatch) return nullptr;
  {
    std::lock_guard lk(mu_);
    if (reader_ != r) return reader_;  // another thread built it again meanwhile
    if (rebuilt_) return nullptr;
    rebuilt_ = true;
  }
  // The file is the one this handle opened, and its index was wrong: built again from the file.
  const IndexStatus got = door_.obtain(file_, /*force=*/false);
  base::Result<std::shared_ptr<engine::Reader>> opened =
      got.ready() ? door_.catalog().open(file_) : base::Result<std::shared_ptr<engine::Reader>>(got.error);
  if (!opened.ok()) return nullptr;  // the mismatch stands
  if ((*opened)->opened_stamp() != opened_) {
    // Changed while it was indexed again: the new index is another content's.
    *why = engine::ReadFailure{Kind::kChanged, why->block, ESTALE, why->detail};
    return nullptr;
  }
  std::lock_guard lk(mu_);
  reader_ = std::move(opened).value();
  line_map_.reset();
  return reader_;
}

ReadResult ReadHandle::read(uint64_t offset, size_t length, uint8_t* out) {
  for (;;) {
    const std::shared_ptr<engine::Reader> r = reader();
    if (length == 0 || offset >= r->size()) return {};
    engine::ReadFailure why;
    const ssize_t n = r->read(offset, length, out, &why);
    if (n >= 0) return {static_cast<size_t>(n), std::nullopt, {}};
    if (recover(r, &why)) continue;
    std::string words = describe_read_failure(why, offset, r->index());
    return {0, std::move(why), std::move(words)};
  }
}

base::Result<ReadHandle::LineCount> ReadHandle::line_count() {
  for (;;) {
    const Lines l = lines();
    if (!l.reader->distrusted()) {
      LineCount out{l.map->line_count(), {}};
      if (!out.count) out.unknown_why = l.map->unknown_why();
      return out;
    }
    engine::ReadFailure why = l.reader->distrust_failure();
    if (recover(l.reader, &why)) continue;
    const ReadResult failed{0, why, describe_read_failure(why, 0, l.reader->index())};
    return failed.status("");
  }
}

base::Result<uint64_t> ReadHandle::line_offset(uint64_t n) {
  for (;;) {
    const Lines l = lines();
    engine::ReadFailure why;
    bool read_failed = false;
    uint64_t failed_at = 0;
    const base::Result<uint64_t> start = l.map->line_start(n, [&](uint64_t offset, size_t length, uint8_t* out) {
      const ssize_t got = l.reader->read(offset, length, out, &why);
      if (got < 0) {
        read_failed = true;
        failed_at = offset;
      }
      return got;
    });
    if (start.ok() || !read_failed) return start;
    // As read(): an index found wrong on the way is built again once, and the search starts over
    // with it (its counts may differ).
    if (recover(l.reader, &why)) continue;
    const ReadResult failed{0, why, describe_read_failure(why, failed_at, l.reader->index())};
    return failed.status("").prefixed("looking for line " + std::to_string(n) + ": ");
  }
}

}  // namespace mibz2::catalog
