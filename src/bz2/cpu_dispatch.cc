#include "bz2/cpu_dispatch.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace mibz2::bz2 {
namespace {

bool cpu_has_avx2() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2");
  return has;
#else
  return false;
#endif
}

bool env_portable() {
  static const bool on = [] {
    const char* v = std::getenv("MIBZ2_BZ2_PORTABLE");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return on;
}

std::atomic<bool> g_forced_portable{false};

}  // namespace

bool use_avx2_paths() {
  return cpu_has_avx2() && !env_portable() && !g_forced_portable.load(std::memory_order_relaxed);
}

void force_portable_paths(bool on) { g_forced_portable.store(on, std::memory_order_relaxed); }

}  // namespace mibz2::bz2
