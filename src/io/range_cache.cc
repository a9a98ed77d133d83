#include "io/range_cache.h"

#include <algorithm>
#include <limits>

namespace mibz2::io {

std::vector<RangeCache::Piece> RangeCache::cover(uint64_t begin, uint64_t end) const {
  std::vector<Piece> pieces;
  auto it = extents_.upper_bound(begin);
  if (it != extents_.begin() && std::prev(it)->second->end > begin) --it;
  uint64_t at = begin;
  for (; it != extents_.end() && it->first < end; ++it) {
    const Extent& e = *it->second;
    if (e.begin > at) pieces.push_back({at, e.begin, nullptr});
    pieces.push_back({std::max(at, e.begin), std::min(end, e.end), it->second});
    at = std::min(end, e.end);
  }
  if (at < end) pieces.push_back({at, end, nullptr});
  return pieces;
}

std::pair<uint64_t, uint64_t> RangeCache::room_around(uint64_t begin, uint64_t end) const {
  uint64_t low = 0;
  uint64_t high = std::numeric_limits<uint64_t>::max();
  auto it = extents_.lower_bound(end);
  if (it != extents_.end()) high = it->first;
  if (it != extents_.begin() && std::prev(it)->second->end <= begin) low = std::prev(it)->second->end;
  return {low, high};
}

std::shared_ptr<Extent> RangeCache::add(uint64_t begin, uint64_t end, bool readahead) {
  auto e = std::make_shared<Extent>();
  e->begin = begin;
  e->end = end;
  e->bytes.reset(new uint8_t[end - begin]);
  e->readahead = readahead;
  extents_.emplace(begin, e);
  held_ += end - begin;
  return e;
}

void RangeCache::ready(const std::shared_ptr<Extent>& e) {
  e->state = Extent::State::kReady;
  lru_.push_front(e.get());
  e->lru = lru_.begin();
  e->in_lru = true;
  evict_over(budget_);
}

void RangeCache::drop(const std::shared_ptr<Extent>& e) { erase(*e); }

void RangeCache::touch(Extent& e) {
  e.used = true;
  if (e.in_lru) lru_.splice(lru_.begin(), lru_, e.lru);
}

void RangeCache::clear_ready() { evict_over(0); }

bool RangeCache::make_room(uint64_t bytes) {
  if (bytes > budget_) return false;
  evict_over(budget_ - bytes);
  return held_ + bytes <= budget_;
}

void RangeCache::erase(Extent& e) {
  const auto it = extents_.find(e.begin);
  if (it == extents_.end() || it->second.get() != &e) return;  // not in the map (already gone)
  if (e.in_lru) {
    lru_.erase(e.lru);
    e.in_lru = false;
  }
  held_ -= e.size();
  extents_.erase(it);  // may free e: last
}

// Ready extents go, the least recently used first, until `budget` is met; read-ahead no reader
// has used yet only when nothing else is left.
void RangeCache::evict_over(uint64_t budget) {
  for (const bool spare_unused : {true, false}) {
    for (auto it = lru_.end(); held_ > budget && it != lru_.begin();) {
      Extent* e = *--it;
      if (spare_unused && e->readahead && !e->used) continue;
      it = std::next(it);  // erase() removes *it from lru_: step past it first
      erase(*e);
    }
  }
}

}  // namespace mibz2::io
