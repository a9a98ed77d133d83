#include "engine/reader.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>

#include <spdlog/spdlog.h>

#include "engine/engine.h"
#include "index/block_check.h"

namespace mibz2::engine {

Reader::Reader(Engine& engine, uint64_t file_id, std::string path, std::unique_ptr<io::Source> source,
               std::shared_ptr<const index::BlockIndex> index)
    : engine_(engine),
      file_id_(file_id),
      path_(std::move(path)),
      index_(std::move(index)),
      source_(std::move(source)),
      readahead_(engine.readahead_limits()) {}

Reader::~Reader() = default;

ssize_t Reader::read(uint64_t offset, size_t length, uint8_t* out, ReadFailure* why) {
  std::vector<Slice> slices;
  const ssize_t n = read_slices(offset, length, &slices, why);
  for (const Slice& s : slices) {
    std::memcpy(out, s.data, s.size);
    out += s.size;
  }
  return n;
}

ssize_t Reader::read_slices(uint64_t offset, size_t length, std::vector<Slice>* out, ReadFailure* why) {
  // The result comes through a promise, whose shared state outlives whichever side ends last; a
  // read that decoded nothing has set it before read_async returns, and the wait is then none.
  struct Result {
    std::promise<void> finished;
    ssize_t n = 0;
    ReadFailure why;
  };
  auto result = std::make_shared<Result>();
  std::future<void> finished = result->finished.get_future();
  read_async(offset, length, [result, out](ssize_t n, std::vector<Slice>& slices, const ReadFailure* why) {
    result->n = n;
    if (why) result->why = *why;
    for (Slice& s : slices) out->push_back(std::move(s));
    result->finished.set_value();
  });
  finished.wait();
  if (why && result->n < 0) *why = std::move(result->why);
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
  std::vector<Slice> parts;  // parts[i]: what the read returns of block first + i; each set by one arrival
  std::vector<uint64_t> positions;  // positions[i]: where parts[i] lies in the file; set with it
  std::atomic<size_t> missing{1};
  // The first failure: written by the one arrival that claimed it, before its own arrived(), so
  // the last arrival (acq_rel on `missing`) sees it.
  std::atomic<bool> failed{false};
  ReadFailure failure;
  ReadDone done;

  void fail(const ReadFailure& why) noexcept {
    if (!failed.exchange(true, std::memory_order_relaxed)) failure = why;
  }
  // Keeps the part of block first + i that the read returns: the block itself when the read
  // waits for nothing more (it replies at once), else a copy of the part (charged to the cache's
  // ledger, at most the read's length). A read waiting for other blocks never keeps whole blocks:
  // one the cache declined is charged to no one and must not outlive its decoder's hand-off, and
  // one the cache keeps would hold its room for as long as the read waits, behind a queue of
  // decodes. With blocks of 45 MB, 1 MiB reads held 45 MB each for up to 300 ms that way, during
  // which the cache could take no other block (declined, to be decoded again at the next read).
  void take(size_t i, BlockRef block, bool waiting) {
    // Placed where its check put it: the first part holds `offset`, each later one starts where
    // the one before ends (arrived() checks that they meet). Anything else means the index
    // changed since the block was checked.
    const uint64_t start = block->out_offset;
    const uint64_t pos = std::max(offset, start);
    if ((i == 0) != (start <= offset) || pos >= start + block->bytes.size()) {
      fail(reader->index_changed(first + i));
      return;
    }
    const uint64_t from = pos - start;
    const size_t n = static_cast<size_t>(std::min<uint64_t>(block->bytes.size() - from, end - pos));
    const uint8_t* data = block->bytes.data() + from;
    positions[i] = pos;
    if (!waiting) {
      parts[i] = Slice{std::move(block), data, n};
      return;
    }
    try {
      auto part = std::make_shared<DecodedBlock>();
      part->bytes.reserve_exact(n);
      part->bytes.append(data, n);
      part->charge_to(reader->engine_.cache().ledger());
      const uint8_t* copied = part->bytes.data();
      parts[i] = Slice{std::move(part), copied, n};
    } catch (const std::exception&) {
      // Out of memory for the copy: this read fails, as a decode out of memory does.
      fail(ReadFailure{ReadFailure::Kind::kNoMemory, first + i, ENOMEM, nullptr});
    }
  }
  // Whether the parts cover [offset, end) end to end, and the index was not cut short meanwhile.
  bool contiguous() const {
    uint64_t at = offset;
    for (size_t i = 0; i < parts.size(); ++i) {
      if (positions[i] != at) return false;
      at += parts[i].size;
    }
    return at == end && !reader->index_->revoked();
  }
  void arrived() {
    if (missing.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    std::vector<Slice> slices;
    // A mismatch found while this read waited (in one of its blocks or any other) ends it too.
    if (reader->distrusted()) fail(reader->distrust_failure());
    if (!failed.load(std::memory_order_relaxed) && !contiguous()) fail(reader->index_changed(first));
    if (failed.load(std::memory_order_relaxed)) {
      done(-failure.read_errno(), slices, &failure);
      return;
    }
    slices = std::move(parts);
    add(reader->engine_.stats().bytes_read, end - offset);
    done(static_cast<ssize_t>(end - offset), slices, nullptr);
  }
};

void Reader::read_async(uint64_t offset, size_t length, ReadDone done) {
  EngineStats& st = engine_.stats();
  add(st.reads);
  std::vector<Slice> none;
  const index::BlockIndex& idx = *index_;
  if (distrusted() || idx.revoked()) {
    const ReadFailure why = distrusted() ? distrust_failure() : index_changed(0);
    return done(-why.read_errno(), none, &why);
  }
  if (offset >= idx.decompressed_size || length == 0) return done(0, none, nullptr);
  uint64_t end = offset + std::min<uint64_t>(length, idx.decompressed_size - offset);
  const uint64_t first = idx.block_at(offset);
  uint64_t last = idx.block_at(end - 1);
  // Damaged blocks are never served (the Catalog logged them once for the file). A read that
  // starts in one fails; a read that runs into one stops short before it, so every verified byte
  // can be read and the next read meets the error.
  if (idx.blocks[first].damaged()) {
    add(st.damaged_reads);
    const ReadFailure why{ReadFailure::Kind::kDamaged, first, EIO, nullptr};
    return done(-EIO, none, &why);
  }
  for (uint64_t b = first + 1; b <= last; ++b) {
    if (idx.blocks[b].damaged()) {
      end = idx.blocks[b].out_offset;
      last = b - 1;
      break;
    }
  }

  // The common case, a read inside one cached block: one shard lock, and nothing else waited for
  // but what queueing read-ahead takes (plan_readahead: the pool's lock to submit, and the
  // policy's to give back what the busy in-flight mutex kept it from queueing).
  if (first == last) {
    if (BlockRef ref = engine_.cache().lookup({file_id_, first})) {
      // Placed where its check put it (DecodedBlock::out_offset), inside it whole, or not at all.
      if (offset < ref->out_offset || end > ref->out_offset + ref->bytes.size() || idx.revoked()) {
        const ReadFailure why = index_changed(first);
        return done(-why.read_errno(), none, &why);
      }
      plan_readahead(offset, end, first, last);
      const uint8_t* data = ref->bytes.data() + (offset - ref->out_offset);
      std::vector<Slice> slices{Slice{std::move(ref), data, static_cast<size_t>(end - offset)}};
      add(st.bytes_read, end - offset);
      return done(static_cast<ssize_t>(end - offset), slices, nullptr);
    }
  }

  // Hits first, with no lock but the cache shard's; misses go to the slow path all at once, so
  // a read spanning several blocks has them decoded in parallel.
  auto p = std::make_shared<PendingRead>();
  p->reader = shared_from_this();
  p->offset = offset;
  p->end = end;
  p->first = first;
  p->parts.resize(last - first + 1);
  p->positions.resize(last - first + 1);
  p->done = std::move(done);
  std::vector<uint64_t> misses;
  std::vector<BlockRef> hits(last - first + 1);
  for (uint64_t b = first; b <= last; ++b) {
    // A one-block read has just missed above (counted once); request() looks again under its lock.
    if (first != last) hits[b - first] = engine_.cache().lookup({file_id_, b});
    if (!hits[b - first]) misses.push_back(b);
  }
  for (size_t i = 0; i < hits.size(); ++i)
    if (hits[i]) p->take(i, std::move(hits[i]), /*waiting=*/!misses.empty());
  // From here on `done` is owed exactly once, whatever fails.
  try {
    for (const uint64_t b : misses) {
      p->missing.fetch_add(1, std::memory_order_relaxed);
      try {
        request(b, [p, i = b - first](const Outcome& o) {
          if (o.block) p->take(i, o.block, /*waiting=*/p->missing.load(std::memory_order_acquire) > 1);
          else p->fail(o.failure);
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
    p->fail(ReadFailure{ReadFailure::Kind::kNoMemory, first, ENOMEM, nullptr});
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
    const auto block_end = [&idx](uint64_t b) { return idx.blocks[b].out_offset + idx.block_size(b); };
    plan = readahead_.on_read(offset, end - offset, first, last, idx.blocks.size(),
                              [&idx](uint64_t b) { return idx.block_size(b); },
                              engine_.options().drop_behind ? std::function<uint64_t(uint64_t)>(block_end) : nullptr);
  }
  // Drop-behind: after the policy's lock (a leaf), as the cache takes its own.
  for (uint64_t b = plan.passed_first; b <= plan.passed_last && !plan.passed_empty(); ++b)
    engine_.cache().erase({file_id_, b});
  for (uint64_t b = plan.first; b <= plan.last && !plan.empty(); ++b) {
    if (idx.blocks[b].damaged() || engine_.cache().contains({file_id_, b})) continue;
    if (!request_readahead(b)) {
      // This read does not wait for the slow path; the stream's next read plans the rest again.
      // The policy's lock is waited for here: it guards a few lines of bookkeeping, and when the
      // slow path is busy another thread of the same reader is likely planning under it.
      std::lock_guard lk(readahead_mu_);
      readahead_.not_queued(plan, b);
      return;
    }
  }
}

void Reader::request(uint64_t block, Waiter waiter) {
  std::shared_ptr<InFlight> f;
  bool start = false;
  bool upgrade = false;
  std::shared_ptr<InFlight> next;  // a queued read-ahead block promoted to demand
  uint64_t next_block = 0;
  {
    std::unique_lock lk(inflight_mu_);
    // Re-check under the lock: the block may have landed since the caller's lookup. Decoders
    // insert into the cache before leaving the in-flight table, so one of the two has it.
    if (BlockRef ref = engine_.cache().lookup({file_id_, block}, /*count=*/false)) {
      lk.unlock();
      waiter(Outcome{std::move(ref), {}});
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
      // The decode this reader waits for is under way. The worker kept back from read-ahead
      // (decoder_pool.h) would sit idle while a sequential reader waits, and a sequential reader
      // through FUSE nearly always waits (it copies faster than one worker decodes): the next
      // block it will want, already queued as read-ahead, is asked for at demand priority now, so
      // every worker decodes for it (halving cat's rate on two cores otherwise: 140 against 250 MB/s).
      if (f->started.load()) next = promote_next_readahead_locked(block, &next_block);
    } else {
      f = std::make_shared<InFlight>();
      f->demanded = true;
      f->waiters.push_back(std::move(waiter));
      inflight_.emplace(block, f);
      start = true;
    }
  }
  try {
    if (next) queue_decode(next, next_block, Priority::kDemand);
  } catch (const std::exception& e) {
    // Its read-ahead job is still queued and decodes it.
    spdlog::warn("{}: cannot queue the decode of block {}: {}", path_, next_block, e.what());
  }
  if (!start && !upgrade) return;
  try {
    queue_decode(f, block, Priority::kDemand);
  } catch (const std::exception& e) {
    // Out of memory queueing the job. A new decode: nothing will run it, so its waiters are told
    // now. An upgrade: the read-ahead job already queued still decodes it. The message allocates
    // nothing outside spdlog (which catches its own failures): nothing may throw past complete().
    if (start) complete(f, block, failed(ReadFailure::Kind::kNoMemory, block, ENOMEM));
    spdlog::error("{}: cannot queue the decode of block {}: {}", path_, block, e.what());
  }
}

std::shared_ptr<Reader::InFlight> Reader::promote_next_readahead_locked(uint64_t block, uint64_t* promoted) {
  // The nearest of the next few blocks (an lbzip2 file alternates a full block with a tiny one).
  constexpr uint64_t kLookAhead = 2;
  for (uint64_t b = block + 1; b <= block + kLookAhead; ++b) {
    auto it = inflight_.find(b);
    if (it == inflight_.end()) continue;
    InFlight& g = *it->second;
    if (!g.readahead || g.started.load()) continue;
    if (g.demanded.exchange(true)) return nullptr;  // a reader asked for it already
    *promoted = b;
    return it->second;
  }
  return nullptr;
}

void Reader::complete(const std::shared_ptr<InFlight>& f, uint64_t block, const Outcome& outcome, bool finish) {
  std::vector<Waiter> waiters;
  {
    std::lock_guard lk(inflight_mu_);
    auto it = inflight_.find(block);
    if (finish && it != inflight_.end() && it->second == f) inflight_.erase(it);
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
  try {
    queue_decode(f, block, Priority::kReadAhead);
  } catch (const std::exception& e) {
    // Out of memory queueing the job: nothing will run it, so it leaves the in-flight table (a
    // reader that joined it meanwhile is told, as for a demand decode) and is planned again.
    // The message allocates nothing outside spdlog (which catches its own failures).
    complete(f, block, failed(ReadFailure::Kind::kNoMemory, block, ENOMEM));
    spdlog::warn("{}: cannot queue the read-ahead of block {}: {}", path_, block, e.what());
    return false;
  }
  add(engine_.stats().readahead_issued);
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
    // From here the entry is this job's to complete, whatever fails: left in the in-flight table
    // as started, it would make every later read of the block join it and wait for good.
    Outcome o = failed(ReadFailure::Kind::kNoMemory, block, ENOMEM);
    try {
      o = self->decode(block, ctx);
    } catch (const std::exception& e) {
      // Out of memory for a huge block: this read fails; the readers waiting for it are told.
      self->report_damage_noexcept(block, "cannot decode: ", e.what());
    }
    if (o.block) {
      const bool unread_ahead = f->readahead && !f->demanded.load();
      if (f->readahead && !unread_ahead) add(self->engine_.stats().readahead_used);
      auto cache = [&](bool last_try) {
        try {
          return self->engine_.cache().insert({self->file_id_, block}, o.block, unread_ahead, last_try);
        } catch (const std::exception&) {
          return true;  // out of memory to cache it: the waiting readers still get the block
        }
      };
      if (!cache(false)) {
        // Declined: readers held the cache's room, most often the replies another worker was
        // writing from the block this one would have evicted. The waiters are served first (the
        // block still in the in-flight table, so that readers who come meanwhile join it rather
        // than decode it again), then it is offered once more: those replies are done by then, as
        // a rule. Until then it is this thread's one block (man mibz2fs, MEMORY).
        self->complete(f, block, o, /*finish=*/false);
        cache(true);
      }
    }
    self->complete(f, block, o);
  });
}

Reader::Outcome Reader::decode(uint64_t block, WorkerContext& ctx) {
  EngineStats& st = engine_.stats();
  auto decoded = std::make_shared<DecodedBlock>();
  const index::BlockCheck c = index::check_block(*index_, block, *source_, ctx.decoder, ctx.compressed, decoded->bytes);
  switch (c.kind) {
    case index::BlockCheck::kOk: break;
    case index::BlockCheck::kReadError:
      // Neither damage nor a mismatch: nothing is known of the block, and the index stands. This
      // read fails (EIO); nothing is cached, so the next read of the block tries again.
      add(st.read_errors);
      report_read_error(block, c.why.message());
      return failed(ReadFailure::Kind::kReadError, block, c.why.code(),
                    std::make_shared<const std::string>(c.why.message()));
    case index::BlockCheck::kMismatch: return mismatch(block, c.why.message());
  }
  decoded->out_offset = c.out_offset;
  if (read_errors_reported_.load(std::memory_order_relaxed) != 0) {
    std::lock_guard lk(report_mu_);
    read_errors_reported_.fetch_sub(read_error_reported_.erase(block), std::memory_order_relaxed);
  }
  add(st.decodes);
  add(st.bytes_decoded, decoded->bytes.size());
  return {std::move(decoded), {}};
}

Reader::Outcome Reader::mismatch(uint64_t block, const std::string& why) {
  return distrust(block, std::make_shared<const std::string>(index::describe_block(*index_, block) + ": " + why), why);
}

ReadFailure Reader::index_changed(uint64_t block) noexcept {
  try {
    const std::string why = index_->revoked() ? "the index file was cut short while it was in use"
                                              : "the index changed while it was in use";
    return distrust(block, std::make_shared<const std::string>(why), why).failure;
  } catch (...) {
    return ReadFailure{ReadFailure::Kind::kIndexMismatch, block, EIO, nullptr};
  }
}

Reader::Outcome Reader::distrust(uint64_t block, std::shared_ptr<const std::string> what, const std::string& why) {
  if (!mismatch_claimed_.exchange(true, std::memory_order_relaxed)) {
    mismatch_block_ = block;
    mismatch_what_ = what;
    distrusted_.store(true, std::memory_order_release);
  }
  add(engine_.stats().decode_errors);
  // The handler (the Catalog) says it once per index, with what was found; without one, say it
  // here, once per block as for damage.
  if (on_mismatch_) on_mismatch_(*what);
  else report_damage(block, "the index does not match the source: " + why);
  return failed(ReadFailure::Kind::kIndexMismatch, block, EIO, std::move(what));
}

ReadFailure Reader::distrust_failure() const {
  // distrusted_ (acquire) was seen set: the first mismatch's block and words were written before.
  return ReadFailure{ReadFailure::Kind::kIndexMismatch, mismatch_block_, EIO, mismatch_what_};
}

void Reader::report_read_error(uint64_t block, const std::string& why) {
  // Once per block until it is read again (a lasting fault does not flood the log; one that comes
  // back after a good read is said again).
  {
    std::lock_guard lk(report_mu_);
    if (!read_error_reported_.insert(block).second) return;
    read_errors_reported_.fetch_add(1, std::memory_order_relaxed);
  }
  spdlog::error("{}: read error in the source, {}: {}; reads of it fail with EIO until the source can be read",
                path_, index::describe_block(*index_, block), why);
}

void Reader::report_damage_noexcept(uint64_t block, const char* what, const char* detail) noexcept {
  try {
    report_damage(block, std::string(what) + detail);
  } catch (...) {
    // Out of memory even for the message: the readers still get their EIO.
  }
}

void Reader::report_damage(uint64_t block, const std::string& why) {
  {
    std::lock_guard lk(report_mu_);
    if (!damage_reported_.insert(block).second) return;
  }
  spdlog::error("{}: {} cannot be read ({}): reads touching it fail with EIO", path_,
                index::describe_block(*index_, block), why);
}

}  // namespace mibz2::engine
