// Zero runs folded into a list of literals: pass 2a of the symbol decoder (symbols_impl.h).
//
// bzip2 writes a run of the front MTF byte as its length in bijective base 2, least significant
// digit first: RUNA (symbol 0) is a digit worth 1 << position, RUNB (symbol 1) one worth
// 2 << position. Every other symbol is a literal, MTF index symbol - 1. The fold lists each literal
// with the run right before it; a run still open at the end of the symbols is carried in RunState
// to the next batch (and, at the end of the block, is the block's last run).
//
// libbz2 rejects a run of more than 21 digits (a digit arriving when the weight has reached
// 2^21): BZ_DATA_ERROR, our kRunTooLong, reported at that digit.
#pragma once

#include <cstdint>

#include "bz2/cpu_features.h"

namespace mibz2::bz2 {

inline constexpr uint32_t kRunB = 1;
inline constexpr uint32_t kMaxRunDigits = 21;                      // libbz2's bound on a run's digits
inline constexpr uint32_t kMaxRunWeight = 1u << kMaxRunDigits;     // the weight a 22nd digit would have

// A literal of the symbol stream with the zero run before it.
struct Literal {
  uint32_t run;     // bytes of the run before it
  uint16_t index;   // MTF index (symbol - 1)
  uint16_t symbol;  // its position in the batch
};
static_assert(sizeof(Literal) == 8);

// The run being read when the symbols ran out.
struct RunState {
  uint32_t length = 0;  // value of its digits so far
  uint32_t weight = 1;  // 1 << its digits so far: the next RUNA's worth
};

// Folds syms[from..k): appends the literals at lits[m], lits[m + 1], ... and returns the new m.
// Writes lits[m] for every symbol (kept only for literals), so lits needs room for k entries.
// A digit that would make a run too long stops the fold there: *error_at is set to its position
// and `runs` is left as it was before that digit; otherwise *error_at is not touched.
[[gnu::always_inline]] inline uint32_t fold_runs(const uint16_t* syms, uint32_t from, uint32_t k, RunState& runs,
                                                 Literal* lits, uint32_t m, uint32_t* error_at) {
  uint32_t length = runs.length;
  uint32_t weight = runs.weight;
  for (uint32_t j = from; j < k; ++j) {
    const uint32_t sym = syms[j];
    const uint32_t literal = sym > kRunB;
    const uint32_t keep = literal - 1;  // all ones after a digit, zero after a literal
    // One test of a value, not `weight >= max && !literal`: GCC tests the literal first, and that
    // branch is the coin toss this loop exists to avoid (real JSON, -j 1: this loop held 57% of
    // decode_symbols' samples with it).
    if ((weight & keep) >= kMaxRunWeight) [[unlikely]] {
      *error_at = j;
      break;
    }
    lits[m] = Literal{length, static_cast<uint16_t>(sym - 1), static_cast<uint16_t>(j)};
    m += literal;
    // Masks, not ?: (GCC turns those back into the branch this loop exists to avoid: measured
    // on real symbols, 4.1 ns a symbol with the branch, 1.4 without).
    length = (length + (weight << (sym & 1))) & keep;  // RUNA: 1, RUNB: 2 weights
    weight = ((weight << 1) & keep) | literal;
  }
  runs = RunState{length, weight};
  return m;
}

#if MIBZ2_HAVE_X86_PATHS
// fold_runs(syms, 0, k, ...) 16 symbols at a time with AVX-512 (F, BW, VBMI; call it only where
// isa() is kAvx512): the same literals, state and error, and the same room needed in lits (its
// whole-vector stores of 16 literals start at most at the chunk's own position).
uint32_t fold_runs_avx512(const uint16_t* syms, uint32_t k, RunState& runs, Literal* lits, uint32_t* error_at);
// The same, 16 symbols at a time with AVX2 (call it only where isa() is kAvx2 or above).
uint32_t fold_runs_avx2(const uint16_t* syms, uint32_t k, RunState& runs, Literal* lits, uint32_t* error_at);
#endif

}  // namespace mibz2::bz2
