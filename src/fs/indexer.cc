#include "fs/indexer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "index/index_builder.h"
#include "io/mapped_file.h"

namespace mibz2::fs {

uint64_t new_file_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1);
}

struct Indexer::Build {
  std::shared_ptr<CompressedFile> file;
  index::SourceIdentity id;
  io::MappedFile map;
  std::unique_ptr<index::IndexBuilder> builder;
  std::atomic<unsigned> active{0};  // step jobs queued or running
  std::atomic<bool> finished{false};
};

Indexer::Indexer(engine::Engine& engine, index::IndexStore& store) : engine_(engine), store_(store) {}

Indexer::~Indexer() {
  shutdown();
  std::unique_lock lk(mu_);
  idle_.wait(lk, [this] { return jobs_ == 0; });
}

void Indexer::shutdown() {
  std::vector<std::shared_ptr<CompressedFile>> waiting;
  std::shared_ptr<Build> current;
  {
    std::lock_guard lk(mu_);
    if (stopping_) return;
    stopping_ = true;
    waiting.swap(waiting_);
    current = current_;
  }
  if (current) current->builder->cancel();
  for (const auto& f : waiting) settle(f, nullptr, "unmounting");
}

void Indexer::submit_step(const std::shared_ptr<Build>& build) {
  {
    std::lock_guard lk(mu_);
    ++jobs_;
  }
  engine_.pool().submit(engine::Priority::kBackground, [this, build](engine::WorkerContext& ctx) {
    run_step(build, ctx);
    std::lock_guard lk(mu_);
    if (--jobs_ == 0) idle_.notify_all();
  });
}

size_t Indexer::pending() const {
  std::lock_guard lk(mu_);
  return waiting_.size() + (building_ ? 1 : 0);
}

void Indexer::settle(const std::shared_ptr<CompressedFile>& file, std::shared_ptr<const index::BlockIndex> index,
                     std::string error) {
  {
    std::lock_guard lk(file->mu);
    if (index) {
      file->index = std::move(index);
      file->state = CompressedFile::State::kReady;
      file->file_id = new_file_id();
      file->generation++;
      file->error.clear();
    } else {
      file->state = CompressedFile::State::kFailed;
      file->error = std::move(error);
      struct stat st;
      if (stat(file->source().c_str(), &st) == 0) file->failed_identity = index::SourceIdentity::from_stat(st);
    }
  }
  file->settled.notify_all();
}

bool Indexer::load_stored(const std::shared_ptr<CompressedFile>& file) {
  const int fd = open(file->source().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    settle(file, nullptr, std::string("cannot open: ") + std::strerror(errno));
    return true;
  }
  index::SourceIdentity id;
  std::string err;
  const bool ok = index::identify_source(fd, &id, &err);
  close(fd);
  if (!ok) {
    settle(file, nullptr, "cannot read: " + err);
    return true;
  }
  index::BlockIndex loaded;
  std::string reason;
  const auto status = store_.load(file->source(), id, &loaded, &reason);
  if (status == index::IndexStore::Load::kCurrent) {
    settle(file, std::make_shared<const index::BlockIndex>(std::move(loaded)), {});
    return true;
  }
  if (status != index::IndexStore::Load::kMissing)
    spdlog::warn("{}: stored index not used, rebuilding: {}", file->source(), reason);
  return false;
}

void Indexer::ensure(const std::shared_ptr<CompressedFile>& file, bool urgent) {
  bool load = false;
  {
    std::lock_guard lk(file->mu);
    switch (file->state) {
      case CompressedFile::State::kReady:
      case CompressedFile::State::kFailed:
      case CompressedFile::State::kBuilding:
        return;
      case CompressedFile::State::kLoading:
        // Another thread is reading its stored index; if there is none, it queues the build,
        // first in line when someone asked urgently meanwhile.
        file->wanted_urgently = file->wanted_urgently || urgent;
        return;
      case CompressedFile::State::kQueued:
        if (!urgent) return;
        break;  // already waiting for a build: queue_build moves it to the front
      case CompressedFile::State::kUnknown:
        file->state = CompressedFile::State::kLoading;  // claimed: nobody else loads it meanwhile
        file->wanted_urgently = urgent;
        load = true;
        break;
    }
  }
  if (load) {
    // The stored index first (this reads files, so no lock is held).
    if (load_stored(file)) return;
    std::lock_guard lk(file->mu);
    file->state = CompressedFile::State::kQueued;
    urgent = file->wanted_urgently;
  }
  queue_build(file, urgent);
}

bool Indexer::wait_ready(const std::shared_ptr<CompressedFile>& file) {
  ensure(file, true);
  std::unique_lock lk(file->mu);
  file->settled.wait(lk, [&] {
    return file->state == CompressedFile::State::kReady || file->state == CompressedFile::State::kFailed;
  });
  return file->state == CompressedFile::State::kReady;
}

bool Indexer::refresh_if_changed(const std::shared_ptr<CompressedFile>& file) {
  struct stat st;
  if (stat(file->source().c_str(), &st) != 0) return false;  // gone: the open will fail on its own
  const index::SourceIdentity now = index::SourceIdentity::from_stat(st);
  {
    std::lock_guard lk(file->mu);
    if (file->state != CompressedFile::State::kReady && file->state != CompressedFile::State::kFailed) return false;
    const index::SourceIdentity& was = file->state == CompressedFile::State::kReady ? file->index->source : file->failed_identity;
    if (was.same_stat(now)) return false;
    // Changed: forget the old content and index the file again.
    spdlog::info("{}: source changed since it was indexed; indexing it again", file->source());
    if (file->file_id) engine_.forget(file->file_id);
    file->state = CompressedFile::State::kUnknown;
    file->index.reset();
    file->reader.reset();
  }
  return true;
}

