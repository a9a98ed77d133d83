// What the CPU offers the format layer's hot loops, asked once, in this one place. Hot loops come
// in a portable version and in versions compiled for an instruction set (function target
// attributes), picked at run time as libdeflate does: the default build stays portable (no
// -march=native). Which version runs is cpu_dispatch.h's level, derived from these features.
#pragma once

// 1 where the x86-64 versions are compiled (GCC or Clang on x86-64: target attributes and
// <immintrin.h>): every version for an instruction set is under this one condition.
#if defined(__x86_64__) && defined(__GNUC__)
#define MIBZ2_HAVE_X86_PATHS 1
#else
#define MIBZ2_HAVE_X86_PATHS 0
#endif

namespace mibz2::bz2 {

// One flag per feature any code of the format layer uses (all false off x86-64).
struct CpuFeatures {
  bool avx = false;         // vzeroupper (crc32.cc, after ISA-L's vector code)
  bool avx2 = false;        // the scanner's filter, the symbol decoder and RLE1
  bool bmi2 = false;        // with AVX2: the symbol decoder and RLE1
  bool avx512f = false;     // with BW and VBMI: the symbol decoder's MTF and zero-run fold
  bool avx512bw = false;
  bool avx512vbmi = false;
};

// This CPU's features (with the operating system's support for their registers), detected once,
// when the program is loaded; any thread may call it (not a static initialiser of another file).
const CpuFeatures& cpu_features();

}  // namespace mibz2::bz2
