// Which code paths of the format layer run on this CPU. Hot loops come in a portable version and
// in versions compiled for an instruction set (function target attributes), picked at run time as
// libdeflate does: the default build stays portable (no -march=native).
#pragma once

namespace mibz2::bz2 {

// True when the AVX2 + BMI2 paths may run: the CPU has them, and neither force_portable_paths(true)
// nor the environment variable MIBZ2_BZ2_PORTABLE=1 (for benchmarks) asked for the portable ones.
bool use_avx2_paths();

// For tests: run the portable paths even on a CPU that has better ones, so that both are checked
// against libbz2 on the same inputs. Not for concurrent use with decoding.
void force_portable_paths(bool on);

}  // namespace mibz2::bz2
