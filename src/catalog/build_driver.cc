#include "catalog/build_driver.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>
#include <utility>

#include <spdlog/spdlog.h>

#include "base/invariant.h"
#include "catalog/build.h"

namespace mibz2::catalog {

BuildDriver::BuildDriver(engine::Engine& engine, index::IndexStore& store, const SourceAccess& access, Outcomes& outcomes)
    : engine_(engine),
      store_(store),
      access_(access),
      outcomes_(outcomes),
      sched_(engine.pool().threads() + kUrgentBuilds, engine.pool().threads(), kBuildQuantum) {}

void BuildDriver::queue(const FileRef& file, bool now) {
  if (!sched_.queue(file, now)) {
    outcomes_.failed(file, base::Status::error(ECANCELED, "unmounting"), {});
    return;
  }
  schedule();
}

void BuildDriver::promote(const FileRef& file) {
  sched_.promote(file);
  schedule();
}

void BuildDriver::schedule() {
  while (std::optional<BuildScheduler::Start> next = sched_.next()) {
    if (next->parked) {
      resume_build(std::static_pointer_cast<Build>(next->parked));
      continue;
    }
    if (!next->file->start_building()) {  // settled another way meanwhile
      sched_.give_back(next->urgent);
      continue;
    }
    start_build(next->file, nullptr, nullptr, &*next);
  }
}

std::shared_ptr<BuildDriver::Build> BuildDriver::start_build(const FileRef& file,
                                                             std::unique_ptr<index::BlockStream> stream,
                                                             const io::SourceBytes* once,
                                                             const BuildScheduler::Start* slot) {
  auto build = std::make_shared<Build>(file);
  if (once) {
    build->once = true;
    build->bytes = once;
  } else {
    base::Result<OpenedSource> opened = open_source(access_, *file);
    if (!opened.ok()) {
      outcomes_.failed_for_now(file, opened.status(), {});
      if (slot) sched_.give_back(slot->urgent);
      return nullptr;
    }
    build->id = opened->id;
    spdlog::info("{}: indexing ({} compressed bytes)", file->name(), build->id.size);
    file->note_source_size(build->id.size);
    build->file_bytes = std::make_unique<ReopenedBytes>(build->id.size);
    build->file_bytes->reset(std::move(opened->source));
    build->bytes = build->file_bytes.get();
  }
  // A file that grew keeps what it can of the index it had (never a stream: its consumer wants
  // every block from the first).
  if (!once && !stream) build->grown = grown_from(*file, build->id, *build->bytes);
  const index::IndexPrefix* kept = build->grown.kept ? &*build->grown.kept : nullptr;
  const size_t window = kWindowPerThread * engine_.pool().threads();
  build->stream = std::move(stream);
  build->builder = std::make_shared<index::IndexBuilder>(*build->bytes, window, build->stream.get(), kept);
  file->building_with(build->builder);
  {
    std::lock_guard lk(mu_);
    if (builds_.empty()) {
      busy_since_ = std::chrono::steady_clock::now();
      busy_bytes_ = 0;
    }
    builds_.push_back(build);
    if (stopping_) build->builder->cancel();
  }
  if (slot) sched_.started(*build, slot->urgent);  // before its first job, which reports to it
  pump(build);
  finish_if_done(build);  // cancelled before any job ran
  return build;
}

// Keeps as many jobs queued as the builder has work ready, up to the pool's width.
void BuildDriver::pump(const std::shared_ptr<Build>& build) {
  const engine::Priority priority = job_priority(*build);
  unsigned submit;
  {
    std::lock_guard lk(build->mu);
    submit = claim_jobs_locked(*build);
  }
  submit_jobs(build, submit, priority);
}

engine::Priority BuildDriver::job_priority(const Build& build) const {
  if (build.stream) return engine::Priority::kDemand;  // its consumer waits for every block
  return build.file->wanted_now() ? engine::Priority::kDemand : engine::Priority::kBackground;
}

// How many more jobs the build wants now (counted as queued from here on).
unsigned BuildDriver::claim_jobs_locked(Build& build) {
  if (build.finishing || build.yielding) return 0;
  const size_t ready = build.builder->ready_work();
  const unsigned width = engine_.pool().threads();
  unsigned n = 0;
  while (build.jobs < width && n < ready) {
    ++build.jobs;
    ++n;
  }
  return n;
}

void BuildDriver::fail_build(Build& build, const std::exception& e) {
  {
    std::lock_guard lk(build.mu);
    build.cancelled_as = ENOMEM;
  }
  build.builder->cancel(base::Status::error(ENOMEM, std::string("cannot index: ") + e.what()));
}

void BuildDriver::submit_jobs(const std::shared_ptr<Build>& build, unsigned n, engine::Priority priority) {
  for (unsigned i = 0; i < n; ++i) {
    try {
      engine_.pool().submit(priority, [this, build](engine::WorkerContext& ctx) { run_job(build, ctx); });
    } catch (const std::exception& e) {
      // Out of memory queueing a job: the build ends, failed (as for a decode out of memory), and
      // the jobs claimed but never queued are given back, or the build could never finish (and
      // the file would stay "building", with every later build and the unmount waiting for it).
      {
        std::lock_guard lk(build->mu);
        build->jobs -= n - i;
      }
      fail_build(*build, e);
      finish_if_done(build);
      return;
    }
  }
}

void BuildDriver::run_job(const std::shared_ptr<Build>& build, engine::WorkerContext& ctx) {
  if (hold_ && !build->stream && !build->builder->finished() && hold_()) {
    // Held (a test): this job steps aside for a moment and comes back at background priority, so
    // the build stays where it is and reads still find workers.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    engine_.pool().submit(engine::Priority::kBackground, [this, build](engine::WorkerContext& c) { run_job(build, c); });
    return;
  }
  const auto began = std::chrono::steady_clock::now();
  try {
    build->builder->step(ctx.decoder, ctx.compressed);
  } catch (const std::exception& e) {
    // Out of memory in a decode: the build cannot be trusted to be whole.
    fail_build(*build, e);
  }
  build->served_ns.fetch_add(std::chrono::nanoseconds(std::chrono::steady_clock::now() - began).count(),
                             std::memory_order_relaxed);
  const engine::Priority priority = job_priority(*build);
  if (!build->stream) {
    // Its turn, told while this job still counts (so the driver cannot go meanwhile): a slot it
    // gives up goes to the next file at once.
    const BuildScheduler::Verdict verdict = sched_.job_done(*build, priority == engine::Priority::kDemand);
    if (verdict == BuildScheduler::Verdict::kYield) {
      std::lock_guard lk(build->mu);
      build->yielding = true;
    }
    if (verdict != BuildScheduler::Verdict::kGoOn) schedule();
  }
  // This job's count is given back and the next jobs claimed in one step: a job that ends while
  // another is still counted leaves the claiming to that one, so no ready work is left behind.
  // Once its count is given back, a job touches `this` only to submit what it claimed (the build
  // cannot finish while those count), to finish the build itself, or to park it (holding a count
  // again).
  unsigned submit;
  bool finish, park;
  {
    std::lock_guard lk(build->mu);
    --build->jobs;
    submit = claim_jobs_locked(*build);
    finish = claim_finish_locked(*build);
    park = !finish && build->yielding && build->jobs == 0;
    if (park) ++build->jobs;  // held by park_build()
  }
  submit_jobs(build, submit, priority);
  if (finish) finish_build(build);
  if (park) park_build(build);
}

void BuildDriver::park_build(const std::shared_ptr<Build>& build) {
  std::unique_ptr<io::Source> closing;
  {
    std::lock_guard lk(build->mu);
    closing = build->file_bytes->take();
  }
  closing.reset();  // a parked build holds no source (no descriptor): there may be many
  spdlog::debug("{}: indexing steps aside for other files ({} of {} bytes done)", build->file->name(),
                build->builder->bytes_done(), build->builder->bytes_total());
  const bool urgent = build->file->wanted_now();
  // Asked for while it was being parked: prepare() found nothing parked to promote.
  if (sched_.park(build, urgent) && !urgent && build->file->wanted_now()) sched_.promote(build->file);
  schedule();  // its turn may come at once
  bool finish;
  {
    std::lock_guard lk(build->mu);
    --build->jobs;
    finish = claim_finish_locked(*build);  // cancelled meanwhile (shutdown)
  }
  if (finish) finish_build(build);
}

void BuildDriver::resume_build(const std::shared_ptr<Build>& build) {
  {
    std::lock_guard lk(build->mu);
    ++build->jobs;  // held while its source is reopened: the build cannot finish meanwhile
  }
  // The same file it was (FORMAT.md's identity, fingerprint included), or the build ends: what it
  // read so far is a fact about another file.
  base::Result<OpenedSource> opened = open_source(access_, *build->file);
  const bool same = opened.ok() && opened->id == build->id;
  {
    std::lock_guard lk(build->mu);
    build->file_bytes->reset(opened.ok() ? std::move(opened->source) : nullptr);
    build->yielding = false;
    build->moved = !same;
  }
  if (!same) build->builder->cancel();
  // The count held becomes its first job (which, if it was cancelled, finishes it on the pool),
  // and it claims as many more as it has work ready.
  const engine::Priority priority = job_priority(*build);
  submit_jobs(build, 1, priority);
  pump(build);
}

// Whether the caller is the one to finish the build: it finished and no job of it is left.
std::vector<FileRef> BuildDriver::stop() {
  std::vector<std::shared_ptr<Build>> builds;
  {
    std::lock_guard lk(mu_);
    if (stopping_) return {};
    stopping_ = true;
    builds = builds_;  // parked builds too; one started after this cancels itself (stopping_)
  }
  const std::vector<FileRef> waiting = sched_.stop();
  for (const auto& b : builds) {
    b->builder->cancel();
    finish_if_done(b);
  }
  return waiting;
}

void BuildDriver::wait_idle() {
  std::unique_lock lk(mu_);
  idle_.wait(lk, [this] { return builds_.empty(); });
}

size_t BuildDriver::pending() const {
  size_t building;
  {
    std::lock_guard lk(mu_);
    building = builds_.size();
  }
  return sched_.waiting() + building;  // (the scheduler's lock is taken alone)
}

BuildDriver::Activity BuildDriver::activity() const {
  std::lock_guard lk(mu_);
  Activity a;
  a.bytes_done = busy_bytes_;
  const auto busy = builds_.empty() ? std::chrono::steady_clock::duration{}
                                    : std::chrono::steady_clock::now() - busy_since_;
  if (!builds_.empty()) a.seconds = std::chrono::duration<double>(busy).count();
  a.build_seconds = std::chrono::duration<double>(busy_total_ + busy).count();
  a.blocks_decoded = blocks_decoded_;
  for (const auto& b : builds_) a.blocks_decoded += b->builder->decodes();
  return a;
}

}  // namespace mibz2::catalog
