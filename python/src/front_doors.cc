#include "session.h"

#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "io/paths.h"

namespace mibz2::python {
namespace {

engine::EngineOptions engine_options(const SessionOptions& o) {
  engine::EngineOptions e;
  e.threads = o.threads;
  e.cache_bytes = o.cache_bytes;
  return e;
}

std::mutex registry_mu;
// Every session made in this process and not released; those of a parent process (after a fork)
// are dropped from the list without being destroyed (see session.h).
std::vector<std::shared_ptr<Session>>* registry() {
  static auto* sessions = new std::vector<std::shared_ptr<Session>>();  // never destroyed: see release_sessions
  return sessions;
}

}  // namespace

Session::Session(const SessionOptions& options)
    : options_(options),
      pid_(getpid()),
      store_(options.index_dir),
      engine_(std::make_unique<engine::Engine>(engine_options(options))),
      catalog_(std::make_unique<catalog::Catalog>(*engine_, store_)) {}

Session::~Session() {
  catalog_.reset();
  engine_.reset();
}

catalog::FileRef Session::file(const std::string& path) {
  const std::string absolute = io::absolute_path(path);
  std::lock_guard lk(mu_);
  catalog::FileRef& ref = files_[absolute];
  if (!ref) ref = catalog_->add(absolute);
  return ref;
}

catalog::IndexStatus Session::obtain(const catalog::FileRef& file, bool rebuild,
                                    const std::function<bool(uint64_t, uint64_t)>& tick) {
  // The source may have changed since this process last looked: indexed again if so.
  catalog_->refresh(file);
  // Not ready before prepare() (or rebuilt) and ready as built in this process after: a build
  // finished while this call waited (its own, or another thread's it joined).
  const bool was_ready = !rebuild && catalog_->status(file).ready();
  catalog_->prepare(file, rebuild ? catalog::Need::kRebuild : catalog::Need::kNow);
  while (!catalog_->wait_for(file, std::chrono::milliseconds(200))) {
    const catalog::IndexStatus s = catalog_->status(file);
    if (tick && !tick(s.build_done, s.build_total)) return s;
  }
  catalog::IndexStatus s = catalog_->status(file);
  // The final count, whatever the timing: a build shorter than the first 200 ms wait would
  // otherwise report nothing, and a longer one its last figure before the end.
  if (tick && !was_ready && s.ready() && s.origin.built) {
    const uint64_t size = s.index->compressed_size();
    tick(size, size);
  }
  return s;
}

std::shared_ptr<Session> session_for(const SessionOptions& options) {
  std::lock_guard lk(registry_mu);
  auto& sessions = *registry();
  const pid_t me = getpid();
  // A forked child's inherited sessions have no threads: leak them (never destroyed, never used).
  for (auto& s : sessions)
    if (s->pid() != me) new std::shared_ptr<Session>(std::move(s));
  std::erase_if(sessions, [](const std::shared_ptr<Session>& s) { return !s; });
  for (const auto& s : sessions)
    if (s->options() == options) return s;
  sessions.push_back(std::make_shared<Session>(options));
  return sessions.back();
}

void release_sessions() {
  std::lock_guard lk(registry_mu);
  auto& sessions = *registry();
  const pid_t me = getpid();
  for (auto& s : sessions)
    if (s->pid() != me) new std::shared_ptr<Session>(std::move(s));
  sessions.clear();
}

}  // namespace mibz2::python
