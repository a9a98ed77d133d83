#include "bz2/block_decoder.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "bz2/bit_reader.h"
#include "bz2/block_scanner.h"
#include "bz2/cpu_dispatch.h"
#include "bz2/crc32.h"
#include "bz2/huffman.h"
#include "bz2/inverse_bwt.h"
#include "bz2/run_fold.h"
#include "bz2/run_length.h"

#if MIBZ2_HAVE_X86_PATHS
#include <immintrin.h>
#endif

namespace mibz2::bz2 {
namespace {

constexpr int kMinTables = 2;
constexpr int kMaxTables = 6;
constexpr int kGroupSize = 50;                            // symbols coded with one selector
constexpr int kMaxSelectors = 2 + 900000 / kGroupSize;    // 18002: more are read and ignored
// Groups per batch of the two-pass symbol decoder: 32 * 50 symbols of 2 bytes stay in L1.
constexpr int kBatchGroups = 32;
// Output room reserved beyond a block's BWT length before RLE1: text makes about as many bytes as
// it has BWT bytes, and RLE1 slices keep to the room left while it is at least a few KB.
constexpr size_t kOutputRoomPastBwtLength = 64 << 10;

// Moves mtf[index] to the front and returns it. Indices are small in practice (text: mostly < 16).
inline uint8_t mtf_move_to_front(uint8_t* mtf, uint32_t index) {
  const uint8_t v = mtf[index];
  if (index < 16) {
    // Shift the first `index` bytes by one with a 16-byte copy through a register; bytes after
    // `index` are rewritten with their own values.
    uint8_t tmp[16];
    std::memcpy(tmp, mtf, 16);
    for (uint32_t i = index; i > 0; --i) mtf[i] = tmp[i - 1];
  } else {
    std::memmove(mtf + 1, mtf, index);
  }
  mtf[0] = v;
  return v;
}

// Everything the symbol decoder needs from the block header.
struct SymbolContext {
  const HuffmanTable* tables;
  const uint8_t* selectors;
  int n_selectors;
  int end_of_block;
  uint32_t max_len;
  BwtRun* runs;                 // the BWT bytes as runs of equal bytes, room for max_len + 1
  uint32_t n_runs;              // how many (set at the end of the block)
  uint32_t* counts;             // byte histogram of the BWT bytes
  uint16_t* syms;               // kBatchGroups * kGroupSize + 2 symbols
  Literal* lits;                // kBatchGroups * kGroupSize + 1 literals
  uint64_t* group_bits;         // kBatchGroups bit positions: where each group of a batch starts
  alignas(64) uint8_t mtf[256];
};

// Reports an error where the reader stands; past the end the reader invents zero bits, and a
// failure there is the truncation, reported at the end of the input.
inline Error fail_at(const BitReader& br, ErrorCode code) {
  if (br.overrun()) return Error{ErrorCode::kTruncated, br.size_bits()};
  return Error{code, br.position()};
}

}  // namespace

// The symbol decoder, portable, for AVX2 + BMI2 and for AVX-512 VBMI (picked per block by isa()).
namespace {
#define MIBZ2_SYMBOLS_NS portable
#define MIBZ2_SYMBOLS_TARGET
#define MIBZ2_SYMBOLS_AVX2 0
#define MIBZ2_SYMBOLS_AVX512 0
#include "bz2/symbols_impl.h"
#undef MIBZ2_SYMBOLS_NS
#undef MIBZ2_SYMBOLS_TARGET
#undef MIBZ2_SYMBOLS_AVX2
#undef MIBZ2_SYMBOLS_AVX512
#if MIBZ2_HAVE_X86_PATHS
#define MIBZ2_SYMBOLS_NS avx2
#define MIBZ2_SYMBOLS_TARGET __attribute__((target("avx2,bmi2")))
#define MIBZ2_SYMBOLS_AVX2 1
#define MIBZ2_SYMBOLS_AVX512 0
#include "bz2/symbols_impl.h"
#undef MIBZ2_SYMBOLS_NS
#undef MIBZ2_SYMBOLS_TARGET
#undef MIBZ2_SYMBOLS_AVX2
#undef MIBZ2_SYMBOLS_AVX512
#define MIBZ2_SYMBOLS_NS avx512
#define MIBZ2_SYMBOLS_TARGET __attribute__((target("avx2,bmi2,avx512f,avx512bw,avx512vbmi")))
#define MIBZ2_SYMBOLS_AVX2 1
#define MIBZ2_SYMBOLS_AVX512 1
#include "bz2/symbols_impl.h"
#undef MIBZ2_SYMBOLS_NS
#undef MIBZ2_SYMBOLS_TARGET
#undef MIBZ2_SYMBOLS_AVX2
#undef MIBZ2_SYMBOLS_AVX512
#endif
}  // namespace

struct BlockDecoder::Impl {
  HuffmanTable tables[kMaxTables];
  uint8_t selectors[kMaxSelectors];
  uint16_t syms[kBatchGroups * kGroupSize + 2];
  Literal lits[kBatchGroups * kGroupSize + 1];
  uint64_t group_bits[kBatchGroups];
  InverseBwt bwt;

