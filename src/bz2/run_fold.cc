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

// Whether `leading` run digits after an open run of `digits` make a run longer than libbz2 takes
// (the last of them has digits + leading - 1 before it). One compare, for the open run never has
// more than kMaxRunDigits digits, and with none leading it never fails: tested as `leading > 0 &&
// ...`, that is a branch on whether a chunk starts with a digit or a literal, which the predictor
// cannot learn (real JSON: 3.1% of the AVX2 fold's samples on it).
constexpr bool too_many_digits(uint32_t digits, uint32_t leading) { return digits + leading > kMaxRunDigits; }

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
    // (too_many_digits: one compare.)
    const uint32_t leading = literal ? static_cast<uint32_t>(std::countr_zero(literal)) : 16;
    if (too_many_digits(digits, leading)) break;

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

// What the AVX-512 fold's scans over its literal mask work out, looked up instead for a half of 8
// symbols (256 masks; AVX2 has neither compress nor masked lanes). Every value within a half fits
// 16 bits (a digit's worth is at most 2 << 7 there, their sum under 512), so a 256-bit vector
// holds two halves of 8 words, each in its own 128-bit lane, and every shuffle stays within its
// lane: pshufb, never a lane-crossing permute on the way.
struct FoldTables {
  // Lane i: the worth of a digit there over its symbol + 1 (1 << its position in its run, counted
  // from the last literal lane before it, or from the half's start); 0 for a literal lane, whose
  // symbol + 1 times it is then no worth.
  alignas(16) uint16_t scale[256][8];
  // pshufb controls (byte pairs) that fetch, for lane i, the word of the last literal lane before
  // it; 0x80 (a zero word) when there is none.
  alignas(16) uint8_t before[256][16];
  // pshufb controls that put the literal lanes' words first, in order.
  alignas(16) uint8_t compress[256][16];
  constexpr FoldTables() : scale{}, before{}, compress{} {
    for (int mask = 0; mask < 256; ++mask) {
      int last = -1;
      int count = 0;
      for (int i = 0; i < 16; ++i) compress[mask][i] = 0x80;
      for (int i = 0; i < 8; ++i) {
        const bool literal = (mask >> i) & 1;
        scale[mask][i] = literal ? 0 : static_cast<uint16_t>(1u << (i - last - 1));
        before[mask][2 * i] = last < 0 ? 0x80 : static_cast<uint8_t>(2 * last);
        before[mask][2 * i + 1] = last < 0 ? 0x80 : static_cast<uint8_t>(2 * last + 1);
        if (literal) {
          compress[mask][2 * count] = static_cast<uint8_t>(2 * i);
          compress[mask][2 * count + 1] = static_cast<uint8_t>(2 * i + 1);
          ++count;
          last = i;
        }
      }
    }
  }
};
constexpr FoldTables kFold{};

__attribute__((target("avx2,bmi2"), always_inline)) inline __m256i two_rows(const void* low, const void* high) {
  return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_load_si128(static_cast<const __m128i*>(low))),
                                 _mm_load_si128(static_cast<const __m128i*>(high)), 1);
}

// The open run after a half of 8 symbols whose literal mask is `mask` and whose digits' inclusive
// sums are sums[0..7], from the open run before it (digits, carried).
__attribute__((always_inline)) inline void run_after_half(uint32_t mask, const uint16_t* sums, uint32_t& digits,
                                                          uint32_t& carried) {
  if (mask == 0) {
    carried += static_cast<uint32_t>(sums[7]) << digits;
    digits += 8;
  } else {
    const int at = 31 - std::countl_zero(mask);
    carried = static_cast<uint32_t>(sums[7] - sums[at]);
    digits = static_cast<uint32_t>(7 - at);
  }
}

}  // namespace

