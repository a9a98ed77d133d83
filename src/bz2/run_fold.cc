#include "bz2/run_fold.h"

#if MIBZ2_HAVE_X86_PATHS
#include <immintrin.h>

#include <bit>

namespace mibz2::bz2 {
namespace {

// The unmasked forms of some intrinsics start from _mm512_undefined_epi32(), which GCC 12 reports
// as maybe uninitialized (GCC bug 105593); their maskz forms with every lane set are the same
// instructions.
constexpr __mmask16 kAll = 0xFFFF;

// Lane i of the result is v[i - S], or fill's for i < S.
template <int S>
__attribute__((target("avx512f"), always_inline)) inline __m512i shift_up(__m512i v, __m512i fill) {
  return _mm512_maskz_alignr_epi32(kAll, v, fill, 16 - S);
}

}  // namespace

// A chunk is 16 symbols in 32-bit lanes (a run's value reaches 2^22). Every lane's run digit
// position and every literal's run come from two prefix scans of four steps each, so the only
// state carried from chunk to chunk is the open run: its digits so far, which shift the worth of
// the chunk's leading digits, and its value, which the chunk's first literal takes.
// Real JSON, mibz2 cat -j 1: the scalar fold held about 28% of decode_symbols' samples.
__attribute__((target("avx2,bmi2,avx512f,avx512bw,avx512vbmi"))) uint32_t fold_runs_avx512(
    const uint16_t* syms, uint32_t k, RunState& runs, Literal* lits, uint32_t* error_at) {
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i none = _mm512_set1_epi32(-1);
  const __m512i zero = _mm512_setzero_si512();
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i lane_high = _mm512_slli_epi32(lane, 16);
  // Interleaves the compressed runs (a) and index|position words (b) into Literal order.
  const __m512i first_eight = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i last_eight = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  uint32_t digits = static_cast<uint32_t>(std::countr_zero(runs.weight));  // of the open run
  uint32_t carried = runs.length;                                         // its value
  uint32_t m = 0;
  uint32_t j = 0;
  for (; j + 16 <= k; j += 16) {
    const __m512i sym = _mm512_maskz_cvtepu16_epi32(kAll, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(syms + j)));
    const __mmask16 literal = _mm512_cmpgt_epu32_mask(sym, one);
    // The chunk's leading digits continue the open run: the one at lane i has digits + i before
    // it. One too many ends the fast path; the scalar fold finds which and reports it.
    const uint32_t leading = literal ? static_cast<uint32_t>(std::countr_zero(literal)) : 16;
    if (leading > 0 && digits + leading - 1 >= kMaxRunDigits) break;

    // last: the last literal lane at or before each lane (-1: none); before: strictly before.
    __m512i last = _mm512_mask_blend_epi32(literal, none, lane);
    last = _mm512_maskz_max_epi32(kAll, last, shift_up<1>(last, none));
    last = _mm512_maskz_max_epi32(kAll, last, shift_up<2>(last, none));
    last = _mm512_maskz_max_epi32(kAll, last, shift_up<4>(last, none));
    last = _mm512_maskz_max_epi32(kAll, last, shift_up<8>(last, none));
    const __m512i before = shift_up<1>(last, none);
    // Each digit's worth, (1 or 2) << its position in its run (leading digits: from the chunk's
    // start), then the inclusive prefix sums of the worths.
    const __m512i position = _mm512_sub_epi32(_mm512_sub_epi32(lane, before), one);
    __m512i sum = _mm512_maskz_sllv_epi32(static_cast<__mmask16>(~literal), _mm512_add_epi32(sym, one), position);
    sum = _mm512_add_epi32(sum, shift_up<1>(sum, zero));
    sum = _mm512_add_epi32(sum, shift_up<2>(sum, zero));
    sum = _mm512_add_epi32(sum, shift_up<4>(sum, zero));
    sum = _mm512_add_epi32(sum, shift_up<8>(sum, zero));
    // A literal's run: the digits' sum since the literal before it.
    const __mmask16 has_before = _mm512_cmpge_epi32_mask(before, zero);
    __m512i run = _mm512_sub_epi32(shift_up<1>(sum, zero), _mm512_maskz_permutexvar_epi32(has_before, before, sum));
    // The chunk's first literal ends the open run: its leading digits count from `digits`.
    run = _mm512_mask_add_epi32(run, literal & static_cast<__mmask16>(~has_before),
                                _mm512_maskz_sll_epi32(kAll, run, _mm_cvtsi32_si128(static_cast<int>(digits))),
                                _mm512_set1_epi32(static_cast<int>(carried)));
    // index | position << 16: symbol - 1 in the low half, the batch position in the high one.
    const __m512i word = _mm512_add_epi32(_mm512_add_epi32(sym, lane_high),
                                          _mm512_set1_epi32(static_cast<int>((j << 16) - 1)));
    const __m512i runs_packed = _mm512_maskz_compress_epi32(literal, run);
    const __m512i words_packed = _mm512_maskz_compress_epi32(literal, word);
    _mm512_storeu_si512(lits + m, _mm512_permutex2var_epi32(runs_packed, first_eight, words_packed));
    _mm512_storeu_si512(lits + m + 8, _mm512_permutex2var_epi32(runs_packed, last_eight, words_packed));
    m += static_cast<uint32_t>(std::popcount(static_cast<uint32_t>(literal)));

    // The run left open at the chunk's end.
    const uint32_t total = static_cast<uint32_t>(_mm512_cvtsi512_si32(_mm512_maskz_alignr_epi32(kAll, sum, sum, 15)));
    if (literal == 0) {
      carried += total << digits;
      digits += 16;
    } else {
      const int at = 31 - std::countl_zero(static_cast<uint32_t>(literal));
      const uint32_t upto = static_cast<uint32_t>(_mm512_cvtsi512_si32(_mm512_maskz_permutexvar_epi32(kAll, _mm512_set1_epi32(at), sum)));
      carried = total - upto;
      digits = static_cast<uint32_t>(15 - at);
    }
  }
  runs = RunState{carried, 1u << digits};
  return fold_runs(syms, j, k, runs, lits, m, error_at);
}

