#include "bz2/cpu_dispatch.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace mibz2::bz2 {
namespace {

// The CPU's level under the environment's cap. Worked out at each call (derive_isa() keeps it):
// a function's static would be initialised under a once-flag, which a child forked while another
// thread held it would wait on for ever.
Isa machine_isa() {
  Isa cap = Isa::kAvx512;
  const char* v = std::getenv("MIBZ2_BZ2_ISA");
  if (v && std::strcmp(v, "portable") == 0) cap = Isa::kPortable;
  if (v && std::strcmp(v, "avx2") == 0) cap = Isa::kAvx2;
  return std::min(best_isa(cpu_features()), cap);
}

}  // namespace

namespace detail {

constinit std::atomic<int> g_isa{-1};

// A set_max_isa() that came first stands.
Isa derive_isa() {
  int expected = -1;
  const int level = static_cast<int>(machine_isa());
  if (g_isa.compare_exchange_strong(expected, level, std::memory_order_relaxed)) return static_cast<Isa>(level);
  return static_cast<Isa>(expected);
}

}  // namespace detail

void set_max_isa(Isa level) {
  detail::g_isa.store(static_cast<int>(std::min(machine_isa(), level)), std::memory_order_relaxed);
}

}  // namespace mibz2::bz2
