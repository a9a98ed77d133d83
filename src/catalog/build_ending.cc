// How a build ends (build_driver.h, "A build that ends is finished here"): stored and settled,
// failed, or dropped because its source changed under it.
#include "catalog/build_driver.h"

#include <algorithm>
#include <cerrno>
#include <utility>

#include <spdlog/spdlog.h>

#include "base/invariant.h"
#include "catalog/build.h"

namespace mibz2::catalog {

bool BuildDriver::claim_finish_locked(Build& build) {
  if (build.finishing || build.jobs > 0) return false;
  if (!build.builder->finished()) {
    // No job left and not finished: the builder must have work ready (and then pump() queued a job
    // for it), or be waiting for a stream's consumer to make room (its next() pumps again).
    MIBZ2_INVARIANT(build.stream || build.builder->ready_work() > 0);
    return false;
  }
  // A stream's build settles only once its consumer is done: one that stops after the last block
  // was decoded has stopped the pass all the same, and nothing is stored (the consumer's thread
  // finishes the build then, in consume()).
  if (build.stream && !build.consumer_done) return false;
  build.finishing = true;
  return true;
}

// After a cancel from outside the pool: finishes the build if no job is left to do it.
void BuildDriver::finish_if_done(const std::shared_ptr<Build>& build) {
  bool finish;
  {
    std::lock_guard lk(build->mu);
    finish = claim_finish_locked(*build);
  }
  if (finish) finish_build(build);
}

void BuildDriver::finish_build(const std::shared_ptr<Build>& build) {
  index::BuildResult r = build->builder->take_result();
  int cancelled_as;
  bool moved;
  {
    std::lock_guard lk(build->mu);
    cancelled_as = build->cancelled_as;
    moved = build->moved;
  }
  // A stream's consumer that stopped stopped the pass, even if the decoders had finished by then.
  if (cancelled_as == ECANCELED && r.ok()) r.error = index::IndexBuilder::cancelled();
  if (build->once) {
    // Nothing to check, store or log: the result goes to stream_once, which waits for the file.
    const bool ok = r.ok();
    build->once_result = std::move(r);
    build->file->end_pass(ok);
    release(build, /*bytes=*/false);
    return;
  }
  // The notes are the build's detail; the damage is logged once per file when it settles.
  for (const std::string& n : r.notes) spdlog::debug("{}: {}", build->file->name(), n);
  bool stopping;
  {
    std::lock_guard lk(mu_);
    stopping = stopping_;
  }
  if (!stopping && (moved || (r.ok() && source_changed(*build)))) {
    end_changed(*build, "the source changed while it was indexed");
  } else if (!stopping && r.prefix_changed) {
    // What the index before said of the old prefix is not so: nothing of it is kept any more.
    build->file->forget_previous();
    end_changed(*build, r.error.message());
  } else if (!r.ok()) {
    end_failed(*build, std::move(r), stopping, cancelled_as);
  } else {
    end_built(*build, std::move(r));
  }
  if (!build->stream) {
    // The queue's build: its slot goes to the next.
    sched_.ended(*build);
    schedule();
  }
  release(build, /*bytes=*/true);
}

void BuildDriver::end_changed(const Build& build, const std::string& why) {
  // What was read is a mix of the file before and after: never stored, never served.
  spdlog::info("{}: {}; indexing it again when it is needed", build.file->name(), why);
  if (build.stream) {
    outcomes_.failed(build.file, base::Status::error(ESTALE, "the source changed while it was read"), {});
  } else {
    // Someone waits: build it again now (from the file as it is).
    if (build.file->rebuild_after_change()) queue(build.file, true);
  }
}

void BuildDriver::end_failed(const Build& build, index::BuildResult r, bool stopping, int cancelled_as) {
  const std::string& path = build.file->name();
  IndexOrigin origin;
  origin.built = true;
  origin.notes = std::move(r.notes);
  if (stopping) {
    spdlog::debug("{}: indexing stopped at unmount", path);
    outcomes_.failed(build.file, base::Status::error(ECANCELED, "unmounting"), std::move(origin));
    return;
  }
  // A read of the source that failed says nothing of its content: never the file's fault.
  base::Status why = cancelled_as ? base::Status::error(cancelled_as, r.error.message()) : r.error;
  if (base::is_environment(why)) {
    outcomes_.failed_for_now(build.file, std::move(why), std::move(origin));
  } else {
    if (!base::is_stopped(r.error)) spdlog::error("{}: cannot index: {}", path, r.error.message());
    outcomes_.failed(build.file, std::move(why), std::move(origin));
  }
}

void BuildDriver::end_built(const Build& build, index::BuildResult r) {
  r.index.source = build.id;
  IndexOrigin origin;
  origin.built = true;
  origin.index_path = store_.dir().empty() ? std::string() : store_.path_for(build.id);
  const base::Status saved = store_.save(r.index, &origin.stored_file);
  origin.saved = saved.ok();
  origin.save_error = saved.message();
  if (build.grown.kept) {
    origin.blocks_kept = build.grown.kept->blocks.size();
    origin.bytes_kept = build.builder->bytes_kept();
  }
  // Stored: the index of what the file was before it grew describes nothing any more.
  if (saved.ok()) remove_superseded(store_, *build.file, build.grown);
  origin.notes = std::move(r.notes);  // (settling adds why no stored index was used)
  // Without a directory at all, whoever made the store said so already (the mount, at start).
  if (!origin.saved && !store_.dir().empty()) {
    std::lock_guard lk(mu_);
    if (!std::exchange(warned_unsaved_, true))
      spdlog::warn("index not saved ({}); indexes are kept in memory only", origin.save_error);
  }
  const size_t blocks = r.index.blocks.size();
  const uint32_t damaged = r.index.damaged_blocks;
  spdlog::info("{}: indexed: {} {}, {} bytes decompressed{}", build.file->name(), blocks,
               blocks == 1 ? "block" : "blocks", r.index.decompressed_size,
               damaged ? ", " + std::to_string(damaged) + (damaged == 1 ? " damaged block" : " damaged blocks") : "");
  outcomes_.built(build.file, std::make_shared<const index::BlockIndex>(std::move(r.index)), std::move(origin));
}

void BuildDriver::release(const std::shared_ptr<Build>& build, bool bytes) {
  // Last: the owner's destructor may go once builds_ is empty, so nothing of `this` is touched after.
  std::lock_guard lk(mu_);
  if (bytes) busy_bytes_ += build->builder->bytes_done() - build->builder->bytes_kept();
  blocks_decoded_ += build->builder->decodes();
  builds_.erase(std::find(builds_.begin(), builds_.end(), build));
  if (builds_.empty()) {
    busy_total_ += std::chrono::steady_clock::now() - busy_since_;
    idle_.notify_all();
  }
}

// Whether the file the build read is not the one it began with (truncated, rewritten in place):
// the identity of the opened source now against the one taken at the start.
bool BuildDriver::source_changed(const Build& build) const {
  const io::Source* source = build.file_bytes ? build.file_bytes->source() : nullptr;
  if (!source) return true;
  const base::Result<index::SourceIdentity> now = index::identify_source(*source);
  return !now.ok() || !(*now == build.id);
}

}  // namespace mibz2::catalog
