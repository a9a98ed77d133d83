#include "index/block_stream.h"

#include <algorithm>

namespace mibz2::index {

BlockStream::BlockStream(size_t max_blocks, std::function<void()> on_room)
    : max_blocks_(std::max<size_t>(max_blocks, 1)), on_room_(std::move(on_room)) {}

bool BlockStream::next(Block* out) {
  {
    std::unique_lock lk(mu_);
    ready_.wait(lk, [this] { return !blocks_.empty() || finished_; });
    if (blocks_.empty()) return false;
    *out = std::move(blocks_.front());
    blocks_.pop_front();
    queued_.store(blocks_.size(), std::memory_order_relaxed);
  }
  if (on_room_) on_room_();
  return true;
}

bool BlockStream::has_room() const { return queued_.load(std::memory_order_relaxed) < max_blocks_; }

void BlockStream::on_block(size_t block, const BlockRecord& record, bz2::ByteBuffer bytes) {
  {
    std::lock_guard lk(mu_);
    blocks_.push_back(Block{std::move(bytes), block, record});
    queued_.store(blocks_.size(), std::memory_order_relaxed);
  }
  ready_.notify_one();
}

void BlockStream::on_finished() {
  {
    std::lock_guard lk(mu_);
    finished_ = true;
  }
  ready_.notify_all();
}

}  // namespace mibz2::index