// The AVX-512 fold's arithmetic on two halves of 8 symbols in 16-bit words: each digit's worth is
// its symbol + 1 times kFold.scale, the prefix sums take three in-lane shifts, a literal's run is
// its sum less the sum at the literal before it (one pshufb), and a pshufb a vector puts the
// literals first. The records are widened with unpacks; each half's first literal takes the open
// run before it, in scalar code (its leading digits' sum, shifted by the digits already read,
// would not fit a word). It replaced a version of 8 symbols in 32-bit lanes a step, which looked
// up the same per mask and took four lane-crossing permutes a step: its share of a decode went
// from 10.1% to 8.6% (perf, real JSON, mibz2 cat -j 1 with AVX2), the decode 1.4% faster on real
// JSON and on the Linux source tar (farm-bench, 10 pairs, Xeon model 207).
__attribute__((target("avx2,bmi2"))) uint32_t fold_runs_avx2(const uint16_t* syms, uint32_t k, RunState& runs,
                                                            Literal* lits, uint32_t* error_at) {
  const __m256i one = _mm256_set1_epi16(1);
  const __m256i zero = _mm256_setzero_si256();
  const __m256i lane = _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  uint32_t digits = static_cast<uint32_t>(std::countr_zero(runs.weight));  // of the open run
  uint32_t carried = runs.length;                                         // its value
  uint32_t m = 0;
  uint32_t j = 0;
  alignas(32) uint16_t sums[16];
  for (; j + 16 <= k; j += 16) {
    const __m256i sym = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(syms + j));
    const __m256i is_literal = _mm256_cmpgt_epi16(sym, one);
    // Each lane's literal bit: words packed to bytes, 8 a half, in bits 0-7 and 16-23.
    const uint32_t both = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_packs_epi16(is_literal, zero)));
    const uint32_t mask0 = both & 0xFF, mask1 = (both >> 16) & 0xFF;
    // The leading digits of a half continue the open run; one too many ends the fast path, and the
    // scalar fold finds which digit and reports it.
    const uint32_t leading0 = mask0 ? static_cast<uint32_t>(std::countr_zero(mask0)) : 8;
    if (too_many_digits(digits, leading0)) break;

    const __m256i worth = _mm256_mullo_epi16(_mm256_add_epi16(sym, one), two_rows(kFold.scale[mask0], kFold.scale[mask1]));
    __m256i sum = _mm256_add_epi16(worth, _mm256_slli_si256(worth, 2));
    sum = _mm256_add_epi16(sum, _mm256_slli_si256(sum, 4));
    sum = _mm256_add_epi16(sum, _mm256_slli_si256(sum, 8));
    const __m256i at_before = _mm256_shuffle_epi8(sum, two_rows(kFold.before[mask0], kFold.before[mask1]));
    const __m256i run = _mm256_sub_epi16(_mm256_sub_epi16(sum, worth), at_before);
    _mm256_store_si256(reinterpret_cast<__m256i*>(sums), sum);

    // The records: run (32 bits), then index (symbol - 1) and position in the batch (16 each).
    const __m256i order = two_rows(kFold.compress[mask0], kFold.compress[mask1]);
    const __m256i runs_packed = _mm256_shuffle_epi8(run, order);
    const __m256i index = _mm256_shuffle_epi8(_mm256_sub_epi16(sym, one), order);
    const __m256i position = _mm256_shuffle_epi8(_mm256_add_epi16(lane, _mm256_set1_epi16(static_cast<short>(j))), order);
    const __m256i run_low = _mm256_unpacklo_epi16(runs_packed, zero), run_high = _mm256_unpackhi_epi16(runs_packed, zero);
    const __m256i word_low = _mm256_unpacklo_epi16(index, position), word_high = _mm256_unpackhi_epi16(index, position);
    const __m256i r01 = _mm256_unpacklo_epi32(run_low, word_low), r23 = _mm256_unpackhi_epi32(run_low, word_low);
    const __m256i r45 = _mm256_unpacklo_epi32(run_high, word_high), r67 = _mm256_unpackhi_epi32(run_high, word_high);

    // Half 0: its records, and its first literal ends the open run.
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(lits + m), _mm256_permute2x128_si256(r01, r23, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(lits + m + 4), _mm256_permute2x128_si256(r45, r67, 0x20));
    if (mask0) lits[m].run = (lits[m].run << digits) + carried;
    m += static_cast<uint32_t>(std::popcount(mask0));
    run_after_half(mask0, sums, digits, carried);

    const uint32_t leading1 = mask1 ? static_cast<uint32_t>(std::countr_zero(mask1)) : 8;
    if (too_many_digits(digits, leading1)) {
      j += 8;  // the scalar fold goes on from half 1
      break;
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(lits + m), _mm256_permute2x128_si256(r01, r23, 0x31));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(lits + m + 4), _mm256_permute2x128_si256(r45, r67, 0x31));
    if (mask1) lits[m].run = (lits[m].run << digits) + carried;
    m += static_cast<uint32_t>(std::popcount(mask1));
    run_after_half(mask1, sums + 8, digits, carried);
  }
  runs = RunState{carried, 1u << digits};
  return fold_runs(syms, j, k, runs, lits, m, error_at);
}

}  // namespace mibz2::bz2
#endif
