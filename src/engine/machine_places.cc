#include "engine/machine_places.h"

#include <sched.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string_view>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include "engine/decoder_pool.h"
#include "index/xxh3.h"

namespace mibz2::engine {
namespace {

// The set's three semaphores: the free places, and the marks that say this code made it.
constexpr unsigned short kPlaces = 0, kMagic = 1, kVersion = 2, kSemaphores = 3;
constexpr short kMagicValue = 0x6d62;  // "mb"; a semaphore holds at most 32767
constexpr short kVersionValue = 1;

// The argument of semctl, which the caller defines (semctl(2)).
union SemArg {
  int val;
  semid_ds* buf;
  unsigned short* array;
};

// Makes or finds the set of `key`, checks it, and initialises it if no one has: the set's id, or
// -1 with *why set.
int open_checked(key_t key, unsigned places, std::string* why) {
  const auto failed = [&] {
    *why = fmt::format("semaphore set {:#x}: {}", key, std::strerror(errno));
    return -1;
  };
  const int id = semget(key, kSemaphores, IPC_CREAT | 0600);
  if (id < 0) return failed();
  semid_ds ds{};
  SemArg arg{};
  arg.buf = &ds;
  if (semctl(id, 0, IPC_STAT, arg) != 0) return failed();
  const uid_t me = geteuid();
  if (ds.sem_perm.cuid != me || ds.sem_perm.uid != me || (ds.sem_perm.mode & 0777) != 0600 ||
      ds.sem_nsems != kSemaphores) {
    *why = fmt::format("semaphore set {:#x} is not this user's own (creator uid {}, owner uid {}, mode {:o}, "
                       "{} semaphores)", key, ds.sem_perm.cuid, ds.sem_perm.uid, ds.sem_perm.mode & 0777,
                       ds.sem_nsems);
    return -1;
  }
  // Initialise it if its magic is still 0: all four operations happen at once or none does, so
  // only the first process to get here fills it, however many race (EAGAIN: already done).
  sembuf init[4] = {{kMagic, 0, IPC_NOWAIT},
                    {kMagic, kMagicValue, 0},
                    {kVersion, kVersionValue, 0},
                    {kPlaces, static_cast<short>(places), 0}};
  if (semop(id, init, 4) != 0 && errno != EAGAIN) return failed();
  const int magic = semctl(id, kMagic, GETVAL);
  const int version = semctl(id, kVersion, GETVAL);
  if (magic != kMagicValue || version != kVersionValue) {
    *why = fmt::format("semaphore set {:#x} was not made by mibz2 (marks {} and {})", key, magic, version);
    return -1;
  }
  return id;
}

timespec as_timespec(std::chrono::nanoseconds d) {
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(d);
  return timespec{static_cast<time_t>(s.count()), static_cast<long>((d - s).count())};
}

}  // namespace

key_t MachinePlaces::key_for(uid_t uid, const void* cpu_mask, size_t mask_bytes) {
  constexpr std::string_view kTag = "mibz2 machine places 1";
  index::Xxh3 h;
  h.update(kTag.data(), kTag.size());
  h.update(&uid, sizeof uid);
  h.update(cpu_mask, mask_bytes);
  // Positive and never IPC_PRIVATE (0).
  return static_cast<key_t>((h.digest() & 0x7ffffffe) | 1);
}

MachinePlaces* MachinePlaces::for_this_process() {
  static MachinePlaces* const places = []() -> MachinePlaces* {
    const char* share = std::getenv("MIBZ2_SHARE_CPUS");
    if (!share || std::string_view(share) != "1") return nullptr;
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    if (sched_getaffinity(0, sizeof cpus, &cpus) != 0) CPU_ZERO(&cpus);
    Settings settings;
    settings.key = key_for(geteuid(), &cpus, sizeof cpus);
    settings.places = std::min(available_cpus() + 1, 32767u);
    auto* made = new MachinePlaces(settings);
    if (!made->sharing())
      spdlog::warn("MIBZ2_SHARE_CPUS=1, but not sharing the CPUs with this user's other mibz2 processes: {}",
                   made->why_not());
    return made;
  }();
  return places;
}

MachinePlaces::MachinePlaces(const Settings& settings) : wait_(settings.wait) {
  if (settings.key == IPC_PRIVATE) return;
  id_ = open_checked(settings.key, std::clamp(settings.places, 1u, 32767u), &why_not_);
}

MachinePlaces::Turn MachinePlaces::take() {
  const int id = id_.load(std::memory_order_relaxed);
  if (id < 0) return Turn();
  sembuf op{kPlaces, -1, SEM_UNDO};
  if (only_try_.load(std::memory_order_relaxed)) {
    op.sem_flg |= IPC_NOWAIT;
    if (semop(id, &op, 1) == 0) {
      only_try_.store(false, std::memory_order_relaxed);
      return Turn(this);
    }
    if (errno == EIDRM || errno == EINVAL) set_removed();
    return Turn();
  }
  // semtimedop returns EINTR after a signal, and after the process was stopped and continued,
  // with no handler: the wait goes on for what is left of it.
  const auto deadline = std::chrono::steady_clock::now() + wait_;
  for (;;) {
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::nanoseconds::zero()) break;
    const timespec t = as_timespec(left);
    if (semtimedop(id, &op, 1, &t) == 0) return Turn(this);
    if (errno == EINTR) continue;
    if (errno == EIDRM || errno == EINVAL) set_removed();
    if (errno != EAGAIN) return Turn();  // EAGAIN: the wait ran out
    break;
  }
  if (!only_try_.exchange(true, std::memory_order_relaxed))
    spdlog::debug("no CPU place came in {} ms (a process that holds them stopped?): decoding without one",
                  wait_.count());
  return Turn();
}

void MachinePlaces::give_back() {
  const int id = id_.load(std::memory_order_relaxed);
  if (id < 0) return;
  sembuf op{kPlaces, 1, SEM_UNDO};
  if (semop(id, &op, 1) != 0 && (errno == EIDRM || errno == EINVAL)) set_removed();
}

void MachinePlaces::set_removed() {
  if (id_.exchange(-1) >= 0)
    spdlog::warn("the semaphore set of the CPU places went away (ipcrm?): not sharing the CPUs any more");
}

void MachinePlaces::Turn::give_back() {
  if (owner_) owner_->give_back();
  owner_ = nullptr;
}

}  // namespace mibz2::engine