void Indexer::queue_build(const std::shared_ptr<CompressedFile>& file, bool urgent) {
  {
    std::lock_guard lk(mu_);
    if (stopping_) return;
    // Newest request first: the back of waiting_ is built next.
    auto it = std::find(waiting_.begin(), waiting_.end(), file);
    if (it != waiting_.end()) {
      if (!urgent) return;
      waiting_.erase(it);
    }
    waiting_.push_back(file);
    if (building_) return;
    building_ = true;
  }
  start_next_build();
}

// Requires building_ set by the caller; clears it when nothing is left.
void Indexer::start_next_build() {
  for (;;) {
    std::shared_ptr<CompressedFile> next;
    {
      std::lock_guard lk(mu_);
      if (waiting_.empty() || stopping_) {
        building_ = false;
        current_.reset();
        if (jobs_ == 0) idle_.notify_all();
        return;
      }
      next = waiting_.back();
      waiting_.pop_back();
      current_.reset();
    }
    {
      std::lock_guard lk(next->mu);
      if (next->state != CompressedFile::State::kQueued) continue;
      next->state = CompressedFile::State::kBuilding;
    }
    start_build(next);
    return;
  }
}

void Indexer::start_build(const std::shared_ptr<CompressedFile>& file) {
  auto build = std::make_shared<Build>();
  build->file = file;
  std::string err;
  const int fd = open(file->source().c_str(), O_RDONLY | O_CLOEXEC);
  bool ok = fd >= 0;
  if (!ok) err = std::strerror(errno);
  if (ok) ok = index::identify_source(fd, &build->id, &err) && build->map.map_fd(fd, &err);
  if (fd >= 0) close(fd);
  if (!ok) {
    spdlog::error("{}: cannot index: {}", file->source(), err);
    settle(file, nullptr, err);
    start_next_build();
    return;
  }
  spdlog::info("{}: indexing ({} compressed bytes)", file->source(), build->map.size());
  const unsigned threads = engine_.pool().threads();
  build->builder = std::make_unique<index::IndexBuilder>(build->map.bytes(), 4 * size_t{threads});
  {
    std::lock_guard lk(file->mu);
    file->build_done = 0;
    file->build_total = build->map.size();
  }
  build->active = threads;
  {
    std::lock_guard lk(mu_);
    current_ = build;
    if (stopping_) build->builder->cancel();
  }
  for (unsigned i = 0; i < threads; ++i) submit_step(build);
}

// One step of a build per job: each job re-queues itself at background priority, so reads queued
// meanwhile run first, and an index build never holds a worker for longer than one block.
void Indexer::run_step(const std::shared_ptr<Build>& build, engine::WorkerContext& ctx) {
  index::IndexBuilder& b = *build->builder;
  // After shutdown() cancelled it, the build answers kFinished at once and the jobs wind down.
  const auto s = b.step(ctx.decoder, ctx.compressed);
  {
    std::lock_guard lk(build->file->mu);
    build->file->build_done = b.bytes_done();
  }
  auto resubmit = [this, build] { submit_step(build); };
  switch (s) {
    case index::IndexBuilder::Step::kWorked:
      resubmit();
      // Jobs that found nothing to do left (below); now there may be work for them again.
      for (unsigned a = build->active.load(); a < engine_.pool().threads();) {
        if (build->active.compare_exchange_weak(a, a + 1)) {
          submit_step(build);
          a = build->active.load();
        }
      }
      return;
    case index::IndexBuilder::Step::kIdle:
      // Others are decoding what resolution waits for; they keep the build going. The last job
      // must not leave, so it waits for work instead.
      if (build->active.fetch_sub(1) == 1) {
        build->active.fetch_add(1);
        b.wait();
        resubmit();
      }
      return;
    case index::IndexBuilder::Step::kFinished:
      build->active.fetch_sub(1);
      if (!build->finished.exchange(true)) finish_build(build);
      return;
  }
}

void Indexer::finish_build(const std::shared_ptr<Build>& build) {
  index::BuildResult r = build->builder->take_result();
  const std::string& path = build->file->source();
  for (const std::string& n : r.notes) spdlog::warn("{}: {}", path, n);
  bool stopping;
  {
    std::lock_guard lk(mu_);
    stopping = stopping_;
  }
  if (!r.ok) {
    if (stopping) spdlog::debug("{}: indexing stopped at unmount", path);
    else spdlog::error("{}: cannot index: {}", path, r.error);
    settle(build->file, nullptr, r.error);
  } else {
    r.index.source = build->id;
    std::string err;
    if (!store_.save(path, r.index, &err) && !warned_read_only_.exchange(true))
      spdlog::warn("index not saved ({}); indexes are kept in memory only", err);
    spdlog::info("{}: indexed: {} blocks, {} bytes decompressed{}", path, r.index.blocks.size(),
                 r.index.decompressed_size,
                 r.index.damaged_blocks ? ", " + std::to_string(r.index.damaged_blocks) + " damaged blocks" : "");
    settle(build->file, std::make_shared<const index::BlockIndex>(std::move(r.index)), {});
  }
  start_next_build();
}

}  // namespace mibz2::fs
