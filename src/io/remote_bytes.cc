#include "io/remote_bytes.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include "io/range_cache.h"
#include "io/sequential_reads.h"

namespace mibz2::io {
namespace {

uint64_t round_down(uint64_t v, uint64_t unit) { return v / unit * unit; }
uint64_t round_up(uint64_t v, uint64_t unit) { return (v + unit - 1) / unit * unit; }

using ExtentList = std::vector<std::shared_ptr<Extent>>;

}  // namespace

// What the source's reads and its read-ahead requests share: read-ahead requests hold it, so it
// lives until the last of them ends, after the RemoteBytes that made them is gone.
struct RemoteBytes::State : std::enable_shared_from_this<State> {
  State(HttpClient* client, RemoteObject object, ObjectInfo info, RemoteBytesOptions options)
      : client(client),
        object(std::move(object)),
        info(std::move(info)),
        options(options),
        cache(std::max(options.cache_bytes, options.readahead_bytes + options.request_bytes)) {}

  SourceRead read(uint64_t offset, size_t len, uint8_t* out);
  // Makes fetching extents for the gap [begin, end) of a read (widened to pages where nothing is
  // in the way, cut into requests of request_bytes), appended to `plan` and `fetches`.
  void plan_gap_locked(uint64_t begin, uint64_t end, ExtentList& plan, ExtentList& fetches);
  // Fetching extents for what no extent holds of [front, front + readahead_bytes), as many as
  // may be in flight, appended to `fetches`.
  void readahead_locked(uint64_t front, ExtentList& fetches);
  // Requests the extent's bytes (no lock held), and makes it ready or failed.
  void fetch(const std::shared_ptr<Extent>& e);
  // Hands the extents to the fetch pool.
  void submit(const ExtentList& fetches);

  HttpClient* const client;  // RemoteBytes::client_ keeps it; its pool outlives every request
  const RemoteObject object;
  const ObjectInfo info;
  const RemoteBytesOptions options;
  std::atomic<bool> cancel{false};  // the source is closed: its requests stop

