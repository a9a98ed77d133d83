#include "index/block_stream.h"

#include <algorithm>

namespace mibz2::index {

BlockStream::BlockStream(uint64_t max_bytes, std::function<void()> on_room)
    : max_bytes_(std::max<uint64_t>(max_bytes, 1)), on_room_(std::move(on_room)) {}

bool BlockStream::next(Block* out) {
  {
    std::unique_lock lk(mu_);
    ready_.wait(lk, [this] { return !blocks_.empty() || finished_; });
    if (blocks_.empty()) return false;
    *out = std::move(blocks_.front());
    blocks_.pop_front();
    queued_bytes_.fetch_sub(out->bytes.size(), std::memory_order_relaxed);
  }
  if (on_room_) on_room_();
  return true;
}

bool BlockStream::has_room(uint64_t unresolved_bytes, size_t decoding) const {
  const uint64_t queued = queued_bytes_.load(std::memory_order_relaxed);
  if (queued == 0 && decoding == 0) return true;  // the consumer waits and nothing else will come
  return queued + unresolved_bytes < max_bytes_;
}

void BlockStream::on_block(size_t block, const BlockRecord& record, base::ByteBuffer bytes) {
  {
    std::lock_guard lk(mu_);
    queued_bytes_.fetch_add(bytes.size(), std::memory_order_relaxed);
    blocks_.push_back(Block{std::move(bytes), block, record});
  }
}

// The consumer waits for blocks_ under mu_, so a block pushed before this call is never missed.
void BlockStream::blocks_handed() { ready_.notify_one(); }

void BlockStream::on_finished() {
  {
    std::lock_guard lk(mu_);
    finished_ = true;
  }
  ready_.notify_all();
}

}  // namespace mibz2::index
