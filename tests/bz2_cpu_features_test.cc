// The CPU features the format layer asks for (bz2/cpu_features.h) against the kernel's own list in
// /proc/cpuinfo, and the dispatch level derived from them (bz2/cpu_dispatch.h): what each level
// needs, the environment's cap and set_max_isa().
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <ostream>
#include <set>
#include <sstream>
#include <string>

#include "bz2/cpu_dispatch.h"
#include "bz2/cpu_features.h"
#include "test_support.h"

namespace mibz2::bz2 {
// Levels by name in the tests' messages.
void PrintTo(Isa level, std::ostream* os) { *os << test::isa_name(level); }
}  // namespace mibz2::bz2

namespace mibz2::test {
namespace {

using bz2::CpuFeatures;
using bz2::Isa;

CpuFeatures all_features() { return {true, true, true, true, true, true}; }

TEST(CpuDispatch, EachLevelNeedsEveryFeatureOfItsOwnAndOfTheLevelsBelow) {
  EXPECT_EQ(bz2::best_isa(CpuFeatures{}), Isa::kPortable);
  EXPECT_EQ(bz2::best_isa(all_features()), Isa::kAvx512);
  CpuFeatures f = all_features();
  f.avx = false;  // used after ISA-L's code only, never for a level
  EXPECT_EQ(bz2::best_isa(f), Isa::kAvx512);
  // Without AVX2 or BMI2, AVX-512 is no use: the AVX-512 versions are built on the AVX2 ones.
  for (bool CpuFeatures::*needed : {&CpuFeatures::avx2, &CpuFeatures::bmi2}) {
    f = all_features();
    f.*needed = false;
    EXPECT_EQ(bz2::best_isa(f), Isa::kPortable);
  }
  for (bool CpuFeatures::*needed : {&CpuFeatures::avx512f, &CpuFeatures::avx512bw, &CpuFeatures::avx512vbmi}) {
    f = all_features();
    f.*needed = false;
    EXPECT_EQ(bz2::best_isa(f), Isa::kAvx2);
  }
}

#if MIBZ2_HAVE_X86_PATHS
// The flags of the first processor in /proc/cpuinfo (empty where there is none; other
// architectures name their features otherwise).
std::set<std::string> kernel_cpu_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> flags;
    for (std::string w; words >> w;) flags.insert(w);
    return flags;
  }
  return {};
}
#endif

TEST(CpuFeatures, AreTheKernelsOwn) {
  const CpuFeatures& f = bz2::cpu_features();
  EXPECT_EQ(&f, &bz2::cpu_features()) << "detected once";
#if MIBZ2_HAVE_X86_PATHS
  const std::set<std::string> flags = kernel_cpu_flags();
  if (flags.empty()) GTEST_SKIP() << "no flags in /proc/cpuinfo";
  EXPECT_EQ(f.avx, flags.count("avx") == 1);
  EXPECT_EQ(f.avx2, flags.count("avx2") == 1);
  EXPECT_EQ(f.bmi2, flags.count("bmi2") == 1);
  EXPECT_EQ(f.avx512f, flags.count("avx512f") == 1);
  EXPECT_EQ(f.avx512bw, flags.count("avx512bw") == 1);
  EXPECT_EQ(f.avx512vbmi, flags.count("avx512vbmi") == 1);
#else
  EXPECT_EQ(bz2::best_isa(f), Isa::kPortable);
#endif
}

// This CPU's level under MIBZ2_BZ2_ISA (ctest runs the bz2 suite under each cap).
Isa expected_uncapped() {
  Isa cap = Isa::kAvx512;
  const char* v = std::getenv("MIBZ2_BZ2_ISA");
  if (v && std::strcmp(v, "portable") == 0) cap = Isa::kPortable;
  if (v && std::strcmp(v, "avx2") == 0) cap = Isa::kAvx2;
  return std::min(bz2::best_isa(bz2::cpu_features()), cap);
}

TEST(CpuDispatch, LevelIsTheCpusUnderTheEnvironmentAndTheTestsCaps) {
  const Isa machine = expected_uncapped();
  EXPECT_EQ(bz2::isa(), machine);
  for (Isa cap : {Isa::kPortable, Isa::kAvx2, Isa::kAvx512}) {
    IsaCap capped(cap);
    EXPECT_EQ(bz2::isa(), std::min(machine, cap)) << isa_name(cap);
  }
  // The cap is lifted as it is left.
  EXPECT_EQ(bz2::isa(), machine);
}

}  // namespace
}  // namespace mibz2::test
