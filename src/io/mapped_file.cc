#include "io/mapped_file.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <string>

namespace mibz2::io {
namespace {

// The guard's table: one slot per live mapping, found by the SIGBUS handler without a lock or an
// allocation (a handler may do neither). A slot's range is read only while its state is kLive,
// published with release after the range was written.
enum SlotState : int { kFree = 0, kClaimed = 1, kLive = 2 };
struct Slot {
  std::atomic<int> state{kFree};
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<bool> revoked{false};
};
Slot g_slots[MappedFile::kMaxMappings];
std::atomic<size_t> g_slots_used{0};  // slots [0, g_slots_used) were ever claimed: what the handler scans
std::atomic<uint64_t> g_caught{0};

std::mutex g_install_mu;           // installing the handler (map() only)
struct sigaction g_previous = {};  // the SIGBUS handler before ours; written before ours is installed

void forward(int sig, siginfo_t* info, void* context) {
  const struct sigaction& p = g_previous;
  if ((p.sa_flags & SA_SIGINFO) && p.sa_sigaction) return p.sa_sigaction(sig, info, context);
  if (p.sa_handler != SIG_DFL && p.sa_handler != SIG_IGN && p.sa_handler) return p.sa_handler(sig);
  // The default: the process dies of the signal, as it would have without the guard (a fault
  // cannot be ignored: returning would only fault again).
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  raise(sig);
}

void on_sigbus(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  // Only a fault the kernel raised (si_code > 0) names an address; a SIGBUS sent by kill does not.
  if (info && info->si_code > 0) {
    const uintptr_t addr = reinterpret_cast<uintptr_t>(info->si_addr);
    const size_t used = g_slots_used.load(std::memory_order_acquire);
    for (size_t i = 0; i < used; ++i) {
      Slot& s = g_slots[i];
      if (s.state.load(std::memory_order_acquire) != kLive) continue;
      const uintptr_t begin = s.begin.load(std::memory_order_relaxed);
      const uintptr_t end = s.end.load(std::memory_order_relaxed);
      if (addr < begin || addr >= end) continue;
      // Revoked before the zeros arrive: a reader that reads a zero and then revoked() sees true.
      s.revoked.store(true, std::memory_order_seq_cst);
      // The raw system call: a sanitizer's mmap interceptor is not for signal handlers.
      const long p = syscall(SYS_mmap, begin, end - begin, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
      if (p != -1) {
        g_caught.fetch_add(1, std::memory_order_relaxed);
        errno = saved_errno;
        return;  // the touch is made again, and reads a zero
      }
      break;  // no memory even for zero pages: as if there were no guard
    }
  }
  errno = saved_errno;
  forward(sig, info, context);
}

// Installs the guard unless it is the handler now: at every map(), so that a handler installed
// since (Python's faulthandler.enable(), say) is put behind the guard again rather than before it.
base::Status install_guard() {
  std::lock_guard lk(g_install_mu);
  struct sigaction now = {};
  if (sigaction(SIGBUS, nullptr, &now) != 0) return base::Status::os_error(errno, "cannot read the SIGBUS handler");
  if ((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_sigbus) return {};
  g_previous = now;
  struct sigaction ours = {};
  ours.sa_sigaction = on_sigbus;
  ours.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&ours.sa_mask);
  if (sigaction(SIGBUS, &ours, nullptr) != 0) return base::Status::os_error(errno, "cannot install the SIGBUS guard");
  return {};
}

// A free slot, now kClaimed; kMaxMappings when the table is full.
size_t claim_slot() {
  for (size_t i = 0; i < MappedFile::kMaxMappings; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kClaimed, std::memory_order_acq_rel)) continue;
    size_t used = g_slots_used.load(std::memory_order_relaxed);
    while (used < i + 1 && !g_slots_used.compare_exchange_weak(used, i + 1, std::memory_order_acq_rel)) {
    }
    return i;
  }
  return MappedFile::kMaxMappings;
}

}  // namespace

base::Result<std::shared_ptr<const MappedFile>> MappedFile::map(int fd, size_t size) {
  if (size == 0) return base::Status::error(EINVAL, "nothing to map");
  MIBZ2_FORWARD_IF_ERROR(install_guard());
  const size_t slot = claim_slot();
  if (slot == kMaxMappings) return base::Status::error(EMFILE, "too many files mapped at once");
  void* p = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    const int e = errno;
    g_slots[slot].state.store(kFree, std::memory_order_release);
    return base::Status::os_error(e, "cannot map the file");
  }
  Slot& s = g_slots[slot];
  s.begin.store(reinterpret_cast<uintptr_t>(p), std::memory_order_relaxed);
  s.end.store(reinterpret_cast<uintptr_t>(p) + size, std::memory_order_relaxed);
  s.revoked.store(false, std::memory_order_relaxed);
  s.state.store(kLive, std::memory_order_release);
  return std::shared_ptr<const MappedFile>(new MappedFile(static_cast<const uint8_t*>(p), size, slot));
}

MappedFile::~MappedFile() {
  Slot& s = g_slots[slot_];
  // Out of the handler's sight before the range goes: nothing touches it any more (its owner is gone).
  s.state.store(kClaimed, std::memory_order_release);
  munmap(const_cast<uint8_t*>(data_), size_);
  s.begin.store(0, std::memory_order_relaxed);
  s.end.store(0, std::memory_order_relaxed);
  s.state.store(kFree, std::memory_order_release);
}

bool MappedFile::revoked() const { return g_slots[slot_].revoked.load(std::memory_order_seq_cst); }

uint64_t MappedFile::caught_for_testing() { return g_caught.load(std::memory_order_relaxed); }

}  // namespace mibz2::io
