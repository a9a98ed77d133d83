// Which code paths of the format layer run on this CPU. Hot loops come in a portable version and
// in versions compiled for an instruction set (function target attributes), picked at run time as
// libdeflate does: the default build stays portable (no -march=native).
#pragma once

namespace mibz2::bz2 {

enum class Isa {
  kPortable = 0,  // C++ only
  kAvx2 = 1,      // AVX2 + BMI2
  kAvx512 = 2,    // kAvx2 + AVX-512 F/BW/VBMI (64-byte byte permutes)
};

// The best level this CPU runs, capped by set_max_isa() and by the environment variable
// MIBZ2_BZ2_ISA=portable|avx2 (for benchmarks).
Isa isa();

// For tests: cap the level, so that every path is checked against libbz2 on the same inputs
// (kAvx512 removes the cap). Not for concurrent use with decoding.
void set_max_isa(Isa level);

}  // namespace mibz2::bz2
