#include "bz2/block_decoder.h"

#include <algorithm>
#include <cstring>

#include "bz2/bit_reader.h"
#include "bz2/block_scanner.h"
#include "bz2/crc32.h"
#include "bz2/huffman.h"
#include "bz2/inverse_bwt.h"
#include "bz2/run_length.h"

namespace mibz2::bz2 {
namespace {

constexpr int kMinTables = 2;
constexpr int kMaxTables = 6;
constexpr int kGroupSize = 50;                            // symbols coded with one selector
constexpr int kMaxSelectors = 2 + 900000 / kGroupSize;    // 18002: more are read and ignored
constexpr uint32_t kMaxRunWeight = 2 * 1024 * 1024;       // libbz2's bound on a RUNA/RUNB run
constexpr int kRunA = 0;
constexpr int kRunB = 1;

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

}  // namespace

struct BlockDecoder::Impl {
  HuffmanTable tables[kMaxTables];
  uint8_t selectors[kMaxSelectors];
  std::unique_ptr<uint8_t[]> ll;  // BWT bytes of the block (up to 900000)
  uint32_t ll_capacity = 0;
  InverseBwt bwt;

  Error read_symbols(BitReader& br, int level, uint32_t* n_out, uint32_t counts[256]);
};

BlockDecoder::BlockDecoder() : impl_(std::make_unique<Impl>()) {}
BlockDecoder::~BlockDecoder() = default;

size_t BlockDecoder::memory_bytes() const { return impl_->ll_capacity + impl_->bwt.memory_bytes(); }

// Reads everything from the block magic to the end-of-block symbol: tables, selectors, and the
// symbol stream with its MTF and zero-run decoding, producing the BWT bytes in `ll`.
Error BlockDecoder::Impl::read_symbols(BitReader& br, int level, uint32_t* n_out, uint32_t counts[256]) {
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

  // Selectors, MTF-coded in unary.
  uint8_t table_mtf[kMaxTables];
  for (int i = 0; i < n_tables; ++i) table_mtf[i] = static_cast<uint8_t>(i);
  const int n_selectors = std::min(n_selectors_coded, kMaxSelectors);
  for (int i = 0; i < n_selectors_coded; ++i) {
    int j = 0;
    for (;;) {
      if (br.count() < 8) br.refill();
      if (!br.read_bit()) break;
      if (++j >= n_tables) return fail(ErrorCode::kBadSelector);
    }
    if (i < kMaxSelectors) {
      const uint8_t t = table_mtf[j];
      for (int k = j; k > 0; --k) table_mtf[k] = table_mtf[k - 1];
      table_mtf[0] = t;
      selectors[i] = t;
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
  uint8_t mtf[256];
  std::memcpy(mtf, in_use, n_in_use);
  std::memset(counts, 0, 256 * sizeof(uint32_t));
  const uint32_t max_len = static_cast<uint32_t>(level) * 100000;
  const int end_of_block = alpha_size - 1;
  uint8_t* const out = ll.get();
  uint32_t n = 0;
  uint32_t run_length = 0;  // pending zero-run: sum of (RUNA ? 1 : 2) * weight
  uint32_t run_weight = 1;  // 1, 2, 4, ... for successive RUNA/RUNB symbols

  for (int group = 0;; ++group) {
    if (group >= n_selectors) return fail(ErrorCode::kTooManySelectorsUsed);
    if (br.overrun()) return fail(ErrorCode::kTruncated);
    const HuffmanTable& table = tables[selectors[group]];
    for (int i = 0; i < kGroupSize; ++i) {
      if (br.count() < kMaxCodeLength) br.refill();
      int sym;
      const uint16_t e = table.lookup(br.window());
      if (e != HuffmanTable::kLongCode) [[likely]] {
        sym = HuffmanTable::entry_symbol(e);
        br.consume(HuffmanTable::entry_length(e));
      } else {
        int len = 0;
        sym = table.decode_slow(br.window(), &len);
        if (sym < 0) return fail(ErrorCode::kBadHuffmanCode);
        br.consume(static_cast<unsigned>(len));
      }

      if (sym <= kRunB) {
        if (run_weight >= kMaxRunWeight) return fail(ErrorCode::kRunTooLong);
        run_length += static_cast<uint32_t>(sym + 1) * run_weight;
        run_weight <<= 1;
        continue;
      }
      if (run_weight > 1) {
        // A zero-run repeats the byte at the front of the MTF list.
        if (run_length > max_len - n) return fail(ErrorCode::kBlockTooLong);
        const uint8_t b = mtf[0];
        std::memset(out + n, b, run_length);
        counts[b] += run_length;
        n += run_length;
        run_length = 0;
        run_weight = 1;
      }
      if (sym == end_of_block) {
        if (br.overrun()) return fail(ErrorCode::kTruncated);
        *n_out = n;
        return {};
      }
      if (n >= max_len) return fail(ErrorCode::kBlockTooLong);
      const uint8_t b = mtf_move_to_front(mtf, static_cast<uint32_t>(sym - 1));
      out[n++] = b;
      ++counts[b];
    }
  }
}

Error BlockDecoder::decode(std::span<const uint8_t> data, uint64_t start_bit, int level,
                           ByteBuffer& out, BlockResult& result) {
  result = BlockResult{};
  Impl& im = *impl_;
  const uint32_t max_len = static_cast<uint32_t>(std::clamp(level, 1, 9)) * 100000;
  if (im.ll_capacity < max_len) {
    im.ll.reset(new uint8_t[max_len]);
    im.ll_capacity = max_len;
  }

  BitReader br(data, start_bit);
  if (br.read48() != kBlockMagic) {
    return {br.overrun() ? ErrorCode::kTruncated : ErrorCode::kBadBlockMagic, start_bit};
  }
  result.stored_crc = br.read(32);
  result.randomised = br.read_bit() != 0;
  const uint32_t orig_ptr = br.read(24);

  uint32_t n = 0;
  uint32_t counts[256];
  if (Error e = im.read_symbols(br, level, &n, counts)) return e;
  result.end_bit = br.position();
  result.symbols_read = true;
  result.bwt_length = n;
  // libbz2 checks the origin only now that the length is known.
  if (orig_ptr >= n) return {ErrorCode::kBadOrigPtr, start_bit + 48 + 32 + 1};

  if (ErrorCode c = im.bwt.run(im.ll.get(), n, counts, orig_ptr); c != ErrorCode::kOk)
    return {c, start_bit};

  const size_t out_start = out.size();
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
