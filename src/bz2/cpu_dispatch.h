// Which versions of the format layer's hot loops run (cpu_features.h): one level, derived from the
// CPU's features once and read at every dispatch with one load.
#pragma once

#include <atomic>

#include "bz2/cpu_features.h"

namespace mibz2::bz2 {

enum class Isa {
  kPortable = 0,  // C++ only
  kAvx2 = 1,      // AVX2 + BMI2
  kAvx512 = 2,    // kAvx2 + AVX-512 F/BW/VBMI (64-byte byte permutes)
};

// The best level a CPU with `f` runs: each level needs every feature of the levels below it.
constexpr Isa best_isa(const CpuFeatures& f) {
  if (!f.avx2 || !f.bmi2) return Isa::kPortable;
  if (f.avx512f && f.avx512bw && f.avx512vbmi) return Isa::kAvx512;
  return Isa::kAvx2;
}

namespace detail {
// isa()'s level, or -1 before the first call derives it.
extern constinit std::atomic<int> g_isa;
Isa derive_isa();
}  // namespace detail

// The best level this CPU runs, capped by set_max_isa() and by the environment variable
// MIBZ2_BZ2_ISA=portable|avx2 (for benchmarks).
inline Isa isa() {
  const int level = detail::g_isa.load(std::memory_order_relaxed);
  if (level >= 0) [[likely]]
    return static_cast<Isa>(level);
  return detail::derive_isa();
}

// For tests: cap the level, so that every path is checked against libbz2 on the same inputs
// (kAvx512 removes the cap). Not for concurrent use with decoding: a block being decoded reads the
// level more than once and could run its passes at different levels.
void set_max_isa(Isa level);

}  // namespace mibz2::bz2
