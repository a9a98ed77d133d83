#include "engine/reader.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "engine/engine.h"
#include "bz2/block_scanner.h"
#include "bz2/stream_parser.h"
#include "io/fd_io.h"

namespace mibz2::engine {

Reader::Reader(Engine& engine, uint64_t file_id, std::string path, int fd, std::shared_ptr<const index::BlockIndex> index)
    : engine_(engine),
      file_id_(file_id),
      path_(std::move(path)),
      fd_(fd),
      index_(std::move(index)),
      readahead_(engine.readahead_limits()),
      damage_reported_(index_->blocks.size(), false) {}

Reader::~Reader() { close(fd_); }

ssize_t Reader::read(uint64_t offset, size_t length, uint8_t* out) {
  std::vector<Slice> slices;
  const ssize_t n = read_slices(offset, length, &slices);
  for (const Slice& s : slices) {
    std::memcpy(out, s.data, s.size);
    out += s.size;
  }
  return n;
}

ssize_t Reader::read_slices(uint64_t offset, size_t length, std::vector<Slice>* out) {
  EngineStats& st = engine_.stats();
  add(st.reads);
  const index::BlockIndex& idx = *index_;
  if (offset >= idx.decompressed_size || length == 0) return 0;
  uint64_t end = offset + std::min<uint64_t>(length, idx.decompressed_size - offset);
  const uint64_t first = idx.block_at(offset);
  uint64_t last = idx.block_at(end - 1);
  // Damaged blocks are never served (the Catalog logged them once for the file). A read that
  // starts in one fails; a read that runs into one stops short before it, so every verified byte
  // can be read and the next read meets the error.
  if (idx.blocks[first].damaged()) {
    add(st.damaged_reads);
    return -EIO;
  }
  for (uint64_t b = first + 1; b <= last; ++b) {
    if (idx.blocks[b].damaged()) {
      end = idx.blocks[b].out_offset;
      last = b - 1;
      break;
    }
  }

  // The common case, a read inside one cached block: one shard lock, nothing else.
  if (first == last) {
    if (BlockRef ref = engine_.cache().lookup({file_id_, first})) {
      plan_readahead(offset, end, first, last);
      const uint8_t* data = ref->bytes.data() + (offset - idx.blocks[first].out_offset);
      out->push_back(Slice{std::move(ref), data, static_cast<size_t>(end - offset)});
      add(st.bytes_read, end - offset);
      return static_cast<ssize_t>(end - offset);
    }
  }

  // Hits first, with no lock but the cache shard's; misses go to the slow path all at once, so
  // a read spanning several blocks has them decoded in parallel.
  const uint64_t n = last - first + 1;
  std::vector<BlockRef> blocks(n);
  std::vector<std::shared_future<Outcome>> pending(n);
  for (uint64_t b = first; b <= last; ++b) {
    // A one-block read has just missed above (counted once); request() looks again under its lock.
    if (first != last) blocks[b - first] = engine_.cache().lookup({file_id_, b});
    if (!blocks[b - first]) pending[b - first] = request(b);
  }
  plan_readahead(offset, end, first, last);

  const size_t old_size = out->size();
  uint64_t pos = offset;
  for (uint64_t b = first; b <= last; ++b) {
    BlockRef& ref = blocks[b - first];
    if (!ref) {
      std::shared_future<Outcome>& f = pending[b - first];
      if (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) add(st.waits);
      const Outcome& o = f.get();
      if (!o.block) {
        out->resize(old_size);
        return -o.error;
      }
      ref = o.block;
    }
    const index::BlockRecord& r = idx.blocks[b];
    const uint64_t from = pos - r.out_offset;
    const uint64_t take = std::min<uint64_t>(ref->bytes.size() - from, end - pos);
    const uint8_t* data = ref->bytes.data() + from;
    out->push_back(Slice{std::move(ref), data, static_cast<size_t>(take)});
    pos += take;
  }
  add(st.bytes_read, end - offset);
  return static_cast<ssize_t>(end - offset);
}

void Reader::plan_readahead(uint64_t offset, uint64_t end, uint64_t first, uint64_t last) {
  if (!engine_.options().readahead) return;
  const index::BlockIndex& idx = *index_;
  ReadAheadPlan plan;
  {
    // Read-ahead is a hint: when another reader of this file holds the policy, this read skips
    // it rather than wait (no reader ever queues behind another for it).
    std::unique_lock lk(readahead_mu_, std::try_to_lock);
    if (!lk.owns_lock()) return;
    plan = readahead_.on_read(offset, end - offset, first, last, idx.blocks.size(),
                              [&idx](uint64_t b) { return idx.block_size(b); });
  }
  for (uint64_t b = plan.first; b <= plan.last && !plan.empty(); ++b) {
    if (idx.blocks[b].damaged() || engine_.cache().contains({file_id_, b})) continue;
    if (!request_readahead(b)) return;  // the slow path is busy: this read does not wait for it
  }
}

std::shared_future<Reader::Outcome> Reader::request(uint64_t block) {
  std::shared_ptr<InFlight> f;
  bool start = false;
  bool upgrade = false;
  {
    std::lock_guard lk(inflight_mu_);
    // Re-check under the lock: the block may have landed since the caller's lookup. Decoders
    // insert into the cache before leaving the in-flight table, so one of the two has it.
    if (BlockRef ref = engine_.cache().lookup({file_id_, block}, /*count=*/false)) {
      std::promise<Outcome> p;
      p.set_value(Outcome{std::move(ref), 0});
      return p.get_future().share();
    }
    auto it = inflight_.find(block);
    if (it != inflight_.end()) {
      f = it->second;
      add(engine_.stats().inflight_joins);
      // A reader now waits for a block only queued as read-ahead: queue it again at demand
      // priority; whichever copy a worker takes first does the decode.
      upgrade = !f->demanded.exchange(true) && f->readahead && !f->started.load();
    } else {
      f = std::make_shared<InFlight>();
      f->future = f->promise.get_future().share();
      f->demanded = true;
      inflight_.emplace(block, f);
      start = true;
    }
  }
  if (start || upgrade) queue_decode(f, block, Priority::kDemand);
  return f->future;
}

bool Reader::request_readahead(uint64_t block) {
  std::shared_ptr<InFlight> f;
  {
    std::unique_lock lk(inflight_mu_, std::try_to_lock);
    if (!lk.owns_lock()) return false;
    if (engine_.cache().contains({file_id_, block}) || inflight_.count(block)) return true;
    f = std::make_shared<InFlight>();
    f->future = f->promise.get_future().share();
    f->readahead = true;
    inflight_.emplace(block, f);
  }
  add(engine_.stats().readahead_issued);
  queue_decode(f, block, Priority::kReadAhead);
  return true;
}

void Reader::queue_decode(const std::shared_ptr<InFlight>& f, uint64_t block, Priority priority) {
  engine_.pool().submit(priority, [self = shared_from_this(), f, block](WorkerContext& ctx) {
    if (f->started.exchange(true)) return;  // the other copy of this job got it
    Outcome o;
    try {
      o = self->decode(block, ctx);
    } catch (const std::exception& e) {
      // Out of memory for a huge block: this read fails; the readers waiting for it are told.
      self->report_damage(block, std::string("cannot decode: ") + e.what());
      o = {nullptr, EIO};
    }
    if (o.block) {
      const bool unread_ahead = f->readahead && !f->demanded.load();
      if (f->readahead && !unread_ahead) add(self->engine_.stats().readahead_used);
      self->engine_.cache().insert({self->file_id_, block}, o.block, unread_ahead);
    }
    {
      std::lock_guard lk(self->inflight_mu_);
      self->inflight_.erase(block);
    }
    f->promise.set_value(std::move(o));
  });
}

Reader::Outcome Reader::decode(uint64_t block, WorkerContext& ctx) {
  EngineStats& st = engine_.stats();
  const index::BlockIndex& idx = *index_;
  const index::BlockRecord& r = idx.blocks[block];
  // What must surround the block in the source, so that no index can leave a block out unseen
  // (records chain inside a stream; FORMAT.md): a stream's first block after a gap follows its
  // stream header, and a block the next record does not start right after is followed by an
  // end-of-stream marker. Both are read with the block, in the same request.
  const bool after_header = r.stream_start() && (block == 0 || idx.blocks[block - 1].end_bit() != r.start_bit());
  const bool before_end = block + 1 == idx.blocks.size() || idx.blocks[block + 1].start_bit() != r.end_bit();
  if (after_header && (r.start_bit() < bz2::kStreamHeaderBits || r.start_bit() % 8 != 0))
    return mismatch(block, "a stream's first block is not byte-aligned after its header");
  const uint64_t byte_begin = (r.start_bit() - (after_header ? bz2::kStreamHeaderBits : 0)) / 8;
  const uint64_t byte_end = (r.end_bit() + (before_end ? 48 : 0) + 7) / 8;
  ctx.compressed.resize_uninitialized(byte_end - byte_begin);
  const ssize_t got = io::pread_full(fd_, ctx.compressed.data(), byte_end - byte_begin, byte_begin);
  if (got != static_cast<ssize_t>(byte_end - byte_begin)) {
    add(st.decode_errors);
    report_damage(block, got < 0 ? std::string("cannot read the source: ") + std::strerror(static_cast<int>(-got))
                                 : "the source file is shorter than its index says (changed?)");
    return {nullptr, EIO};
  }
  const std::span<const uint8_t> bytes{ctx.compressed.data(), ctx.compressed.size()};
  const uint64_t start = r.start_bit() - byte_begin * 8;
  if (after_header) {
    int level = 0;
    if (bz2::classify_stream_start(bytes, 0, &level) != bz2::StreamStart::kStream || level != r.level())
      return mismatch(block, "no stream header before a stream's first block");
  }
  if (before_end && bz2::read48_at(bytes, start + r.bit_length) != bz2::kEndOfStreamMagic)
    return mismatch(block, "no end-of-stream marker after a stream's last block");
  auto decoded = std::make_shared<DecodedBlock>();
  const uint64_t expect = idx.block_size(block);
  // Exactly the known size, plus the little RLE1 reserves ahead of what it writes (so the buffer
  // never regrows and the cache's byte accounting is the memory really held).
  decoded->bytes.reserve_exact(expect + 4096);
  bz2::BlockResult res;
  const bz2::Error e = ctx.decoder.decode(bytes, start, r.level(), decoded->bytes, res);
  if (e) {
    add(st.decode_errors);
    report_damage(block, bz2::to_string(e));
    return {nullptr, EIO};
  }
  // Never serve bytes the index does not vouch for: its size, stored CRC and end as the index
  // recorded them (an index of another file, or a source changed in place).
  if (decoded->bytes.size() != expect || res.stored_crc != r.crc || res.end_bit != start + r.bit_length)
    return mismatch(block, "the block decodes to another size, CRC or length than its record says");
  add(st.decodes);
  add(st.bytes_decoded, expect);
  return {std::move(decoded), 0};
}

Reader::Outcome Reader::mismatch(uint64_t block, const std::string& why) {
  add(engine_.stats().decode_errors);
  report_damage(block, "the index does not match the source: " + why);
  if (on_mismatch_) on_mismatch_(why);
  return {nullptr, EIO};
}

void Reader::report_damage(uint64_t block, const std::string& why) {
  {
    std::lock_guard lk(damage_mu_);
    if (damage_reported_[block]) return;
    damage_reported_[block] = true;
  }
  spdlog::error("{}: {} cannot be read ({}): reads touching it fail with EIO", path_,
                index::describe_block(*index_, block), why);
}

}  // namespace mibz2::engine
