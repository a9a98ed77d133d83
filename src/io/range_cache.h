// The bytes of a remote source fetched lately, as extents (byte ranges, each one request's),
// bounded in bytes: what a build's decoders read right after its scan fetched it, and what read-
// ahead fetched before a reader asks, are served from here.
//
// An extent is added when its request is made (fetching: readers of its bytes wait on its
// condition variable), and is then ready or dropped (a failed request: the next read asks
// again; a failure is never kept). Extents never overlap. Over the budget, the ready extents used
// longest ago go first; read-ahead that no reader has used yet goes last. Extents are handed out
// by shared_ptr, so one that goes while a reader copies from it stays until the copy is done.
//
// Not thread-safe: the owner (RemoteBytes) guards it with its mutex, and the condition variables
// are waited on with that mutex.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <vector>

#include "io/source_bytes.h"

namespace mibz2::io {

struct Extent {
  enum class State { kFetching, kReady, kFailed };
  uint64_t begin = 0;
  uint64_t end = 0;
  std::unique_ptr<uint8_t[]> bytes;  // end - begin of them
  State state = State::kFetching;
  SourceRead failure;        // kFailed: what its readers get
  bool readahead = false;    // fetched ahead of a reader, not for one
  bool used = false;         // a read has copied from it
  std::condition_variable done;  // it is ready or failed
  std::list<Extent*>::iterator lru;  // ready extents only
  bool in_lru = false;

  uint64_t size() const { return end - begin; }
};

class RangeCache {
 public:
  explicit RangeCache(uint64_t budget) : budget_(budget) {}

  // What covers [begin, end): in order, the extents that overlap it and the gaps between them
  // (extent == nullptr), each clipped to [begin, end).
  struct Piece {
    uint64_t begin;
    uint64_t end;
    std::shared_ptr<Extent> extent;
  };
  std::vector<Piece> cover(uint64_t begin, uint64_t end) const;
  // The widest span around the gap [begin, end) that no extent holds: from the end of the extent
  // before it (or 0) to the start of the one after it (or UINT64_MAX).
  std::pair<uint64_t, uint64_t> room_around(uint64_t begin, uint64_t end) const;

  // A fetching extent for [begin, end), which must be a gap. Throws std::bad_alloc.
  std::shared_ptr<Extent> add(uint64_t begin, uint64_t end, bool readahead);
  // Its request is done: it is ready, used now; extents over the budget go.
  void ready(const std::shared_ptr<Extent>& e);
  // Its request failed: it goes (its readers still hold it and see its failure).
  void drop(const std::shared_ptr<Extent>& e);
  // A read copied from it: it is the most recently used.
  void touch(Extent& e);
  // Every ready extent goes (the source changed: its bytes are of no use).
  void clear_ready();
  // Makes room for `bytes` more if it can (by dropping ready extents); whether they fit.
  bool make_room(uint64_t bytes);

  uint64_t held_bytes() const { return held_; }
  uint64_t budget() const { return budget_; }

 private:
  void erase(Extent& e);
  void evict_over(uint64_t budget);

  const uint64_t budget_;
  uint64_t held_ = 0;  // bytes of every extent in the map, fetching or ready
  std::map<uint64_t, std::shared_ptr<Extent>> extents_;  // by begin
  std::list<Extent*> lru_;  // ready extents, the most recently used first
};

}  // namespace mibz2::io
