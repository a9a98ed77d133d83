#include "engine/reader.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "engine/engine.h"
#include "index/block_check.h"

namespace mibz2::engine {

Reader::Reader(Engine& engine, uint64_t file_id, std::string path, int fd, std::shared_ptr<const index::BlockIndex> index)
    : engine_(engine),
      file_id_(file_id),
      path_(std::move(path)),
      fd_(fd),
      index_(std::move(index)),
      source_(fd_, index_->source.size),
      readahead_(engine.readahead_limits()),
      damage_reported_(index_->blocks.size(), false) {}

Reader::~Reader() { close(fd_); }

ssize_t Reader::read(uint64_t offset, size_t length, uint8_t* out) {
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

  // The common case, a read inside one cached block: one shard lock, one copy, nothing else.
  if (first == last) {
    if (BlockRef ref = engine_.cache().lookup({file_id_, first})) {
      plan_readahead(offset, end, first, last);
      std::memcpy(out, ref->bytes.data() + (offset - idx.blocks[first].out_offset), end - offset);
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

  uint64_t pos = offset;
  uint8_t* dst = out;
  for (uint64_t b = first; b <= last; ++b) {
    BlockRef& ref = blocks[b - first];
    if (!ref) {
      std::shared_future<Outcome>& f = pending[b - first];
      if (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) add(st.waits);
      const Outcome& o = f.get();
      if (!o.block) return -o.error;
      ref = o.block;
    }
    const index::BlockRecord& r = idx.blocks[b];
    const uint64_t from = pos - r.out_offset;
    const uint64_t take = std::min<uint64_t>(ref->bytes.size() - from, end - pos);
    std::memcpy(dst, ref->bytes.data() + from, take);
    dst += take;
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

// A job holds its in-flight entry weakly: the in-flight table keeps it until its decode is done,
// and the copy of an upgraded job that a worker takes after the other did the decode must not keep
// the decoded block (up to 46 MB) alive while it waits in a queue behind other work.
void Reader::queue_decode(const std::shared_ptr<InFlight>& entry, uint64_t block, Priority priority) {
  engine_.pool().submit(priority, [self = shared_from_this(), weak = std::weak_ptr<InFlight>(entry),
                                   block](WorkerContext& ctx) {
    const std::shared_ptr<InFlight> f = weak.lock();
    if (!f || f->started.exchange(true)) return;  // the other copy of this job got it
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
  auto decoded = std::make_shared<DecodedBlock>();
  const index::BlockCheck c = index::check_block(*index_, block, source_, ctx.decoder, ctx.compressed, decoded->bytes);
  switch (c.kind) {
    case index::BlockCheck::kOk: break;
    case index::BlockCheck::kUnreadable:
      add(st.decode_errors);
      report_damage(block, c.why);
      return {nullptr, EIO};
    case index::BlockCheck::kMismatch: return mismatch(block, c.why);
  }
  add(st.decodes);
  add(st.bytes_decoded, decoded->bytes.size());
  return {std::move(decoded), 0};
}

Reader::Outcome Reader::mismatch(uint64_t block, const std::string& why) {
  add(engine_.stats().decode_errors);
  const std::string what = index::describe_block(*index_, block) + ": " + why;
  // The handler (the Catalog) says it once per index, with what was found; without one, say it
  // here, once per block as for damage.
  if (on_mismatch_) on_mismatch_(what);
  else report_damage(block, "the index does not match the source: " + why);
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
