// The symbol stream of a block: Huffman decoding, then MTF and the zero-run code (RLE2), producing
// the block's BWT bytes as runs of equal bytes (inverse_bwt.h's BwtRun). Included by block_decoder.cc once per instruction set, with:
//   MIBZ2_SYMBOLS_NS      the namespace of this version
//   MIBZ2_SYMBOLS_TARGET  its function attributes (empty for the portable version)
//   MIBZ2_SYMBOLS_AVX2    1 for the AVX2 + BMI2 version
//   MIBZ2_SYMBOLS_AVX512  1 for the version with AVX-512 VBMI as well (implies MIBZ2_SYMBOLS_AVX2)
// and with SymbolContext, kGroupSize and fail_at() defined.
//
// Passes over batches of kBatchGroups groups (1600 symbols, 3.2 KB: the batch stays in L1):
//  1. Huffman only: a table lookup yields one or two symbols, stored unconditionally; the only
//     branch on the way is the rare slow entry (long code, bad code, end of block). The bit chain
//     (lookup -> length -> shift) is all there is to wait for.
//  2. Zero runs and MTF over the stored symbols, in two loops without a branch on the symbol
//     (whether a symbol is a run symbol or a literal is a coin toss to the branch predictor):
//     a. runs folded into a list of literals, each with the length of the run before it
//        (run_fold.h; the AVX-512 version folds 16 symbols at a time with prefix scans, the AVX2
//        version 16 at a time in 16-bit words, two halves of 8 with the scans' results looked up
//        by literal mask);
//     b. per literal: the front byte's run (its literal and the zero run after it), then its MTF
//        move. In the AVX2 version the front 32 MTF entries live in two xmm registers and a
//        move-to-front below 32 is four pshufb and two or, without a branch (kMtf32); with
//        AVX-512 VBMI the front 64 entries live in a zmm register and a move-to-front below 64 is
//        one vpermb (real text: 15% of the MTF indices are 16 or more, few are 64 or more); a
//        move from further back shifts the list's part in memory with a few 16-byte moves
//        (shift_up_one). The AVX2 version held 16 entries before, with a branch to memory from
//        16: the 32 of two registers decode 3.2% faster (real JSON) and 2.6% (Linux source tar),
//        mibz2 cat -j 1 paired with the 16-entry build (farm-bench, 10 pairs, Xeon); 48 in three
//        registers (seven pshufb a move) were 0.9% slower than 32. Holding 32 entries in one ymm
//        register (a move below 32 in three instructions, one of them lane-crossing) measured no
//        faster than 16. Entries 32 to 63 live in two more xmm registers, which a move below 32
//        leaves alone: a move from 32 to 63 (5.5% of real JSON's MTF indices) is a branch as
//        before, but then the same four pshufb on those two and a few shifts, not a shift in
//        memory whose loop length is another branch miss (1.8% faster on real JSON and on the
//        Linux source tar, farm-bench 10 pairs, Xeon model 207).
// An error met in pass 2 (run or block too long) is reported where the old one-pass loop reported
// it: the bit position right after that symbol, found by decoding the group again up to it.

namespace MIBZ2_SYMBOLS_NS {

#if MIBZ2_SYMBOLS_AVX2
// kMtfShuffle[i]: moves byte i of a 16-byte vector to the front, shifting bytes 0..i-1 up by one.
struct MtfShuffles {
  alignas(16) uint8_t c[16][16];
  constexpr MtfShuffles() : c{} {
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 16; ++j) c[i][j] = static_cast<uint8_t>(j == 0 ? i : (j <= i ? j - 1 : j));
  }
};
inline constexpr MtfShuffles kMtfShuffle{};

// The AVX2 version holds the front 32 MTF entries in two registers, lo (0..15) and hi (16..31),
// and moves any of them to the front without a branch: each new register is two pshufb of the old
// ones, or-ed (a control byte of 0x80 yields 0):
//   index i < 16:        lo' = lo moved as kMtfShuffle[i];  hi' = hi
//   index i = 16 + j:    lo' = [hi[j], lo[0..14]];          hi' = [lo[15], hi moved as kMtfShuffle[j]
//                                                                  but for byte 0]
// kMtf32.c[i] holds the four controls: lo from lo, lo from hi, hi from hi, hi from lo.
struct Mtf32Controls {
  alignas(64) uint8_t c[32][4][16];
  constexpr Mtf32Controls() : c{} {
    for (int i = 0; i < 32; ++i)
      for (int b = 0; b < 16; ++b) {
        const int j = i - 16;
        const uint8_t none = 0x80;
        if (i < 16) {
          c[i][0][b] = kMtfShuffle.c[i][b];
          c[i][1][b] = none;
          c[i][2][b] = static_cast<uint8_t>(b);
          c[i][3][b] = none;
        } else {
          c[i][0][b] = b == 0 ? none : static_cast<uint8_t>(b - 1);
          c[i][1][b] = b == 0 ? static_cast<uint8_t>(j) : none;
          c[i][2][b] = b == 0 ? none : kMtfShuffle.c[j][b];
          c[i][3][b] = b == 0 ? 15 : none;
        }
      }
  }
};
inline constexpr Mtf32Controls kMtf32{};