namespace {

// What the AVX-512 fold's scans over its literal mask work out, looked up instead for a chunk of 8
// symbols (256 masks; AVX2 has neither compress nor masked lanes, and a scan across its two
// 128-bit halves costs a lane-crossing shuffle a step).
struct FoldTables {
  // Lane i: its digit's position in its run, counted from the last literal lane before it (from
  // the chunk's start for the chunk's leading digits). Not used for literal lanes.
  uint8_t position[256][8];
  // Lane i: the last literal lane before it, or -1 (none in the chunk).
  int8_t before[256][8];
  // The literal lanes in the order the stores want them: two 32-bit unpacks of runs and words
  // interleave lanes 0,1 | 4,5 and 2,3 | 6,7, so literal q goes to lane kStoreLane[q].
  uint8_t compress[256][8];
  constexpr FoldTables() : position{}, before{}, compress{} {
    constexpr uint8_t kStoreLane[8] = {0, 1, 4, 5, 2, 3, 6, 7};
    for (int mask = 0; mask < 256; ++mask) {
      int last = -1;
      int count = 0;
      for (int i = 0; i < 8; ++i) {
        before[mask][i] = static_cast<int8_t>(last);
        position[mask][i] = static_cast<uint8_t>(i - last - 1);
        if ((mask >> i) & 1) {
          compress[mask][kStoreLane[count++]] = static_cast<uint8_t>(i);
          last = i;
        }
      }
    }
  }
};
constexpr FoldTables kFold{};

}  // namespace

