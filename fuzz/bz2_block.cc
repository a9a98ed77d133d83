// Fuzz target: the block scanner and the block decoder (src/bz2), on their own.
//
// Input: an 8-byte header, then the bytes to scan and decode.
//   byte 0      the level the blocks are decoded at: 1 + byte % 9
//   bytes 1..3  ignored
//   bytes 4..7  a bit offset (little-endian, taken modulo the data's bits): one more decode starts
//               there, and the scan is repeated as two ranges split there
// The seeds are bzip2 files of every level behind such a header (fuzz/make_seeds.cc).
//
// Checked: the scanner finds exactly the marks a bit-by-bit search finds (small inputs), in order,
// the same when split in two ranges; every decode (at each block candidate, and at the chosen bit)
// ends inside the data, produces at most what its level allows, and its bytes have the CRC it
// reports (libbz2's own CRC table as the reference); decoding twice, with another decoder, gives
// the same result.
//
// fuzz-args: -dict=bzip2.dict -max_len=65536
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "base/byte_buffer.h"
#include "bz2/block_decoder.h"
#include "bz2/block_scanner.h"
#include "bz2/errors.h"
#include "fuzz_support.h"
#include "index/block_index.h"
#include "test_support.h"

namespace {

using namespace mibz2;
using fuzz::GuardedBuffer;

constexpr size_t kHeader = 8;
constexpr size_t kMaxDecodes = 16;         // block candidates decoded per input
constexpr size_t kBruteForceBytes = 8192;  // inputs up to this size are also searched bit by bit

struct Decoded {
  bz2::Error error;
  bz2::BlockResult result;
  std::vector<uint8_t> bytes;
};

Decoded decode_at(bz2::BlockDecoder& decoder, base::ByteBuffer& out, std::span<const uint8_t> data, uint64_t bit,
                  int level) {
  Decoded d;
  out.clear();
  d.error = decoder.decode(data, bit, level, out, d.result);
  d.bytes.assign(out.data(), out.data() + out.size());
  return d;
}

std::string where(uint64_t bit, int level, const Decoded& d) {
  return "block at bit " + std::to_string(bit) + ", level " + std::to_string(level) + ": " + bz2::to_string(d.error);
}

void check_decode(std::span<const uint8_t> data, uint64_t bit, int level, const Decoded& d) {
  const uint64_t bits = data.size() * uint64_t{8};
  const std::string w = where(bit, level, d);
  FUZZ_CHECK(d.error.bit_offset <= bits, w + ": error offset past the end of the data");
  if (d.result.symbols_read) {
    FUZZ_CHECK(d.result.end_bit > bit + 48 && d.result.end_bit <= bits,
               w + ": end bit " + std::to_string(d.result.end_bit) + " outside the data");
    FUZZ_CHECK(d.result.bwt_length <= uint32_t(level) * 100000, w + ": longer than its level allows");
  }
  if (!d.error) {
    FUZZ_CHECK(d.result.symbols_read && d.result.bytes_produced, w + ": success without bytes");
    FUZZ_CHECK(d.result.bwt_length >= 1 && !d.bytes.empty(), w + ": a decoded block is empty");
    FUZZ_CHECK(d.result.computed_crc == d.result.stored_crc, w + ": success with a CRC mismatch");
  }
  if (d.result.bytes_produced) {
    FUZZ_CHECK(d.bytes.size() <= index::max_block_output(level),
               w + ": " + std::to_string(d.bytes.size()) + " bytes, more than the level allows");
    FUZZ_CHECK(test::libbz2_crc(d.bytes) == d.result.computed_crc, w + ": the computed CRC is not the bytes' CRC");
  }
  if (d.error.code == bz2::ErrorCode::kBlockCrcMismatch) {
    FUZZ_CHECK(d.result.bytes_produced && d.result.computed_crc != d.result.stored_crc, w + ": inconsistent mismatch");
  } else if (d.error) {
    FUZZ_CHECK(d.bytes.empty(), w + ": bytes left in the output after a failure");
  }
}

void check_same(const Decoded& a, const Decoded& b, uint64_t bit, int level) {
  const std::string w = where(bit, level, a);
  FUZZ_CHECK(a.error.code == b.error.code && a.error.bit_offset == b.error.bit_offset,
             w + ": a second decoder says " + bz2::to_string(b.error));
  FUZZ_CHECK(a.result.end_bit == b.result.end_bit && a.result.stored_crc == b.result.stored_crc &&
                 a.result.computed_crc == b.result.computed_crc && a.result.bwt_length == b.result.bwt_length &&
                 a.result.randomised == b.result.randomised && a.result.symbols_read == b.result.symbols_read &&
                 a.result.bytes_produced == b.result.bytes_produced,
             w + ": a second decoder gives another result");
  FUZZ_CHECK(a.bytes == b.bytes, w + ": a second decoder gives other bytes");
}

void check_marks(std::span<const uint8_t> data, uint64_t split, const std::vector<bz2::Mark>& marks) {
  const uint64_t bits = data.size() * uint64_t{8};
  for (size_t i = 0; i < marks.size(); ++i) {
    const bz2::Mark& m = marks[i];
    FUZZ_CHECK(m.bit + 48 <= bits, "mark at bit " + std::to_string(m.bit) + " runs past the end");
    FUZZ_CHECK(i == 0 || marks[i - 1].bit < m.bit, "marks out of order at bit " + std::to_string(m.bit));
    const uint64_t v = bz2::read48_at(data, m.bit);
    FUZZ_CHECK(v == (m.kind == bz2::MarkKind::kBlock ? bz2::kBlockMagic : bz2::kEndOfStreamMagic),
               "no magic at the mark at bit " + std::to_string(m.bit));
  }
  // Two adjacent ranges find the same marks as one.
  std::vector<bz2::Mark> halves;
  bz2::scan_marks(data, 0, split, halves);
  bz2::scan_marks(data, split, bits, halves);
  FUZZ_CHECK(halves == marks, "scanning split at bit " + std::to_string(split) + " finds " +
                                  std::to_string(halves.size()) + " marks, not " + std::to_string(marks.size()));
  // No mark missed: every bit tried.
  if (data.size() <= kBruteForceBytes) {
    std::vector<bz2::Mark> all;
    for (uint64_t b = 0; b + 48 <= bits; ++b) {
      const uint64_t v = bz2::read48_at(data, b);
      if (v == bz2::kBlockMagic) all.push_back({b, bz2::MarkKind::kBlock});
      else if (v == bz2::kEndOfStreamMagic) all.push_back({b, bz2::MarkKind::kEndOfStream});
    }
    FUZZ_CHECK(all == marks, "the scanner finds " + std::to_string(marks.size()) + " marks, a bit-by-bit search " +
                                 std::to_string(all.size()));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t size) {
  static GuardedBuffer guarded;
  static bz2::BlockDecoder decoder;
  static bz2::BlockDecoder second;  // used only to repeat decodes: its scratch holds other blocks
  static base::ByteBuffer out;
  if (size < kHeader) return -1;  // not kept in the corpus
  const std::span<const uint8_t> header(input, kHeader);
  const int level = 1 + header[0] % 9;
  const std::span<const uint8_t> data = guarded.place({input + kHeader, size - kHeader});
  const uint64_t bits = data.size() * uint64_t{8};
  const uint64_t chosen = bits ? fuzz::le32(header, 4) % bits : 0;

  std::vector<bz2::Mark> marks;
  bz2::scan_marks(data, 0, bits, marks);
  check_marks(data, chosen, marks);

  size_t decodes = 0;
  bool repeated = false;
  for (const bz2::Mark& m : marks) {
    if (m.kind != bz2::MarkKind::kBlock) continue;
    if (decodes++ == kMaxDecodes) break;
    const Decoded d = decode_at(decoder, out, data, m.bit, level);
    check_decode(data, m.bit, level, d);
    if (!repeated && d.result.symbols_read) {
      repeated = true;
      check_same(d, decode_at(second, out, data, m.bit, level), m.bit, level);
    }
  }
  const Decoded d = decode_at(decoder, out, data, chosen, level);
  check_decode(data, chosen, level, d);
  return 0;
}
