// The decoded blocks of an index build, handed to one consumer in file order: what `mibz2 cat`
// writes when a file has no index yet, so that one parallel pass both decodes the file and leaves
// its index behind. It is the build's ResolvedBlockSink: the builder hands it each block as
// resolution fixes it, and it holds decoded bytes for the consumer up to a budget in bytes (with
// what the builder holds decoded ahead of resolution), so decoding pauses (the builder's
// backpressure) while the consumer is behind. Bytes, not blocks: one block can expand to 46 MB.
// What is held can pass the budget by the blocks being decoded when it was reached (at most one
// per decoding thread) and by one block when a single block is larger than the budget.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>

#include "base/byte_buffer.h"
#include "index/index_builder.h"

namespace mibz2::index {

class BlockStream final : public ResolvedBlockSink {
 public:
  struct Block {
    base::ByteBuffer bytes;  // the decoded bytes (empty for a damaged block)
    size_t number = 0;      // its number in the index
    BlockRecord record{};   // its record: damaged() says its bytes must not be served
    bool damaged() const { return record.damaged(); }
  };

  // `on_room`: called (on the consumer's thread, no lock held) after the consumer took a block,
  // so that the build's driver can start the decodes the freed room allows.
  BlockStream(uint64_t max_bytes, std::function<void()> on_room);

  // Waits for the next block; false when there is none left (the build finished).
  bool next(Block* out);

  // ResolvedBlockSink (called by the builder under its lock, but blocks_handed()).
  bool has_room(uint64_t unresolved_bytes, size_t decoding) const override;
  void on_block(size_t block, const BlockRecord& record, base::ByteBuffer bytes) override;
  void on_finished() override;
  void blocks_handed() override;

 private:
  const uint64_t max_bytes_;
  const std::function<void()> on_room_;
  std::atomic<uint64_t> queued_bytes_{0};  // bytes of blocks_, readable without mu_ by has_room()
  mutable std::mutex mu_;          // after the builder's in the lock order; guards the two below
  std::condition_variable ready_;  // the consumer waits here
  std::deque<Block> blocks_;
  bool finished_ = false;
};

}  // namespace mibz2::index
