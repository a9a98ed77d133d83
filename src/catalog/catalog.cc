#include "catalog/catalog.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include <spdlog/spdlog.h>

#include "base/invariant.h"
#include "engine/reader.h"

namespace mibz2::catalog {

Catalog::Catalog(engine::Engine& engine, index::IndexStore& store, const SourceAccess* access)
    : engine_(engine),
      access_(access ? *access : plain_access_),
      stored_(engine, store, access_),
      builds_(engine, store, access_, *this) {}

Catalog::~Catalog() {
  shutdown();
  builds_.wait_idle();  // their last steps call back here (BuildDriver::Outcomes)
}

FileRef Catalog::add(std::string path, uint64_t device, uint64_t inode) {
  FileRef file = std::make_shared<CatalogFile>(std::move(path), device, inode);
  std::lock_guard lk(mu_);
  if (files_.size() >= 2 * files_pruned_at_ + 64) {
    // Entries the caller dropped (forgotten nodes): pruned when the list has doubled, so adding
    // stays amortised O(1).
    std::erase_if(files_, [](const std::weak_ptr<CatalogFile>& w) { return w.expired(); });
    files_pruned_at_ = files_.size();
  }
  files_.push_back(file);
  return file;
}

// --- settling ---

void Catalog::settle_ready(const FileRef& file, std::shared_ptr<const index::BlockIndex> index, IndexOrigin origin) {
  log_damage(file->name(), *index);
  file->settle_ready(std::move(index), std::move(origin));
}

void Catalog::settle_failed(const FileRef& file, base::Status why, IndexOrigin origin) {
  const base::Result<io::SourceStamp> now = access_.stamp(*file);
  if (!base::is_stopped(why)) {
    std::lock_guard lk(mu_);
    ++failures_;
  }
  file->settle_failed(std::move(why), std::move(origin),
                      now.ok() ? index::SourceIdentity::from_stamp(*now) : index::SourceIdentity{});
}

void Catalog::fail_for_now(const FileRef& file, base::Status why, IndexOrigin origin) {
  MIBZ2_INVARIANT(base::is_environment(why));
  spdlog::error("{}: cannot index: {} (nothing stored; tried again when it is next opened)", file->name(),
                why.message());
  settle_failed(file, std::move(why), std::move(origin));
}

void Catalog::built(const FileRef& file, std::shared_ptr<const index::BlockIndex> index, IndexOrigin origin) {
  {
    // Counted before it settles: whoever sees it ready sees it counted.
    std::lock_guard lk(mu_);
    ++built_;
    bytes_indexed_ += index->source.size - origin.bytes_kept;  // what the build read
  }
  settle_ready(file, std::move(index), std::move(origin));
}

void Catalog::failed(const FileRef& file, base::Status why, IndexOrigin origin) {
  settle_failed(file, std::move(why), std::move(origin));
}

void Catalog::failed_for_now(const FileRef& file, base::Status why, IndexOrigin origin) {
  fail_for_now(file, std::move(why), std::move(origin));
}

// --- loading ---

bool Catalog::load_stored(const FileRef& file) {
  StoredIndexLoader::Found found = stored_.load(*file);
  if (found.index) {
    {
      // Counted before it settles: whoever sees it ready sees it counted.
      std::lock_guard lk(mu_);
      ++loaded_;
    }
    settle_ready(file, std::move(found.index), std::move(found.origin));
    return true;
  }
  if (!found.failure.ok()) {
    fail_for_now(file, std::move(found.failure));
    return true;
  }
  file->note_not_loaded(std::move(found.not_used));
  return false;
}

bool Catalog::load_if_current(const FileRef& file) {
  switch (file->claim_load()) {
    case CatalogFile::LoadClaim::kReady: return true;
    case CatalogFile::LoadClaim::kBusy: return false;
    case CatalogFile::LoadClaim::kClaimed: break;
  }
  if (load_stored(file)) return file->state() == IndexState::kReady;
  // Someone asked for it meanwhile (prepare saw it loading): the build is theirs to have.
  bool now = false;
  if (file->after_no_stored_index(/*build=*/false, &now)) builds_.queue(file, now);
  return false;
}

// --- what a file needs ---

void Catalog::prepare(const FileRef& file, Need need) {
  const CatalogFile::Next next = file->prepare(need);
  if (next.kind == CatalogFile::Next::kNothing) return;
  if (next.kind == CatalogFile::Next::kPromote) {
    builds_.promote(file);
    return;
  }
  if (next.forget_id) engine_.forget(next.forget_id);
  bool now = next.now;
  if (next.kind == CatalogFile::Next::kLoad) {
    if (load_stored(file)) return;
    file->after_no_stored_index(/*build=*/true, &now);  // someone may have asked urgently while it loaded
  }
  builds_.queue(file, now);
}

bool Catalog::wait(const FileRef& file, std::stop_token stop) {
  for (;;) {
    prepare(file, Need::kNow);
    // Stale again: prepare() found the file ready, and before the wait refresh() saw it changed
    // or distrust() dropped its index (and perhaps a load found no index since and left it
    // unknown). Nobody indexes it until it is asked for: ask again. (Both wake the wait.)
    const IndexState state = file->wait_settled_or_stale(stop);
    if ((state == IndexState::kStale || state == IndexState::kUnknown) && !stop.stop_requested()) continue;
    return state == IndexState::kReady;
  }
}

bool Catalog::stopped_waiting(const FileRef& file, const std::stop_token& stop) const {
  if (!stop.stop_requested()) return false;
  const IndexState state = file->state();
  return state != IndexState::kReady && state != IndexState::kFailed;
}

bool Catalog::wait_for(const FileRef& file, std::chrono::milliseconds timeout) {
  return file->wait_settled_for(timeout);
}

IndexStatus Catalog::status(const FileRef& file) const { return file->status(); }

bool Catalog::refresh(const FileRef& file) {
  const base::Result<io::SourceStamp> stamp = access_.stamp(*file);
  if (!stamp.ok()) return false;  // gone: the open will fail on its own
  const index::SourceIdentity now = index::SourceIdentity::from_stamp(*stamp);
  std::shared_ptr<const index::BlockIndex> confirming;
  if (file->compare(now, &confirming) == CatalogFile::Change::kNone) return false;
  // Only the ctime moved: a chmod, or content rewritten in place with size and mtime put back.
  // The fingerprint tells them apart (FORMAT.md), read outside every lock.
  if (confirming) {
    const base::Result<OpenedSource> opened = open_source(access_, *file);
    if (file->confirm(confirming, opened.ok() ? &opened->id : nullptr)) return false;
  }
  uint64_t forget_id = 0;
  if (!file->go_stale(confirming, now, &forget_id)) return false;
  spdlog::info("{}: source changed since it was indexed; indexing it again", file->name());
  if (forget_id) engine_.forget(forget_id);
  return true;
}

CatalogSummary Catalog::summary() const {
  CatalogSummary s;
  std::vector<std::weak_ptr<CatalogFile>> files;
  {
    std::lock_guard lk(mu_);
    files = files_;
    s.built = built_;
    s.loaded = loaded_;
    s.failures = failures_;
    s.bytes_indexed = bytes_indexed_;
  }
  const BuildDriver::Activity activity = builds_.activity();  // (the driver's lock alone)
  s.seconds = activity.seconds;
  s.bytes_done = activity.bytes_done;
  s.build_seconds = activity.build_seconds;
  s.blocks_decoded = activity.blocks_decoded;
  // Each file's lock alone (never with the catalog's), one at a time.
  for (const auto& weak : files) {
    const FileRef f = weak.lock();
    if (!f) continue;
    const CatalogFile::Tally t = f->tally();
    if (t.state == IndexState::kReady) {
      ++s.ready;
    } else if (t.state == IndexState::kFailed) {
      ++s.failed;
    } else if (t.builder) {
      ++s.building;
      const uint64_t done = t.builder->bytes_done(), total = t.builder->bytes_total();
      s.bytes_done += done - t.builder->bytes_kept();  // (the rate: what it read)
      s.bytes_to_do += total > done ? total - done : 0;
    } else {
      ++s.queued;
      s.bytes_to_do += t.source_size;
    }
  }
  if (!s.seconds) s.bytes_done = 0;  // idle: no rate to speak of
  return s;
}

base::Result<std::shared_ptr<engine::Reader>> Catalog::open(const FileRef& file, std::stop_token stop) {
  base::Status error;  // why the last attempt could not open the source as the indexed file
  // A source replaced between the check and the open is caught by Engine::open, which compares
  // the opened file with the index; then check and index again.
  for (int attempt = 0; attempt < 3; ++attempt) {
    refresh(file);
    if (!wait(file, stop)) {
      if (stopped_waiting(file, stop)) return base::Status::error(EINTR, "interrupted");
      base::Status failed = file->status().error;
      if (!failed.ok()) return failed;
      continue;  // ready again since: look again
    }
    const CatalogFile::Current cur = file->current();
    if (cur.reader) return cur.reader;
    const std::shared_ptr<const index::BlockIndex>& idx = cur.index;
    const uint64_t file_id = cur.file_id;
    if (!idx) continue;  // changed again meanwhile
    base::Result<OpenedSource> opened = open_source(access_, *file);
    if (!opened.ok()) {
      error = opened.status();
      continue;
    }
    base::Result<std::shared_ptr<engine::Reader>> made = engine_.open(file_id, file->name(), std::move(opened->source), opened->id, idx);
    if (!made.ok()) {
      error = made.status();
      spdlog::debug("{}: open: {}", file->name(), error.message());
      continue;
    }
    std::shared_ptr<engine::Reader> reader = std::move(made).value();
    // A block that does not match its record makes the index stale: the read fails, and the next
    // open builds a fresh index (not the stored one, which matched the source's identity).
    reader->set_mismatch_handler([this, weak = std::weak_ptr<CatalogFile>(file), file_id](const std::string& what) {
      if (FileRef f = weak.lock()) distrust(f, file_id, what);
    });
    return file->share_reader(std::move(reader), file_id);
  }
  if (error.ok()) error = base::Status::error(ESTALE, "the source keeps changing");
  return error;
}

void Catalog::distrust(const FileRef& file, uint64_t file_id, const std::string& what) {
  if (!file->distrust(file_id)) return;  // already handled
  // Once per index: the first block found to differ says it for all (the others fail alike).
  spdlog::warn("{}: its index does not match the source ({}); reads of it fail until it is indexed again",
               file->name(), what);
  engine_.forget(file_id);
  if (distrust_listener_) distrust_listener_(file);
}

// --- builds ---

// --- the end ---

// --- streams and the end ---

bool Catalog::stream(const FileRef& file, const std::function<bool(const index::BlockStream::Block&)>& sink) {
  file->start_stream();
  return builds_.stream(file, sink);
}

index::BuildResult Catalog::stream_once(const io::SourceBytes& source,
                                        const std::function<bool(const index::BlockStream::Block&)>& sink) {
  return builds_.stream_once(source, sink);
}

void Catalog::shutdown() {
  for (const FileRef& f : builds_.stop()) settle_failed(f, base::Status::error(ECANCELED, "unmounting"));
}

size_t Catalog::pending() const { return builds_.pending(); }

}  // namespace mibz2::catalog