  Error read_symbols(BitReader& br, int level, uint32_t* n_out, uint32_t* n_runs, uint32_t counts[256]);
};

BlockDecoder::BlockDecoder() : impl_(std::make_unique<Impl>()) {}
BlockDecoder::~BlockDecoder() = default;

size_t BlockDecoder::memory_bytes() const { return impl_->bwt.memory_bytes(); }

// Reads everything from the block magic to the end-of-block symbol: tables, selectors, and the
// symbol stream with its MTF and zero-run decoding, producing the BWT bytes in `ll`.
Error BlockDecoder::Impl::read_symbols(BitReader& br, int level, uint32_t* n_out, uint32_t* n_runs, uint32_t counts[256]) {
  // Past the end the reader invents zero bits; a failure there is the truncation, reported at the
  // end of the input (the reader's position can lie beyond it).
  auto fail = [&](ErrorCode code) {
    if (br.overrun()) return Error{ErrorCode::kTruncated, br.size_bits()};
    return Error{code, br.position()};
  };

  // Symbol map: 16 groups of 16 byte values.
  uint8_t in_use[256];
  int n_in_use = 0;
  const uint32_t groups = br.read(16);
  for (int g = 0; g < 16; ++g) {
    if (!(groups & (0x8000u >> g))) continue;
    const uint32_t bits = br.read(16);
    for (int j = 0; j < 16; ++j)
      if (bits & (0x8000u >> j)) in_use[n_in_use++] = static_cast<uint8_t>(g * 16 + j);
  }
  if (n_in_use == 0) return fail(ErrorCode::kNoSymbolsInUse);
  const int alpha_size = n_in_use + 2;

  const int n_tables = static_cast<int>(br.read(3));
  if (n_tables < kMinTables || n_tables > kMaxTables) return fail(ErrorCode::kBadTableCount);
  const int n_selectors_coded = static_cast<int>(br.read(15));
  if (n_selectors_coded < 1) return fail(ErrorCode::kBadSelectorCount);

  // Selectors, MTF-coded in unary: j one bits and a zero for the table at index j of an MTF list.
  // One count of leading ones reads a selector, and the list (at most six tables) is a 64-bit word,
  // a byte per entry, so the move to the front is a few shifts. Bit by bit, with a branch on each
  // bit and a loop for the move, the selectors of a level-9 block (about 18000) were 2% of a
  // single-thread decode of real JSON.
  static_assert(kMaxTables <= 7);  // the word holds the list, and 8 bits cover any code
  uint64_t table_mtf = 0x0706050403020100ull;  // byte j: the table at index j
  const int n_selectors = std::min(n_selectors_coded, kMaxSelectors);
  for (int i = 0; i < n_selectors_coded; ++i) {
    if (br.count() < 8) br.refill();
    const int j = std::countl_one(br.window());
    if (j >= n_tables) {
      br.consume(static_cast<unsigned>(n_tables));  // the error is after the one bit too many
      return fail(ErrorCode::kBadSelector);
    }
    br.consume(static_cast<unsigned>(j) + 1);
    if (i < kMaxSelectors) {
      const unsigned at = 8 * static_cast<unsigned>(j);
      const uint64_t t = (table_mtf >> at) & 0xFF;
      const uint64_t before = table_mtf & ((uint64_t{1} << at) - 1);  // indices 0..j-1
      const uint64_t after = table_mtf & ~((uint64_t{1} << (at + 8)) - 1);  // indices j+1..
      table_mtf = after | (before << 8) | t;
      selectors[i] = static_cast<uint8_t>(t);
    }
    if (br.overrun()) return fail(ErrorCode::kTruncated);
  }

  // Code lengths, delta-coded.
  uint8_t lengths[kMaxAlphabetSize];
  for (int t = 0; t < n_tables; ++t) {
    int len = static_cast<int>(br.read(5));
    for (int s = 0; s < alpha_size; ++s) {
      for (;;) {
        if (len < 1 || len > kMaxCodeLength) return fail(ErrorCode::kBadCodeLength);
        if (br.count() < 8) br.refill();
        if (!br.read_bit()) break;
        len += br.read_bit() ? -1 : 1;
      }
      lengths[s] = static_cast<uint8_t>(len);
    }
    if (br.overrun()) return fail(ErrorCode::kTruncated);
    tables[t].build(lengths, alpha_size);
  }

  // The symbol stream. mtf[] holds byte values directly (libbz2 keeps indices into in_use).
  SymbolContext cx;
  cx.tables = tables;
  cx.selectors = selectors;
  cx.n_selectors = n_selectors;
  cx.end_of_block = alpha_size - 1;
  cx.max_len = static_cast<uint32_t>(level) * 100000;
  cx.runs = bwt.runs();
  cx.n_runs = 0;
  cx.counts = counts;
  cx.syms = syms;
  cx.lits = lits;
  cx.group_bits = group_bits;
  std::memset(cx.mtf, 0, sizeof cx.mtf);
  std::memcpy(cx.mtf, in_use, n_in_use);
  std::memset(counts, 0, 256 * sizeof(uint32_t));
  Error e;
  switch (isa()) {
#if MIBZ2_HAVE_X86_PATHS
    case Isa::kAvx512: e = avx512::decode_symbols(br, cx, n_out); break;
    case Isa::kAvx2: e = avx2::decode_symbols(br, cx, n_out); break;
#endif
    default: e = portable::decode_symbols(br, cx, n_out); break;
  }
  *n_runs = cx.n_runs;
  return e;
}

Error BlockDecoder::decode(std::span<const uint8_t> data, uint64_t start_bit, int level,
                           base::ByteBuffer& out, BlockResult& result) {
  result = BlockResult{};
  Impl& im = *impl_;
  const uint32_t max_len = static_cast<uint32_t>(std::clamp(level, 1, 9)) * 100000;
  im.bwt.reserve(max_len);

  BitReader br(data, start_bit);
  if (br.read48() != kBlockMagic) {
    return {br.overrun() ? ErrorCode::kTruncated : ErrorCode::kBadBlockMagic, start_bit};
  }
  result.stored_crc = br.read(32);
  result.randomised = br.read_bit() != 0;
  const uint32_t orig_ptr = br.read(24);

  uint32_t n = 0;
  uint32_t counts[256];
  uint32_t n_runs = 0;
  if (Error e = im.read_symbols(br, level, &n, &n_runs, counts)) return e;
  result.end_bit = br.position();
  result.symbols_read = true;
  result.bwt_length = n;
  // libbz2 checks the origin only now that the length is known.
  if (orig_ptr >= n) return {ErrorCode::kBadOrigPtr, start_bit + 48 + 32 + 1};

  if (ErrorCode c = im.bwt.run(n_runs, n, counts, orig_ptr); c != ErrorCode::kOk)
    return {c, start_bit};

  const size_t out_start = out.size();
  // A block makes at least 4/5 of its BWT length (a count byte of 0 after every four equal bytes).
  // A buffer with less room than that was not sized for this block by the caller (the index
  // builder's, whose blocks are unknown until decoded): it gets about the block's output at once,
  // the BWT length and some, so that it does not grow piece by piece (each growth a copy, or new
  // pages to fault in). A buffer sized from the block's record keeps its size.
  if (out.capacity() - out.size() < n / 5 * 4) out.reserve_extra(n + kOutputRoomPastBwtLength);
  RunLengthDecoder rle(result.randomised);
  im.bwt.for_each_piece([&](uint8_t* p, size_t size) { rle.feed(p, size, out); });
  if (rle.awaiting_count()) {
    out.resize_uninitialized(out_start);
    return {ErrorCode::kUnfinishedRun, start_bit};
  }
  result.computed_crc = crc32(out.data() + out_start, out.size() - out_start);
  result.bytes_produced = true;
  if (result.computed_crc != result.stored_crc) return {ErrorCode::kBlockCrcMismatch, start_bit};
  return {};
}

}  // namespace mibz2::bz2
