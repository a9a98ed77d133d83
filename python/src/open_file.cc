#include "open_file.h"

#include <cerrno>
#include <cstring>

#include "index/block_index.h"

namespace mibz2::python {

base::Result<std::unique_ptr<OpenFile>> OpenFile::open(std::shared_ptr<Session> session, catalog::FileRef file,
                                                       std::string shown) {
  base::Result<std::shared_ptr<engine::Reader>> reader = session->catalog().open(file);
  if (!reader.ok()) return reader.status().prefixed(shown + ": ");
  return std::unique_ptr<OpenFile>(new OpenFile(std::move(session), std::move(file), std::move(shown),
                                                std::move(reader).value()));
}

std::shared_ptr<engine::Reader> OpenFile::reader() const {
  std::lock_guard lk(mu_);
  return reader_;
}

OpenFile::Lines OpenFile::lines() const {
  std::lock_guard lk(mu_);
  // One pass over the index's newline counts: made once per Reader, not per question.
  if (!line_map_) line_map_ = std::make_shared<const index::LineMap>(reader_->index());
  return {reader_, line_map_};
}

uint64_t OpenFile::size() const { return reader()->size(); }

base::Status OpenFile::reopen() {
  const catalog::IndexStatus got = session_->obtain(file_, false, {});
  if (!got.ready()) return got.error.prefixed(shown_ + ": ");
  base::Result<std::shared_ptr<engine::Reader>> opened = session_->catalog().open(file_);
  if (!opened.ok()) return opened.status().prefixed(shown_ + ": ");
  std::lock_guard lk(mu_);
  reader_ = std::move(opened).value();
  line_map_.reset();
  return {};
}

base::Result<bool> OpenFile::reopened_after(const std::shared_ptr<engine::Reader>& r, bool* distrusted) {
  *distrusted = r->distrusted() || session_->catalog().status(file_).index.get() != &r->index();
  if (!*distrusted) return false;
  bool first;
  {
    std::lock_guard lk(mu_);
    first = !reopened_ && reader_ == r;
    if (first) reopened_ = true;
  }
  if (first) {
    // Every byte served so far came from a block that matched its record: same offsets in the
    // new index. Go on from here with it.
    MIBZ2_FORWARD_IF_ERROR(reopen());
    return true;
  }
  return reader() != r;  // another thread reopened it meanwhile
}

base::Result<size_t> OpenFile::read(uint64_t offset, size_t length, uint8_t* out) {
  for (;;) {
    const std::shared_ptr<engine::Reader> r = reader();
    if (length == 0 || offset >= r->size()) return size_t{0};
    const ssize_t n = r->read(offset, length, out);
    if (n > 0) return static_cast<size_t>(n);
    // Nothing read at `offset`: damage, a wrong index, or the source cannot be read.
    bool distrusted = false;
    const base::Result<bool> again = reopened_after(r, &distrusted);
    MIBZ2_FORWARD_IF_ERROR(again);
    if (*again) continue;
    const index::BlockIndex& idx = r->index();
    const size_t b = idx.block_at(offset);
    const std::string where = " at decompressed byte " + std::to_string(offset) + " (" + index::describe_block(idx, b) + ")";
    if (idx.blocks[b].damaged())
      return base::Status::error(EIO, shown_ + ": damaged" + where + ": " + index::describe_damage(idx.blocks[b]));
    if (distrusted) return base::Status::error(EIO, shown_ + ": the index does not match the file" + where);
    const int e = n < 0 ? static_cast<int>(-n) : EIO;
    return base::Status::os_error(e, shown_ + ": cannot read the source" + where + ": " + std::strerror(e));
  }
}

base::Result<OpenFile::Lines> OpenFile::trusted_lines() {
  for (;;) {
    Lines l = lines();
    if (!l.reader->distrusted()) return l;
    bool distrusted = false;
    const base::Result<bool> again = reopened_after(l.reader, &distrusted);
    MIBZ2_FORWARD_IF_ERROR(again);
    MIBZ2_RETURN_ERROR_IF(!*again, EIO, shown_ + ": the index does not match the file");
  }
}

base::Result<OpenFile::LineCount> OpenFile::line_count() {
  const base::Result<Lines> l = trusted_lines();
  MIBZ2_FORWARD_IF_ERROR(l);
  LineCount out{l->map->line_count(), {}};
  if (!out.count) out.unknown_why = shown_ + ": " + l->map->unknown_why();
  return out;
}

base::Result<uint64_t> OpenFile::line_start(uint64_t n) {
  for (;;) {
    const base::Result<Lines> l = trusted_lines();
    MIBZ2_FORWARD_IF_ERROR(l);
    const std::shared_ptr<engine::Reader>& r = l->reader;
    bool read_failed = false;
    const base::Result<uint64_t> start = l->map->line_start(n, [&](uint64_t offset, size_t length, uint8_t* out) {
      const ssize_t got = r->read(offset, length, out);
      if (got <= 0) read_failed = true;
      return got;
    });
    if (start.ok()) return start;
    if (read_failed) {
      // As read(): an index found wrong on the way is built again once, and the search starts
      // over with it (its counts may differ).
      bool distrusted = false;
      const base::Result<bool> again = reopened_after(r, &distrusted);
      MIBZ2_FORWARD_IF_ERROR(again);
      if (*again) continue;
      if (distrusted)
        return base::Status::error(EIO, shown_ + ": the index does not match the file (looking for line " +
                                            std::to_string(n) + ")");
    }
    return start.status().prefixed(shown_ + ": ");
  }
}

}  // namespace mibz2::python
