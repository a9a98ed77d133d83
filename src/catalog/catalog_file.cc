#include "catalog/catalog_file.h"

#include <atomic>

#include "base/invariant.h"

namespace mibz2::catalog {
namespace {

// A fresh cache key for a file's content.
uint64_t new_file_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

bool settled(IndexState s) { return s == IndexState::kReady || s == IndexState::kFailed; }

}  // namespace

IndexStatus CatalogFile::status() const {
  IndexStatus s;
  std::shared_ptr<const index::IndexBuilder> builder;
  {
    std::lock_guard lk(mu_);
    s.state = state_;
    s.index = index_;
    s.error = error_;
    s.origin = origin_;
    builder = builder_;
  }
  if (builder) {
    s.build_done = builder->bytes_done();
    s.build_total = builder->bytes_total();
  }
  return s;
}

IndexState CatalogFile::state() const {
  std::lock_guard lk(mu_);
  return state_;
}

bool CatalogFile::wanted_now() const {
  std::lock_guard lk(mu_);
  return wanted_now_;
}

CatalogFile::Tally CatalogFile::tally() const {
  std::lock_guard lk(mu_);
  return {state_, state_ == IndexState::kBuilding ? builder_ : nullptr, source_size_};
}

IndexState CatalogFile::wait_settled_or_stale(std::stop_token stop) {
  std::unique_lock lk(mu_);
  settled_.wait(lk, stop, [&] {
    return settled(state_) || state_ == IndexState::kStale || state_ == IndexState::kUnknown;
  });
  return state_;
}

bool CatalogFile::wait_settled_for(std::chrono::milliseconds timeout) {
  std::unique_lock lk(mu_);
  return settled_.wait_for(lk, timeout, [&] { return settled(state_); });
}

bool CatalogFile::wait_settled() {
  std::unique_lock lk(mu_);
  settled_.wait(lk, [&] { return settled(state_); });
  return state_ == IndexState::kReady;
}

CatalogFile::Next CatalogFile::prepare(Need need) {
  const bool now = need != Need::kSoon;
  Next next;
  std::lock_guard lk(mu_);
  // Failed for a reason of the machine's (a read error, out of memory, cannot open), which says
  // nothing of the file: whoever needs it now gets one more attempt from the start (load, else
  // build), and everyone who asks meanwhile waits for that same attempt (it is loading, queued
  // or building). The tree walk (kSoon) never retries: no attempt without someone who needs
  // the file, so a lasting fault costs one attempt a request, never a loop.
  if (state_ == IndexState::kFailed && base::is_environment(error_) && need == Need::kNow)
    state_ = IndexState::kUnknown;
  switch (state_) {
    case IndexState::kReady:
    case IndexState::kFailed:
      if (need != Need::kRebuild) return next;
      next.forget_id = file_id_;
      previous_ = {};  // built from the start: a forced rebuild trusts nothing kept
      index_.reset();
      reader_.reset();
      state_ = IndexState::kQueued;
      next.kind = Next::kQueue;
      break;
    case IndexState::kBuilding:
      // Promote the build: its next jobs go at demand priority, and a parked one waits among
      // the urgent (asked once: one that parks later sees wanted_now_ itself).
      if (!now || wanted_now_) return next;
      next.kind = Next::kPromote;
      break;
    case IndexState::kLoading:
      // The loading thread queues the build, first in line, if there is no stored index.
      wanted_now_ = wanted_now_ || now;
      return next;
    case IndexState::kQueued:
      if (!now) return next;
      next.kind = Next::kQueue;  // moves to the front
      break;
    case IndexState::kUnknown:
    case IndexState::kStale:
      if (need == Need::kRebuild) previous_ = {};
      if (need == Need::kRebuild || distrust_stored_) {
        state_ = IndexState::kQueued;
        next.kind = Next::kQueue;
      } else {
        state_ = IndexState::kLoading;  // claimed: nobody else loads it meanwhile
        next.kind = Next::kLoad;
      }
      break;
  }
  wanted_now_ = wanted_now_ || now;
  next.now = now;
  return next;
}

CatalogFile::LoadClaim CatalogFile::claim_load() {
  std::lock_guard lk(mu_);
  if (state_ == IndexState::kReady) return LoadClaim::kReady;
  if (state_ != IndexState::kUnknown && state_ != IndexState::kStale) return LoadClaim::kBusy;
  if (distrust_stored_) return LoadClaim::kBusy;
  state_ = IndexState::kLoading;
  return LoadClaim::kClaimed;
}

bool CatalogFile::after_no_stored_index(bool build, bool* now) {
  std::lock_guard lk(mu_);
  MIBZ2_INVARIANT(state_ == IndexState::kLoading);
  // Someone may have asked for it (urgently) while it loaded: the build is theirs to have.
  *now = wanted_now_;
  const bool queue = build || wanted_now_;
  state_ = queue ? IndexState::kQueued : IndexState::kUnknown;
  return queue;
}

void CatalogFile::note_source_size(uint64_t size) {
  std::lock_guard lk(mu_);
  source_size_ = size;
}

void CatalogFile::note_not_loaded(std::string why) {
  std::lock_guard lk(mu_);
  not_loaded_reason_ = std::move(why);
}

bool CatalogFile::start_building() {
  std::lock_guard lk(mu_);
  if (state_ != IndexState::kQueued) return false;  // settled another way meanwhile
  state_ = IndexState::kBuilding;
  return true;
}

void CatalogFile::start_stream() {
  std::lock_guard lk(mu_);
  // A stream is its file's only build (mibz2 cat): no other build can be under way.
  MIBZ2_INVARIANT(state_ != IndexState::kBuilding && state_ != IndexState::kQueued && state_ != IndexState::kLoading);
  state_ = IndexState::kBuilding;
}

void CatalogFile::building_with(std::shared_ptr<const index::IndexBuilder> builder) {
  std::lock_guard lk(mu_);
  builder_ = std::move(builder);
}

void CatalogFile::settle_ready(std::shared_ptr<const index::BlockIndex> index, IndexOrigin origin) {
  {
    std::lock_guard lk(mu_);
    MIBZ2_INVARIANT(state_ == IndexState::kLoading || state_ == IndexState::kBuilding);
    if (origin.built) origin.not_loaded_reason = std::move(not_loaded_reason_);
    state_ = IndexState::kReady;
    confirmed_ctime_ns_ = index->source.ctime_ns;
    index_ = std::move(index);
    file_id_ = new_file_id();
    error_ = {};
    origin_ = std::move(origin);
    builder_.reset();
    wanted_now_ = false;
    distrust_stored_ = false;
    previous_ = {};
  }
  notify();
}

void CatalogFile::settle_failed(base::Status why, IndexOrigin origin, index::SourceIdentity as_it_was) {
  MIBZ2_INVARIANT(!why.ok());
  {
    std::lock_guard lk(mu_);
    MIBZ2_INVARIANT(state_ == IndexState::kLoading || state_ == IndexState::kQueued ||
                    state_ == IndexState::kBuilding);
    state_ = IndexState::kFailed;
    error_ = std::move(why);
    origin_ = std::move(origin);
    not_loaded_reason_.clear();
    failed_identity_ = as_it_was;
    confirmed_ctime_ns_ = failed_identity_.ctime_ns;
    index_.reset();
    builder_.reset();
    wanted_now_ = false;
    previous_ = {};
  }
  notify();
}

void CatalogFile::end_pass(bool ok) {
  {
    std::lock_guard lk(mu_);
    MIBZ2_INVARIANT(state_ == IndexState::kBuilding);
    state_ = ok ? IndexState::kReady : IndexState::kFailed;
    builder_.reset();
  }
  notify();
}

bool CatalogFile::rebuild_after_change() {
  std::lock_guard lk(mu_);
  MIBZ2_INVARIANT(state_ == IndexState::kBuilding);
  const bool again = wanted_now_;
  state_ = again ? IndexState::kQueued : IndexState::kStale;
  builder_.reset();
  return again;
}

CatalogFile::Change CatalogFile::compare(const index::SourceIdentity& now,
                                         std::shared_ptr<const index::BlockIndex>* confirming) const {
  std::lock_guard lk(mu_);
  if (!settled(state_)) return Change::kNone;
  const index::SourceIdentity& was = state_ == IndexState::kReady ? index_->source : failed_identity_;
  if (was.same_stat(now) && confirmed_ctime_ns_ == now.ctime_ns) return Change::kNone;
  if (!was.same_stat(now) || state_ != IndexState::kReady) return Change::kChanged;
  *confirming = index_;
  return Change::kCtimeOnly;
}

bool CatalogFile::confirm(const std::shared_ptr<const index::BlockIndex>& confirming,
                          const index::SourceIdentity* opened) {
  std::lock_guard lk(mu_);
  if (index_ != confirming) return true;  // settled again meanwhile
  if (opened && *opened == confirming->source) {
    confirmed_ctime_ns_ = opened->ctime_ns;
    return true;
  }
  return false;
}

bool CatalogFile::go_stale(const std::shared_ptr<const index::BlockIndex>& confirming,
                           const index::SourceIdentity& now, uint64_t* forget_id) {
  {
    std::lock_guard lk(mu_);
    if (!settled(state_)) return false;
    if (confirming && index_ != confirming) return false;  // settled again meanwhile
    // Changed: the old content is forgotten; it is indexed again at the next need, keeping what
    // can be kept of its index if the file only grew.
    *forget_id = file_id_;
    // (Only then: an index kept for a file replaced or rewritten would be memory held for nothing.)
    if (state_ == IndexState::kReady && now.inode == index_->source.inode && now.size > index_->source.size)
      previous_ = {index_, origin_.stored_file};
    state_ = IndexState::kStale;
    index_.reset();
    reader_.reset();
  }
  notify();  // a wait() that found it ready just now asks for it again
  return true;
}

bool CatalogFile::distrust(uint64_t file_id) {
  {
    std::lock_guard lk(mu_);
    if (file_id_ != file_id || state_ != IndexState::kReady) return false;  // already handled
    state_ = IndexState::kStale;
    index_.reset();
    reader_.reset();
    distrust_stored_ = true;
    previous_ = {};
  }
  notify();  // a wait() that found it ready just now asks for it again
  return true;
}

CatalogFile::Previous CatalogFile::previous() const {
  std::lock_guard lk(mu_);
  return previous_;
}

void CatalogFile::forget_previous() {
  std::lock_guard lk(mu_);
  previous_ = {};
}

CatalogFile::Current CatalogFile::current() const {
  std::lock_guard lk(mu_);
  return {reader_.lock(), index_, file_id_};
}

std::shared_ptr<engine::Reader> CatalogFile::share_reader(std::shared_ptr<engine::Reader> reader, uint64_t file_id) {
  std::lock_guard lk(mu_);
  if (file_id_ == file_id) {
    // Opens racing here each made a Reader: the first one stored is the file's, so that its
    // readers share one in-flight table and a block is decoded once for all of them.
    if (auto shared = reader_.lock()) return shared;
    reader_ = reader;
  }
  return reader;
}

}  // namespace mibz2::catalog
