// The symbol stream of a block: Huffman decoding, then MTF and the zero-run code (RLE2), producing
// the block's BWT bytes. Included by block_decoder.cc once per instruction set, with:
//   MIBZ2_SYMBOLS_NS      the namespace of this version
//   MIBZ2_SYMBOLS_TARGET  its function attributes (empty for the portable version)
//   MIBZ2_SYMBOLS_AVX2    1 for the AVX2 + BMI2 version
//   MIBZ2_SYMBOLS_AVX512  1 for the version with AVX-512 VBMI as well (implies MIBZ2_SYMBOLS_AVX2)
// and with SymbolContext, kGroupSize, kMaxRunWeight and fail_at() defined.
//
// Two passes over batches of kBatchGroups groups (1600 symbols, 3.2 KB: the batch stays in L1):
//  1. Huffman only: a table lookup yields one or two symbols, stored unconditionally; the only
//     branch on the way is the rare slow entry (long code, bad code, end of block). The bit chain
//     (lookup -> length -> shift) is all there is to wait for.
//  2. MTF and zero runs over the stored symbols: the unpredictable run/literal branch no longer
//     stalls the bit chain. In the AVX2 version the front 16 MTF entries live in a register and a
//     move-to-front below 16 is one pshufb; with AVX-512 VBMI the front 64 entries live in a zmm
//     register and a move-to-front below 64 is one vpermb (real text: 15% of the MTF indices are
//     16 or more, few are 64 or more).
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
  uint8_t* const out = cx.out;
  uint32_t* const counts = cx.counts;
  uint16_t* const syms = cx.syms;
  uint8_t* const mtf = cx.mtf;
  uint32_t n = 0;
  uint32_t run_length = 0;  // pending zero-run: sum of (RUNA ? 1 : 2) * weight
  uint32_t run_weight = 1;  // 1, 2, 4, ... for successive RUNA/RUNB symbols
#if MIBZ2_SYMBOLS_AVX512
  // mtf[0..63] live in `front`; mtf[64..255] in memory.
  __m512i front = _mm512_loadu_si512(mtf);
#elif MIBZ2_SYMBOLS_AVX2
  // mtf[0..15] live in `front`; mtf[16..255] in memory.
  __m128i front = _mm_loadu_si128(reinterpret_cast<const __m128i*>(mtf));
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
      for (;;) {
        br.refill();
        const uint32_t e = lut[br.window() >> (64 - kLutBits)];
        if (e != HuffmanTable::kSlow) [[likely]] {
          // Both symbols are stored; a pair at the group's last symbol counts and consumes only
          // its first (the next group has its own table).
          s[i] = static_cast<uint16_t>(HuffmanTable::entry_symbol1(e));
          s[i + 1] = static_cast<uint16_t>(HuffmanTable::entry_symbol2(e));
          if (i + 2 <= kGroupSize) [[likely]] {
            br.consume(HuffmanTable::entry_length(e));
            i += HuffmanTable::entry_count(e);
          } else {
            br.consume(HuffmanTable::entry_length1(e));
            i += 1;
          }
        } else {
          int len = 0;
          const int sym = table.decode_slow(br.window(), &len);
          if (sym < 0) {
            stop = Stop::kError;
            stop_error = fail_at(br, ErrorCode::kBadHuffmanCode);
            break;
          }
          br.consume(static_cast<unsigned>(len));
          if (sym == end_of_block) {
            stop = Stop::kEndOfBlock;
            break;
          }
          s[i++] = static_cast<uint16_t>(sym);
        }
        if (i >= static_cast<uint32_t>(kGroupSize)) break;
      }
      k += i;
      if (stop != Stop::kNone) {
        ++group;
        break;
      }
    }

    // ---- pass 2: zero runs and MTF over syms[0..k) ----
    auto fail_after = [&](uint32_t j, ErrorCode code) { return fail_after_symbol(br, cx, batch_group, j, code); };
    for (uint32_t j = 0; j < k; ++j) {
      const uint32_t sym = syms[j];
      if (sym <= kRunB) {
        if (run_weight >= kMaxRunWeight) return fail_after(j, ErrorCode::kRunTooLong);
        run_length += run_weight << sym;  // RUNA: 1 * weight, RUNB: 2 * weight
        run_weight <<= 1;
        continue;
      }
      if (run_weight > 1) {
        // A zero-run repeats the byte at the front of the MTF list.
        if (run_length > max_len - n) return fail_after(j, ErrorCode::kBlockTooLong);
#if MIBZ2_SYMBOLS_AVX2
#if MIBZ2_SYMBOLS_AVX512
        const uint8_t b = static_cast<uint8_t>(_mm512_cvtsi512_si32(front));
#else
        const uint8_t b = static_cast<uint8_t>(_mm_cvtsi128_si32(front));
#endif
        if (run_length <= 32) {
          // out has kOutSlack bytes beyond max_len for this store.
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + n), _mm256_set1_epi8(static_cast<char>(b)));
        } else {
          std::memset(out + n, b, run_length);
        }