// Moves entry i (< 32) of the 32 held in lo (0..15) and hi (16..31) to the front (kMtf32).
MIBZ2_SYMBOLS_TARGET inline void mtf32_move(__m128i& lo, __m128i& hi, uint32_t i) {
  const __m128i* const c = reinterpret_cast<const __m128i*>(kMtf32.c[i]);
  const __m128i new_lo =
      _mm_or_si128(_mm_shuffle_epi8(lo, _mm_load_si128(c)), _mm_shuffle_epi8(hi, _mm_load_si128(c + 1)));
  hi = _mm_or_si128(_mm_shuffle_epi8(hi, _mm_load_si128(c + 2)), _mm_shuffle_epi8(lo, _mm_load_si128(c + 3)));
  lo = new_lo;
}

// mtf[from..to) moved up by one byte to mtf[from + 1..to], from the top down in 16-byte moves,
// for an MTF move behind the part of the list held in registers (from = 64 on both paths): the bytes
// below `from` in memory are stale then, and up to 15 of them, never below mtf[from - 16], are
// overwritten. libc's memmove here was 6.7% of a single-thread decode of real JSON with AVX2
// (15% of its MTF indices are 16 or more: a call, and its size dispatch, for each).
MIBZ2_SYMBOLS_TARGET inline void shift_up_one(uint8_t* mtf, uint32_t from, uint32_t to) {
  uint32_t top = to;
  while (top >= from + 16) {
    top -= 16;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(mtf + top + 1),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(mtf + top)));
  }
  if (top > from)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(mtf + top - 15),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(mtf + top - 16)));
}
#endif
#if MIBZ2_SYMBOLS_AVX512
// kMtfPermute[i]: vpermb indices that move byte i of a 64-byte vector to the front.
struct MtfPermutes {
  alignas(64) uint8_t c[64][64];
  constexpr MtfPermutes() : c{} {
    for (int i = 0; i < 64; ++i)
      for (int j = 0; j < 64; ++j) c[i][j] = static_cast<uint8_t>(j == 0 ? i : (j <= i ? j - 1 : j));
  }
};
inline constexpr MtfPermutes kMtfPermute{};
#endif

// Where symbol j of the batch that starts at group batch_group ended: decode its group again up to
// it (errors only; `again` is any reader of the same data).
[[gnu::noinline, gnu::cold]] inline Error fail_after_symbol(BitReader again, const SymbolContext& cx,
                                                           int batch_group, uint32_t j, ErrorCode code) {
  const uint32_t g = j / kGroupSize;
  again.seek(cx.group_bits[g]);
  const HuffmanTable& table = cx.tables[cx.selectors[batch_group + static_cast<int>(g)]];
  for (uint32_t i = 0; i <= j % kGroupSize; ++i) {
    again.refill();
    int len = 0;
    table.decode_slow(again.window(), &len);
    again.consume(static_cast<unsigned>(len));
  }
  return fail_at(again, code);
}

// The reader is a local copy: through a reference, every byte stored to the output might alias it
// and its state would go to memory and back on every symbol.
MIBZ2_SYMBOLS_TARGET Error decode_symbols_local(BitReader& br, SymbolContext& cx, uint32_t* n_out);

MIBZ2_SYMBOLS_TARGET Error decode_symbols(BitReader& reader, SymbolContext& cx, uint32_t* n_out) {
  BitReader br = reader;
  const Error e = decode_symbols_local(br, cx, n_out);
  reader = br;
  return e;
}

[[gnu::always_inline]] MIBZ2_SYMBOLS_TARGET inline Error decode_symbols_local(BitReader& br, SymbolContext& cx,
                                                                             uint32_t* n_out) {
  const int end_of_block = cx.end_of_block;
  const uint32_t max_len = cx.max_len;
  BwtRun* const bwt_runs = cx.runs;
  uint32_t n_runs = 0;
  uint32_t* const counts = cx.counts;
  uint16_t* const syms = cx.syms;
  uint8_t* const mtf = cx.mtf;
  uint32_t n = 0;
  RunState runs;            // the zero run being read
  uint32_t front_byte = mtf[0];  // the byte at the front of the MTF list
  uint32_t pending = 0;          // 1 once front_byte was emitted and not yet counted
#if MIBZ2_SYMBOLS_AVX512
  // mtf[0..63] live in `front`; mtf[64..255] in memory.
  __m512i front = _mm512_loadu_si512(mtf);
#elif MIBZ2_SYMBOLS_AVX2
  // mtf[0..15] live in `front`, mtf[16..31] in `front_hi`, mtf[32..63] in `back` and `back_hi`;
  // mtf[64..255] in memory.
  __m128i front = _mm_loadu_si128(reinterpret_cast<const __m128i*>(mtf));
  __m128i front_hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(mtf + 16));
  __m128i back = _mm_loadu_si128(reinterpret_cast<const __m128i*>(mtf + 32));
  __m128i back_hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(mtf + 48));
  const __m128i byte0 = _mm_cvtsi32_si128(0xFF);
