#include "catalog/build_scheduler.h"

#include <algorithm>

#include "base/invariant.h"

namespace mibz2::catalog {

BuildScheduler::BuildScheduler(unsigned slots, unsigned background, std::chrono::nanoseconds quantum)
    : slots_(std::max(slots, 1u)),
      background_slots_(std::clamp(background, 1u, std::max(slots, 1u))),
      quantum_ns_(quantum.count()) {}

bool BuildScheduler::queue(const std::shared_ptr<CatalogFile>& file, bool urgent) {
  std::lock_guard lk(mu_);
  if (stopped_) return false;
  for (const int cls : {kUrgent, kBackground}) {
    auto& q = waiting_[cls];
    const auto it = std::find(q.begin(), q.end(), file);
    if (it == q.end()) continue;
    if (!urgent) return true;  // already waiting, at least as soon
    q.erase(it);
    break;
  }
  waiting_[urgent ? kUrgent : kBackground].push_back(file);
  return true;
}

void BuildScheduler::promote(const std::shared_ptr<CatalogFile>& file) {
  std::lock_guard lk(mu_);
  auto& q = parked_[kBackground];
  const auto it = std::find_if(q.begin(), q.end(), [&](const auto& t) { return t->file == file; });
  if (it == q.end()) return;
  (*it)->urgent_ = true;
  parked_[kUrgent].push_back(std::move(*it));
  q.erase(it);
}

std::optional<BuildScheduler::Start> BuildScheduler::next() {
  std::lock_guard lk(mu_);
  if (stopped_ || active_ >= slots_) return std::nullopt;
  for (const int cls : {kUrgent, kBackground}) {
    if (cls == kBackground && background_active_ >= background_slots_) break;
    Start start;
    start.urgent = cls == kUrgent;
    if (!waiting_[cls].empty()) {
      start.file = std::move(waiting_[cls].back());
      waiting_[cls].pop_back();
    } else if (!parked_[cls].empty()) {
      start.parked = std::move(parked_[cls].front());
      parked_[cls].pop_front();
      start.parked->active_ = true;
      start.parked->urgent_ = start.urgent;
      start.parked->served_ns.store(0, std::memory_order_relaxed);
    } else {
      continue;
    }
    ++active_;
    if (!start.urgent) ++background_active_;
    return start;
  }
  return std::nullopt;
}

void BuildScheduler::started(BuildTurn& turn, bool urgent) {
  std::lock_guard lk(mu_);
  turn.active_ = true;
  turn.urgent_ = urgent;
  turn.served_ns.store(0, std::memory_order_relaxed);
}

void BuildScheduler::give_back(bool urgent) {
  std::lock_guard lk(mu_);
  MIBZ2_INVARIANT(active_ > 0 && (urgent || background_active_ > 0));
  --active_;
  if (!urgent) --background_active_;
}

void BuildScheduler::release_locked(BuildTurn& turn) {
  turn.active_ = false;
  --active_;
  if (!turn.urgent_) --background_active_;
}

BuildScheduler::Verdict BuildScheduler::job_done(BuildTurn& turn, bool urgent) {
  std::lock_guard lk(mu_);
  if (!turn.active_) return Verdict::kGoOn;  // yielded already: it is on its way to be parked
  Verdict verdict = Verdict::kGoOn;
  if (urgent && !turn.urgent_) {
    turn.urgent_ = true;
    --background_active_;
    verdict = Verdict::kSlotFreed;
  }
  // Only files that have not had a turn yet make a build step aside: a parked build waits for a
  // slot that frees by itself, so large builds are not switched for one another.
  const bool newcomer = !waiting_[kUrgent].empty() || (!turn.urgent_ && !waiting_[kBackground].empty());
  if (newcomer && turn.served_ns.load(std::memory_order_relaxed) >= quantum_ns_) {
    release_locked(turn);
    return Verdict::kYield;
  }
  return verdict;
}

bool BuildScheduler::park(const std::shared_ptr<BuildTurn>& turn, bool urgent) {
  std::lock_guard lk(mu_);
  if (stopped_) return false;
  MIBZ2_INVARIANT(!turn->active_);
  turn->urgent_ = turn->urgent_ || urgent;
  parked_[turn->urgent_ ? kUrgent : kBackground].push_back(turn);
  return true;
}

void BuildScheduler::ended(BuildTurn& turn) {
  std::lock_guard lk(mu_);
  if (turn.active_) release_locked(turn);
}

std::vector<std::shared_ptr<CatalogFile>> BuildScheduler::stop() {
  std::lock_guard lk(mu_);
  stopped_ = true;
  std::vector<std::shared_ptr<CatalogFile>> files;
  for (auto& q : waiting_) {
    files.insert(files.end(), q.begin(), q.end());
    q.clear();
  }
  for (auto& q : parked_) q.clear();
  return files;
}

void BuildScheduler::set_quantum(std::chrono::nanoseconds quantum) {
  std::lock_guard lk(mu_);
  quantum_ns_ = quantum.count();
}

size_t BuildScheduler::waiting() const {
  std::lock_guard lk(mu_);
  return waiting_[kUrgent].size() + waiting_[kBackground].size();
}

}  // namespace mibz2::catalog
