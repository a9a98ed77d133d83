#include "bz2/cpu_dispatch.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

namespace mibz2::bz2 {
namespace {

Isa cpu_isa() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const Isa level = [] {
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("bmi2")) return Isa::kPortable;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vbmi"))
      return Isa::kAvx512;
    return Isa::kAvx2;
  }();
  return level;
#else
  return Isa::kPortable;
#endif
}

Isa env_cap() {
  static const Isa cap = [] {
    const char* v = std::getenv("MIBZ2_BZ2_ISA");
    if (v && std::strcmp(v, "portable") == 0) return Isa::kPortable;
    if (v && std::strcmp(v, "avx2") == 0) return Isa::kAvx2;
    return Isa::kAvx512;
  }();
  return cap;
}

std::atomic<int> g_cap{static_cast<int>(Isa::kAvx512)};

}  // namespace

Isa isa() {
  const int level = std::min({static_cast<int>(cpu_isa()), static_cast<int>(env_cap()),
                              g_cap.load(std::memory_order_relaxed)});
  return static_cast<Isa>(level);
}

void set_max_isa(Isa level) { g_cap.store(static_cast<int>(level), std::memory_order_relaxed); }

}  // namespace mibz2::bz2