#endif

  for (int group = 0;;) {
    // ---- pass 1: Huffman codes of up to kBatchGroups groups into syms[] ----
    const int batch_group = group;
    uint32_t k = 0;  // symbols stored
    enum class Stop { kNone, kEndOfBlock, kError } stop = Stop::kNone;
    Error stop_error;
    for (int g = 0; g < kBatchGroups; ++g, ++group) {
      if (group >= cx.n_selectors) {
        stop = Stop::kError;
        stop_error = fail_at(br, ErrorCode::kTooManySelectorsUsed);
        break;
      }
      if (br.overrun()) {
        stop = Stop::kError;
        stop_error = fail_at(br, ErrorCode::kTruncated);
        break;
      }
      cx.group_bits[g] = br.position();
      const HuffmanTable& table = cx.tables[cx.selectors[group]];
      const uint32_t* const lut = table.lut();
      uint16_t* const s = syms + k;
      uint32_t i = 0;
      // A copy whose address is never taken stays in registers (br itself is passed to fail_at).
      BitReader r = br;
      // One lookup: stores both symbols of a fast entry; false on a slow one (nothing consumed).
      auto fast = [&](bool whole_pair) __attribute__((always_inline)) {
        const uint32_t e = lut[r.window() >> (64 - kLutBits)];
        if (e == HuffmanTable::kSlow) [[unlikely]] return false;
        s[i] = static_cast<uint16_t>(HuffmanTable::entry_symbol1(e));
        s[i + 1] = static_cast<uint16_t>(HuffmanTable::entry_symbol2(e));
        if (whole_pair) {
          r.consume(HuffmanTable::entry_length(e));
          i += HuffmanTable::entry_count(e);
        } else {
          r.consume(HuffmanTable::entry_length1(e));
          i += 1;
        }
        return true;
      };
      for (;;) {
        r.refill();
        // With room for four pairs, four lookups share one refill: 4 * kLutBits bits of the 56
        // (and after three, 26 bits remain for a slow code of up to kMaxCodeLength). Each pair
        // stored whole: the group's last symbol is not among them.
        // Near the group's end, one lookup at a time (a pair at its last symbol counts only its
        // first: the next group has its own table).
        static_assert(4 * kLutBits <= 56 && 56 - 3 * kLutBits >= kMaxCodeLength);
        const bool all_fast = i + 8 <= static_cast<uint32_t>(kGroupSize)
                                  ? fast(true) && fast(true) && fast(true) && fast(true)
                                  : fast(i + 2 <= static_cast<uint32_t>(kGroupSize));
        if (all_fast) [[likely]] {
          if (i >= static_cast<uint32_t>(kGroupSize)) break;
          continue;
        }
        // A slow entry (a long code, a bad code, or the end of the block), with at least
        // kMaxCodeLength bits buffered.
        int len = 0;
        const int sym = table.decode_slow(r.window(), &len);
        if (sym < 0) {
          br = r;
          stop = Stop::kError;
          stop_error = fail_at(br, ErrorCode::kBadHuffmanCode);
          break;
        }
        r.consume(static_cast<unsigned>(len));
        if (sym == end_of_block) {
          stop = Stop::kEndOfBlock;
          break;
        }
        s[i++] = static_cast<uint16_t>(sym);
        if (i >= static_cast<uint32_t>(kGroupSize)) break;
      }
      br = r;
      k += i;
      if (stop != Stop::kNone) {
        ++group;
        break;
      }
    }

    // ---- pass 2a: zero runs folded into a list of literals, without branches ----
    auto fail_after = [&](uint32_t j, ErrorCode code) { return fail_after_symbol(br, cx, batch_group, j, code); };
    Literal* const lits = cx.lits;
    uint32_t run_error_at = k;  // the symbol that made a run too long, if any
#if MIBZ2_SYMBOLS_AVX512
    const uint32_t m = fold_runs_avx512(syms, k, runs, lits, &run_error_at);
#elif MIBZ2_SYMBOLS_AVX2
    const uint32_t m = fold_runs_avx2(syms, k, runs, lits, &run_error_at);
#else
    const uint32_t m = fold_runs(syms, 0, k, runs, lits, 0, &run_error_at);
#endif

    // ---- pass 2b: each literal's MTF move; the BWT bytes as their runs ----
    // The front byte's literal and the zero run after it are one run of equal BWT bytes, ended by
    // the next literal (a different byte: its MTF index is at least 1). counts[front] takes both
    // when the next literal comes, and so does its BwtRun: consecutive literals are different
    // bytes, so no counter is read right after it was written.
    // take(): a literal ends `count` bytes of the front byte (its own, once emitted, and the zero
    // run after it), then makes its MTF move. A run too long for one BwtRun is rare, and appended
    // out of this loop's way.
    auto take = [&](const Literal lit, uint32_t count) MIBZ2_SYMBOLS_TARGET __attribute__((always_inline)) {
      counts[front_byte] += count;
      if (count <= kMaxBwtRunCount) [[likely]] {
        bwt_runs[n_runs++] = make_bwt_run(front_byte, count);
      } else {
        n_runs = append_long_bwt_run(bwt_runs, n_runs, front_byte, count);
      }
      const uint32_t index = lit.index;
#if MIBZ2_SYMBOLS_AVX512
      if (index < 64) [[likely]] {
        front = _mm512_maskz_permutexvar_epi8(~0ull, _mm512_load_si512(kMtfPermute.c[index]), front);
      } else {
        const uint8_t v = mtf[index];
        shift_up_one(mtf, 64, index);
        const __m512i rotated = _mm512_maskz_permutexvar_epi8(~0ull, _mm512_load_si512(kMtfPermute.c[63]), front);
        mtf[64] = static_cast<uint8_t>(_mm512_cvtsi512_si32(rotated));
        front = _mm512_mask_set1_epi8(rotated, 1, static_cast<char>(v));
      }
      front_byte = static_cast<uint8_t>(_mm512_cvtsi512_si32(front));
#elif MIBZ2_SYMBOLS_AVX2
      if (index < 32) [[likely]] {
        mtf32_move(front, front_hi, index);
        front_byte = static_cast<uint8_t>(_mm_cvtsi128_si32(front));
      } else if (index < 64) {
        // The move of index - 32 within (back, back_hi) puts the byte first in back; then it goes
        // to the front, and front_hi's last byte takes its place.
        mtf32_move(back, back_hi, index - 32);
        const __m128i moved = back;
        back = _mm_or_si128(_mm_andnot_si128(byte0, moved), _mm_srli_si128(front_hi, 15));
        front_hi = _mm_alignr_epi8(front_hi, front, 15);
        front = _mm_or_si128(_mm_slli_si128(front, 1), _mm_and_si128(moved, byte0));
        front_byte = static_cast<uint8_t>(_mm_cvtsi128_si32(moved));
      } else {
        front_byte = mtf[index];
        shift_up_one(mtf, 64, index);
        mtf[64] = static_cast<uint8_t>(_mm_extract_epi8(back_hi, 15));
        back_hi = _mm_alignr_epi8(back_hi, back, 15);
        back = _mm_alignr_epi8(back, front_hi, 15);
        front_hi = _mm_alignr_epi8(front_hi, front, 15);
        front = _mm_insert_epi8(_mm_slli_si128(front, 1), static_cast<int>(front_byte), 0);
      }
#else
      front_byte = mtf_move_to_front(mtf, index);
#endif
    };
    uint32_t t = 0;
    // The block's first literal: no byte of the front was emitted before its run. Every later one
    // ends the run of the literal before it and that literal's byte (`pending`, always 1 there).
    if (pending == 0 && m > 0) {
      n += lits[0].run + 1;  // no overflow: n < max_len <= 900000, run < 2^23
      // libbz2: a run that fills the block, or a literal beyond it, is kBlockTooLong.
      if (n > max_len) [[unlikely]] return fail_after(lits[0].symbol, ErrorCode::kBlockTooLong);
      take(lits[0], lits[0].run);
      pending = 1;
      t = 1;
    }
    for (; t < m; ++t) {
      const Literal lit = lits[t];
      n += lit.run + 1;
      if (n > max_len) [[unlikely]] return fail_after(lits[t].symbol, ErrorCode::kBlockTooLong);
      take(lit, lit.run + 1);
    }
    if (run_error_at < k) return fail_after(run_error_at, ErrorCode::kRunTooLong);

    if (stop == Stop::kError) return stop_error;
    if (stop == Stop::kEndOfBlock) {
      if (runs.length > max_len - n) return fail_at(br, ErrorCode::kBlockTooLong);
      n += runs.length;
      counts[front_byte] += pending + runs.length;
      n_runs = append_bwt_run(bwt_runs, n_runs, front_byte, pending + runs.length);
      if (br.overrun()) return fail_at(br, ErrorCode::kTruncated);
      *n_out = n;
      cx.n_runs = n_runs;
      return {};
    }
  }
}

}  // namespace MIBZ2_SYMBOLS_NS
