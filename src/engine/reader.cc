#include "engine/reader.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>

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
  // The result comes through a promise, whose shared state outlives whichever side ends last; a
  // read that decoded nothing has set it before read_async returns, and the wait is then none.
  struct Result {
    std::promise<void> finished;
    ssize_t n = 0;
  };
  auto result = std::make_shared<Result>();
  std::future<void> finished = result->finished.get_future();
  read_async(offset, length, [result, out](ssize_t n, std::vector<Slice>& slices) {
    result->n = n;
    for (Slice& s : slices) out->push_back(std::move(s));
    result->finished.set_value();
  });
  finished.wait();
  return result->n;
}

// A read waiting for its missing blocks: each arrives from its decode (or with an error); the last
// to arrive (the read itself counts as one, so that nothing ends before every block was asked
// for) hands the slices to `done`.
struct Reader::PendingRead {
  std::shared_ptr<Reader> reader;
  uint64_t offset = 0;
  uint64_t end = 0;
  uint64_t first = 0;
  std::vector<BlockRef> blocks;  // blocks[i] is block first + i; each written by one arrival
  std::atomic<size_t> missing{1};
  std::atomic<int> error{0};
  ReadDone done;

  void fail(int e) {
    int none = 0;
    error.compare_exchange_strong(none, e, std::memory_order_relaxed);
  }
  void arrived() {
    if (missing.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    std::vector<Slice> slices;
    if (const int e = error.load(std::memory_order_relaxed)) {
      done(-e, slices);
      return;
    }
    const index::BlockIndex& idx = *reader->index_;
    slices.reserve(blocks.size());
    uint64_t pos = offset;
    for (size_t i = 0; i < blocks.size(); ++i) {
      const uint64_t from = pos - idx.blocks[first + i].out_offset;
      const uint64_t take = std::min<uint64_t>(blocks[i]->bytes.size() - from, end - pos);
      const uint8_t* data = blocks[i]->bytes.data() + from;
      slices.push_back(Slice{std::move(blocks[i]), data, static_cast<size_t>(take)});
      pos += take;
    }
    add(reader->engine_.stats().bytes_read, end - offset);
    done(static_cast<ssize_t>(end - offset), slices);
  }
};

void Reader::read_async(uint64_t offset, size_t length, ReadDone done) {
  EngineStats& st = engine_.stats();
  add(st.reads);
  std::vector<Slice> none;
  const index::BlockIndex& idx = *index_;
  if (offset >= idx.decompressed_size || length == 0) return done(0, none);
  uint64_t end = offset + std::min<uint64_t>(length, idx.decompressed_size - offset);
  const uint64_t first = idx.block_at(offset);
  uint64_t last = idx.block_at(end - 1);
  // Damaged blocks are never served (the Catalog logged them once for the file). A read that
  // starts in one fails; a read that runs into one stops short before it, so every verified byte
  // can be read and the next read meets the error.
  if (idx.blocks[first].damaged()) {
    add(st.damaged_reads);
    return done(-EIO, none);
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
      std::vector<Slice> slices{Slice{std::move(ref), data, static_cast<size_t>(end - offset)}};
      add(st.bytes_read, end - offset);
      return done(static_cast<ssize_t>(end - offset), slices);
    }
  }

  // Hits first, with no lock but the cache shard's; misses go to the slow path all at once, so
  // a read spanning several blocks has them decoded in parallel.
  auto p = std::make_shared<PendingRead>();
  p->reader = shared_from_this();
  p->offset = offset;
  p->end = end;
  p->first = first;
  p->blocks.resize(last - first + 1);
  p->done = std::move(done);
  std::vector<uint64_t> misses;
  for (uint64_t b = first; b <= last; ++b) {
    // A one-block read has just missed above (counted once); request() looks again under its lock.
    if (first != last) p->blocks[b - first] = engine_.cache().lookup({file_id_, b});
    if (!p->blocks[b - first]) misses.push_back(b);
  }
  // From here on `done` is owed exactly once, whatever fails.
  try {
    for (const uint64_t b : misses) {
      p->missing.fetch_add(1, std::memory_order_relaxed);
      try {
        request(b, [p, i = b - first](const Outcome& o) {
          if (o.block) p->blocks[i] = o.block;
          else p->fail(o.error);
          p->arrived();
        });
      } catch (...) {
        p->missing.fetch_sub(1, std::memory_order_relaxed);  // this block was never asked for
        throw;
      }
    }
    plan_readahead(offset, end, first, last);
  } catch (const std::exception& e) {
    spdlog::error("{}: a read failed: {}", path_, e.what());
    p->fail(EIO);
  }
  p->arrived();
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

void Reader::request(uint64_t block, Waiter waiter) {
  std::shared_ptr<InFlight> f;
  bool start = false;
  bool upgrade = false;
  {
    std::unique_lock lk(inflight_mu_);
    // Re-check under the lock: the block may have landed since the caller's lookup. Decoders
    // insert into the cache before leaving the in-flight table, so one of the two has it.
    if (BlockRef ref = engine_.cache().lookup({file_id_, block}, /*count=*/false)) {
      lk.unlock();
      waiter(Outcome{std::move(ref), 0});
      return;
    }
    add(engine_.stats().waits);
    auto it = inflight_.find(block);
    if (it != inflight_.end()) {
      f = it->second;
      f->waiters.push_back(std::move(waiter));
      add(engine_.stats().inflight_joins);
      // A reader now waits for a block only queued as read-ahead: queue it again at demand
      // priority; whichever copy a worker takes first does the decode.
      upgrade = !f->demanded.exchange(true) && f->readahead && !f->started.load();
    } else {
      f = std::make_shared<InFlight>();
      f->demanded = true;
      f->waiters.push_back(std::move(waiter));
      inflight_.emplace(block, f);
      start = true;
    }
  }
  if (!start && !upgrade) return;
  try {
    queue_decode(f, block, Priority::kDemand);
  } catch (const std::exception& e) {
    // Out of memory queueing the job. A new decode: nothing will run it, so its waiters are told
    // now. An upgrade: the read-ahead job already queued still decodes it.
    spdlog::error("{}: cannot queue the decode of {}: {}", path_, index::describe_block(*index_, block), e.what());
    if (start) complete(f, block, Outcome{nullptr, ENOMEM});
  }
}

void Reader::complete(const std::shared_ptr<InFlight>& f, uint64_t block, const Outcome& outcome) {
  std::vector<Waiter> waiters;
  {
    std::lock_guard lk(inflight_mu_);
    auto it = inflight_.find(block);
    if (it != inflight_.end() && it->second == f) inflight_.erase(it);
    waiters.swap(f->waiters);
  }
  for (Waiter& w : waiters) {
    // A waiter ends a read (a FUSE reply); one that fails must not keep the others unanswered.
    try {
      w(outcome);
    } catch (const std::exception& e) {
      spdlog::error("{}: a read waiting for {} failed: {}", path_, index::describe_block(*index_, block), e.what());
    }
  }
}

bool Reader::request_readahead(uint64_t block) {
  std::shared_ptr<InFlight> f;
  {
    std::unique_lock lk(inflight_mu_, std::try_to_lock);
    if (!lk.owns_lock()) return false;
    if (engine_.cache().contains({file_id_, block}) || inflight_.count(block)) return true;
    f = std::make_shared<InFlight>();
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
    self->complete(f, block, o);
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
