#include "open_file.h"

#include <cerrno>
#include <cstring>

#include "index/block_index.h"

namespace mibz2::python {

base::Result<std::unique_ptr<OpenFile>> OpenFile::open(std::shared_ptr<Session> session, engine::FileRef file,
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

uint64_t OpenFile::size() const { return reader()->size(); }

base::Status OpenFile::reopen() {
  const engine::IndexStatus got = session_->obtain(file_, false, {});
  if (!got.ready()) return got.error.prefixed(shown_ + ": ");
  base::Result<std::shared_ptr<engine::Reader>> opened = session_->catalog().open(file_);
  if (!opened.ok()) return opened.status().prefixed(shown_ + ": ");
  std::lock_guard lk(mu_);
  reader_ = std::move(opened).value();
  return {};
}

base::Result<size_t> OpenFile::read(uint64_t offset, size_t length, uint8_t* out) {
  for (;;) {
    const std::shared_ptr<engine::Reader> r = reader();
    if (length == 0 || offset >= r->size()) return size_t{0};
    const ssize_t n = r->read(offset, length, out);
    if (n > 0) return static_cast<size_t>(n);
    // Nothing read at `offset`: damage, a wrong index, or the source cannot be read.
    const bool distrusted = r->distrusted() || session_->catalog().status(file_).index.get() != &r->index();
    if (distrusted) {
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
        continue;
      }
      if (reader() != r) continue;  // another thread reopened it meanwhile
    }
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

}  // namespace mibz2::python
