#include "bz2/cpu_features.h"

namespace mibz2::bz2 {

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = [] {
    CpuFeatures f;
#if MIBZ2_HAVE_X86_PATHS
    f.avx = __builtin_cpu_supports("avx");
    f.avx2 = __builtin_cpu_supports("avx2");
    f.bmi2 = __builtin_cpu_supports("bmi2");
    f.avx512f = __builtin_cpu_supports("avx512f");
    f.avx512bw = __builtin_cpu_supports("avx512bw");
    f.avx512vbmi = __builtin_cpu_supports("avx512vbmi");
#endif
    return f;
  }();
  return features;
}

}  // namespace mibz2::bz2