// The AVX-512 fold's arithmetic on 8 lanes: the digit positions and the literal before each lane
// come from kFold, the prefix sums of the worths take two in-half shifts and one carry across the
// halves. Instructions (callgrind, mibz2 cat -j 1 with AVX2, first 20 MB of the linux tar at
// bzip2 -9): decode_symbols 448 M with the scalar fold inlined, 255 M + 62 M for this one.
__attribute__((target("avx2,bmi2"))) uint32_t fold_runs_avx2(const uint16_t* syms, uint32_t k, RunState& runs,
                                                            Literal* lits, uint32_t* error_at) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i none = _mm256_set1_epi32(-1);
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i lane_high = _mm256_slli_epi32(lane, 16);
  uint32_t digits = static_cast<uint32_t>(std::countr_zero(runs.weight));  // of the open run
  uint32_t carried = runs.length;                                         // its value
  uint32_t m = 0;
  uint32_t j = 0;
  for (; j + 8 <= k; j += 8) {
    const __m256i sym = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(syms + j)));
    const __m256i is_literal = _mm256_cmpgt_epi32(sym, one);
    const uint32_t literal = static_cast<uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(is_literal)));
    const uint32_t leading = literal ? static_cast<uint32_t>(std::countr_zero(literal)) : 8;
    if (leading > 0 && digits + leading - 1 >= kMaxRunDigits) break;

    // Each digit's worth, (1 or 2) << its position, then their inclusive prefix sums.
    const __m256i position = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(kFold.position[literal])));
    const __m256i worth = _mm256_andnot_si256(is_literal, _mm256_sllv_epi32(_mm256_add_epi32(sym, one), position));
    __m256i sum = _mm256_add_epi32(worth, _mm256_slli_si256(worth, 4));
    sum = _mm256_add_epi32(sum, _mm256_slli_si256(sum, 8));
    const __m256i low_total = _mm256_shuffle_epi32(sum, 0xFF);  // lane 3 (and 7) in its half
    sum = _mm256_add_epi32(sum, _mm256_permute2x128_si256(low_total, low_total, 0x08));
    // A literal's run: the digits' sum since the literal before it (all of it when none).
    const __m256i before = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(kFold.before[literal])));
    const __m256i at_before = _mm256_and_si256(_mm256_permutevar8x32_epi32(sum, before), _mm256_cmpgt_epi32(before, none));
    const __m256i run = _mm256_sub_epi32(_mm256_sub_epi32(sum, worth), at_before);
    // index | position << 16: symbol - 1 in the low half, the batch position in the high one.
    const __m256i word = _mm256_add_epi32(_mm256_add_epi32(sym, lane_high),
                                          _mm256_set1_epi32(static_cast<int>((j << 16) - 1)));
    const __m256i order = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(kFold.compress[literal])));
    __m256i runs_packed = _mm256_permutevar8x32_epi32(run, order);
    // The chunk's first literal (now in lane 0) ends the open run: its leading digits count from
    // `digits`.
    const __m256i first = _mm256_add_epi32(_mm256_sll_epi32(runs_packed, _mm_cvtsi32_si128(static_cast<int>(digits))),
                                           _mm256_set1_epi32(static_cast<int>(carried)));
    runs_packed = _mm256_blend_epi32(runs_packed, first, 0x01);
    const __m256i words_packed = _mm256_permutevar8x32_epi32(word, order);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(lits + m), _mm256_unpacklo_epi32(runs_packed, words_packed));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(lits + m + 4), _mm256_unpackhi_epi32(runs_packed, words_packed));
    m += static_cast<uint32_t>(std::popcount(literal));

    // The run left open at the chunk's end.
    const uint32_t total = static_cast<uint32_t>(_mm256_extract_epi32(sum, 7));
    if (literal == 0) {
      carried += total << digits;
      digits += 8;
    } else {
      const int at = 31 - std::countl_zero(literal);
      const uint32_t upto = static_cast<uint32_t>(_mm256_cvtsi256_si32(_mm256_permutevar8x32_epi32(sum, _mm256_set1_epi32(at))));
      carried = total - upto;
      digits = static_cast<uint32_t>(7 - at);
    }
  }
  runs = RunState{carried, 1u << digits};
  return fold_runs(syms, j, k, runs, lits, m, error_at);
}

}  // namespace mibz2::bz2
#endif
