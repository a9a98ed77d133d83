// The inside of a BuildDriver's build, shared by the files that drive it (build_driver.cc: queue,
// jobs, parking; build_ending.cc: how a build ends; build_streams.cc: the one-pass streams). Not for
// use outside the driver.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "catalog/build_driver.h"
#include "catalog/build_scheduler.h"
#include "catalog/grown_file.h"
#include "catalog/source_access.h"
#include "index/block_index.h"
#include "index/block_stream.h"
#include "index/index_builder.h"
#include "io/source_bytes.h"
#include "io/source.h"

namespace mibz2::catalog {

// Candidates in flight ahead of the resolution point, per decoder thread: enough to keep every
// worker busy while resolution waits for the oldest decode, few enough to bound the decoded bytes
// a streamed build holds.
inline constexpr size_t kWindowPerThread = 4;
// Decoded bytes a stream (mibz2 cat) holds ahead of its consumer, per decoder thread: ample for
// ordinary blocks (about 1 MB each), while blocks that expand to 46 MB are held a few at a time.
// A stream's memory is then at most threads x (this + the largest block + a decoder's scratch).
inline constexpr uint64_t kStreamBytesPerThread = 16 << 20;
// Builds of files someone asked for that may be under way at once, besides one background build a
// decoder thread: each holds a descriptor and a window of candidates (a few kB a thread). A shell
// waits for one file at a time; sixteen leave room for many users and programs at once, and past
// them a new file waits for a slot at most about one quantum.
inline constexpr unsigned kUrgentBuilds = 16;
// Decoder time a build has in its turn before it steps aside for a file that has not had one: long
// enough that an ordinary file of a few tens of MB is done in its first turn and switching costs
// nothing measurable (a switch closes and reopens the source), short enough that a file queued
// behind a large or expanding one (a 5 KB file can take seconds of every decoder) waits about a
// second, not for the whole build.
inline constexpr std::chrono::nanoseconds kBuildQuantum = std::chrono::seconds(1);

// The bytes a build reads: its opened source (SourceAccess::open_source), let go while the build is
// parked (a parked build holds none: there may be many) and opened anew to resume. reset() and
// take() are called only while no step of the build runs (a parked or resuming build has no job on
// the pool), so the reads never race them.
class ReopenedBytes final : public io::SourceBytes {
 public:
  explicit ReopenedBytes(uint64_t size) : io::SourceBytes(size) {}
  void reset(std::unique_ptr<io::Source> source) { inner_ = std::move(source); }
  std::unique_ptr<io::Source> take() { return std::move(inner_); }
  const io::Source* source() const { return inner_.get(); }

 private:
  io::SourceRead read_at(uint64_t offset, size_t len, uint8_t* out) const override {
    if (!inner_) return io::SourceRead::failure(EBADF, offset, len);
    return inner_->read(offset, len, out);
  }
  std::unique_ptr<io::Source> inner_;
};

// One build under way: the open source, the builder, and its jobs on the pool; its turn (BuildTurn:
// the file, and the scheduler's record) when it is one of the queue's.
struct BuildDriver::Build : BuildTurn {
  explicit Build(FileRef f) : BuildTurn(std::move(f)) {}
  index::SourceIdentity id;
  std::unique_ptr<ReopenedBytes> file_bytes;    // the opened source (none while parked)
  const io::SourceBytes* bytes = nullptr;   // what the builder reads: file_bytes, or stream_once's
  bool once = false;                            // stream_once: no source to check, nothing to store
  index::BuildResult once_result;               // stream_once: the result, set before the file settles
  std::unique_ptr<index::BlockStream> stream;  // stream(): the consumer's blocks
  GrownFile grown;                              // the file grew from its index before (grown_file.h)
  std::shared_ptr<index::IndexBuilder> builder;
  std::mutex mu;            // guards what follows (then the builder's lock: see the top of build_driver.h)
  unsigned jobs = 0;        // jobs queued or running on the pool (and a park or resume under way)
  bool finishing = false;   // finish_build() was started (once)
  bool consumer_done = false;  // a stream's consumer took its last block, or stopped
  bool yielding = false;    // it gave its slot up: it claims no job, and is parked once its last ends
  bool moved = false;       // resumed to find its source is no longer the file it read: it ends so
  // Why the driver cancelled it, if it did (an errno, 0 if not): a stream's consumer stopped
  // (ECANCELED), memory ran out (ENOMEM). A build that fails by itself fails on the content, or
  // on a read of its source.
  int cancelled_as = 0;
};

}  // namespace mibz2::catalog
