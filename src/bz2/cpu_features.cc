#include "bz2/cpu_features.h"

namespace mibz2::bz2 {
namespace {

CpuFeatures detect() {
  CpuFeatures f;
#if MIBZ2_HAVE_X86_PATHS
  __builtin_cpu_init();  // libgcc's own constructor may not have run yet (this runs in one)
  f.avx = __builtin_cpu_supports("avx");
  f.avx2 = __builtin_cpu_supports("avx2");
  f.bmi2 = __builtin_cpu_supports("bmi2");
  f.avx512f = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512vbmi = __builtin_cpu_supports("avx512vbmi");
#endif
  return f;
}

// Detected when the program (or the Python module) is loaded, before any thread runs, rather than
// at the first call: a function's static is initialised under a once-flag, and a child forked
// while another thread was initialising it would wait on that flag for ever.
const CpuFeatures g_features = detect();

}  // namespace

const CpuFeatures& cpu_features() { return g_features; }

}  // namespace mibz2::bz2