  std::mutex mu;  // a leaf lock, never held across a request; guards everything below
  RangeCache cache;
  SequentialReads streams;
  bool changed = false;
  base::Status last_failure;
  size_t readahead_in_flight = 0;
  bool readahead_live = false;  // a sequential reader was seen: read-ahead is kept topped up
  uint64_t readahead_front = 0;
  uint64_t readahead_window = 0;  // how far ahead of the front: grows with the reader
  RemoteBytesStats stats;
};

SourceRead RemoteBytes::State::read(uint64_t offset, size_t len, uint8_t* out) {
  const uint64_t end = offset + len;
  ExtentList plan;     // the extents that hold [offset, end), in order
  ExtentList fetches;  // the new ones: the first fetched by this thread, the rest by the pool
  ExtentList ahead;    // read-ahead
  {
    std::lock_guard lk(mu);
    ++stats.reads;
    if (changed) return SourceRead::changed_failure(offset, len);
    const SequentialReads::Seen seen = streams.note(offset, end);
    try {
      for (const RangeCache::Piece& p : cache.cover(offset, end)) {
        if (p.extent) plan.push_back(p.extent);
        else plan_gap_locked(p.begin, p.end, plan, fetches);
      }
      if ((seen.sequential || options.in_order) && options.readahead_bytes) {
        readahead_live = true;
        readahead_front = seen.front;
        // As far ahead as the stream has come, up to readahead_bytes: a reader that stops soon
        // after it looked sequential has little fetched for nothing. One known to read it all
        // (in_order) gets the whole window at once.
        readahead_window = options.in_order ? options.readahead_bytes
                                            : std::min<uint64_t>(options.readahead_bytes, 2 * seen.covered);
        readahead_locked(seen.front, ahead);
      }
    } catch (const std::bad_alloc&) {
      // Nobody else has seen the extents made so far (the lock was held): they go unfetched.
      for (const auto& e : fetches) cache.drop(e);
      for (const auto& e : ahead) cache.drop(e);
      readahead_in_flight -= ahead.size();
      return SourceRead::failure(ENOMEM, offset, len);
    }
  }
  submit(ahead);
  if (fetches.size() > 1) submit(ExtentList(fetches.begin() + 1, fetches.end()));
  if (!fetches.empty()) fetch(fetches.front());
  for (const std::shared_ptr<Extent>& e : plan) {
    {
      std::unique_lock lk(mu);
      e->done.wait(lk, [&] { return e->state != Extent::State::kFetching; });
      if (e->state == Extent::State::kFailed) return e->failure;
      cache.touch(*e);
    }
    // A ready extent's bytes never change again: copied without the lock (the shared_ptr keeps
    // them should the extent be evicted meanwhile).
    const uint64_t from = std::max(offset, e->begin);
    const uint64_t to = std::min(end, e->end);
    std::memcpy(out + (from - offset), e->bytes.get() + (from - e->begin), to - from);
  }
  return {len};
}

void RemoteBytes::State::plan_gap_locked(uint64_t begin, uint64_t end, ExtentList& plan, ExtentList& fetches) {
  const auto [low, high] = cache.room_around(begin, end);
  const uint64_t page = std::max<size_t>(options.page_bytes, 1);
  const uint64_t from = std::max(low, round_down(begin, page));
  const uint64_t to = std::min({high, round_up(end, page), info.size});
  const uint64_t piece = std::max<size_t>(options.request_bytes, page);
  for (uint64_t at = from; at < to;) {
    // The last piece takes what is left when that is less than half a piece: no small request.
    uint64_t next = to - at < piece + piece / 2 ? to : at + piece;
    std::shared_ptr<Extent> e = cache.add(at, next, /*readahead=*/false);
    ++stats.fetches;
    plan.push_back(e);
    fetches.push_back(std::move(e));
    at = next;
  }
}

void RemoteBytes::State::readahead_locked(uint64_t front, ExtentList& fetches) {
  const uint64_t limit = std::min<uint64_t>(info.size, front + readahead_window);
  if (front >= limit) return;
  const uint64_t page = std::max<size_t>(options.page_bytes, 1);
  for (const RangeCache::Piece& p : cache.cover(front, limit)) {
    if (p.extent) continue;
    for (uint64_t at = p.begin; at < p.end;) {
      if (readahead_in_flight >= options.readahead_requests) return;
      const uint64_t high = cache.room_around(at, at + 1).second;
      const uint64_t next = std::min({round_up(std::min<uint64_t>(p.end, at + options.request_bytes), page), high,
                                      info.size});
      if (!cache.make_room(next - at)) return;  // the cache is full of what readers still use
      std::shared_ptr<Extent> e = cache.add(at, next, /*readahead=*/true);
      ++readahead_in_flight;
      ++stats.fetches;
      ++stats.readahead_fetches;
      fetches.push_back(std::move(e));
      at = next;
    }
  }
}

void RemoteBytes::State::submit(const ExtentList& fetches) {
  for (const std::shared_ptr<Extent>& e : fetches)
    client->fetch_pool().submit([self = shared_from_this(), e] { self->fetch(e); });
}

void RemoteBytes::State::fetch(const std::shared_ptr<Extent>& e) {
  base::Status s;
  if (cancel.load(std::memory_order_relaxed)) {
    s = base::Status::error(ECANCELED, object.shown + ": closed");
  } else {
    try {
      s = client->get_range(object, e->begin, e->size(), e->bytes.get(), info, &cancel);
    } catch (const std::bad_alloc&) {  // no exception leaves a pool thread
      s = base::Status::error(ENOMEM, object.shown + ": out of memory for a request");
    }
  }
  ExtentList more;
  {
    std::lock_guard lk(mu);
    if (e->readahead) --readahead_in_flight;
    if (s.ok()) {
      cache.ready(e);
      stats.fetched_bytes += e->size();
    } else {
      ++stats.failed_fetches;
      if (s.code() == ESTALE) {
        changed = true;
        e->failure = SourceRead::changed_failure(e->begin, e->size());
        cache.clear_ready();
      } else {
        e->failure = SourceRead::failure(s.code(), e->begin, e->size());
      }
      if (s.code() != ECANCELED) last_failure = s;
      e->state = Extent::State::kFailed;
      cache.drop(e);
    }
    e->done.notify_all();
    // Keeps readahead_requests in flight ahead of the reader while it waits for one of them.
    if (s.ok() && e->readahead && readahead_live && !changed && !cancel.load(std::memory_order_relaxed)) {
      try {
        readahead_locked(readahead_front, more);
      } catch (const std::bad_alloc&) {
        // No more read-ahead now; the reader's next read tries again.
      }
    }
  }
  submit(more);
}

RemoteBytes::RemoteBytes(std::shared_ptr<HttpClient> client, RemoteObject object, ObjectInfo info,
                         RemoteBytesOptions options)
    : SourceBytes(info.size),
      client_(std::move(client)),
      state_(std::make_shared<State>(client_.get(), std::move(object), std::move(info), options)) {}

RemoteBytes::~RemoteBytes() { state_->cancel.store(true, std::memory_order_relaxed); }

const RemoteObject& RemoteBytes::object() const { return state_->object; }
const ObjectInfo& RemoteBytes::info() const { return state_->info; }

bool RemoteBytes::changed() const {
  std::lock_guard lk(state_->mu);
  return state_->changed;
}

base::Status RemoteBytes::last_failure() const {
  std::lock_guard lk(state_->mu);
  return state_->last_failure;
}

RemoteBytesStats RemoteBytes::stats() const {
  std::lock_guard lk(state_->mu);
  return state_->stats;
}

SourceRead RemoteBytes::read_at(uint64_t offset, size_t len, uint8_t* out) const {
  if (len == 0) return {};
  return state_->read(offset, len, out);
}

base::Result<StatedObject> stat_remote_object(HttpClient& client, std::string_view url, const S3Options& s3) {
  base::Result<SourceUrl> parsed = parse_source_url(url);
  MIBZ2_FORWARD_IF_ERROR(parsed);
  std::optional<S3Settings> settings;
  if (parsed->is_s3()) {
    base::Result<S3Settings> resolved = resolve_s3_settings(s3);
    MIBZ2_FORWARD_IF_ERROR(resolved);
    settings = std::move(*resolved);
  }
  base::Result<RemoteObject> object = remote_object(*parsed, settings ? &*settings : nullptr);
  MIBZ2_FORWARD_IF_ERROR(object);
  base::Result<ObjectInfo> info = client.stat(*object);
  MIBZ2_FORWARD_IF_ERROR(info);
  return StatedObject{std::move(*object), std::move(*info)};
}

base::Result<std::unique_ptr<RemoteBytes>> open_remote_bytes(std::shared_ptr<HttpClient> client, std::string_view url,
                                                             const S3Options& s3, RemoteBytesOptions options) {
  base::Result<StatedObject> stated = stat_remote_object(*client, url, s3);
  MIBZ2_FORWARD_IF_ERROR(stated);
  return std::make_unique<RemoteBytes>(std::move(client), std::move(stated->object), std::move(stated->info), options);
}

}  // namespace mibz2::io