#else
        const uint8_t b = mtf[0];
        std::memset(out + n, b, run_length);
#endif
        counts[b] += run_length;
        n += run_length;
        run_length = 0;
        run_weight = 1;
      }
      if (n >= max_len) return fail_after(j, ErrorCode::kBlockTooLong);
      const uint32_t index = sym - 1;
#if MIBZ2_SYMBOLS_AVX512
      uint8_t b;
      if (index < 64) [[likely]] {
        front = _mm512_maskz_permutexvar_epi8(~0ull, _mm512_load_si512(kMtfPermute.c[index]), front);
        b = static_cast<uint8_t>(_mm512_cvtsi512_si32(front));
      } else {
        b = mtf[index];
        std::memmove(mtf + 65, mtf + 64, index - 64);
        const __m512i rotated = _mm512_maskz_permutexvar_epi8(~0ull, _mm512_load_si512(kMtfPermute.c[63]), front);
        mtf[64] = static_cast<uint8_t>(_mm512_cvtsi512_si32(rotated));
        front = _mm512_mask_set1_epi8(rotated, 1, static_cast<char>(b));
      }
#elif MIBZ2_SYMBOLS_AVX2
      uint8_t b;
      if (index < 16) [[likely]] {
        front = _mm_shuffle_epi8(front, _mm_load_si128(reinterpret_cast<const __m128i*>(kMtfShuffle.c[index])));
        b = static_cast<uint8_t>(_mm_cvtsi128_si32(front));
      } else {
        b = mtf[index];
        std::memmove(mtf + 17, mtf + 16, index - 16);
        mtf[16] = static_cast<uint8_t>(_mm_extract_epi8(front, 15));
        front = _mm_insert_epi8(_mm_slli_si128(front, 1), b, 0);
      }
#else
      const uint8_t b = mtf_move_to_front(mtf, index);
#endif
      out[n++] = b;
      ++counts[b];
    }

    if (n >= cx.next_prefix && cx.prefixes->count < PrefixCounts::kMax) {
      // The table build scatters from here on a lane of its own.
      PrefixCounts& pc = *cx.prefixes;
      pc.at[pc.count] = n;
      std::memcpy(pc.counts[pc.count], counts, sizeof pc.counts[0]);
      ++pc.count;
      cx.next_prefix = n + cx.prefix_step;
    }

    if (stop == Stop::kError) return stop_error;
    if (stop == Stop::kEndOfBlock) {
      if (run_weight > 1) {
        if (run_length > max_len - n) return fail_at(br, ErrorCode::kBlockTooLong);
#if MIBZ2_SYMBOLS_AVX512
        const uint8_t b = static_cast<uint8_t>(_mm512_cvtsi512_si32(front));
#elif MIBZ2_SYMBOLS_AVX2
        const uint8_t b = static_cast<uint8_t>(_mm_cvtsi128_si32(front));
#else
        const uint8_t b = mtf[0];
#endif
        std::memset(out + n, b, run_length);
        counts[b] += run_length;
        n += run_length;
      }
      if (br.overrun()) return fail_at(br, ErrorCode::kTruncated);
      *n_out = n;
      return {};
    }
  }
}

}  // namespace MIBZ2_SYMBOLS_NS
