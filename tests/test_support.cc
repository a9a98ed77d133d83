#include "test_support.h"

#include <bzlib.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <thread>

#include "base/byte_buffer.h"
#include "bz2/block_scanner.h"
#include "bz2/stream_parser.h"

extern "C" {
extern const int32_t BZ2_rNums[512];
extern const uint32_t BZ2_crc32Table[256];
}

namespace mibz2::test {

std::vector<bz2::Isa> isa_levels() {
  std::vector<bz2::Isa> out = {bz2::Isa::kPortable};
  bz2::set_max_isa(bz2::Isa::kAvx512);
  const bz2::Isa best = bz2::isa();
  if (best >= bz2::Isa::kAvx2) out.push_back(bz2::Isa::kAvx2);
  if (best >= bz2::Isa::kAvx512) out.push_back(bz2::Isa::kAvx512);
  return out;
}

const char* isa_name(bz2::Isa level) {
  switch (level) {
    case bz2::Isa::kPortable: return "portable";
    case bz2::Isa::kAvx2: return "avx2";
    case bz2::Isa::kAvx512: return "avx512";
  }
  return "unknown";
}

Bytes to_bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }

Bytes concat(std::initializer_list<const Bytes*> parts) {
  Bytes out;
  for (const Bytes* p : parts) out.insert(out.end(), p->begin(), p->end());
  return out;
}

// ---- libbz2 -----------------------------------------------------------------------------------

Bytes libbz2_compress(std::span<const uint8_t> data, int level) {
  // bzlib's documented bound: 1% larger plus 600 bytes.
  unsigned int dest_len = static_cast<unsigned int>(data.size() + data.size() / 100 + 1024);
  Bytes out(dest_len);
  static char empty = 0;  // libbz2 refuses a null source, even for no bytes
  char* src = data.empty() ? &empty : const_cast<char*>(reinterpret_cast<const char*>(data.data()));
  const int ret = BZ2_bzBuffToBuffCompress(reinterpret_cast<char*>(out.data()), &dest_len,
                                           src,
                                           static_cast<unsigned int>(data.size()), level, 0, 30);
  if (ret != BZ_OK) {
    std::fprintf(stderr, "BZ2_bzBuffToBuffCompress failed: %d\n", ret);
    std::abort();
  }
  out.resize(dest_len);
  return out;
}

LibResult libbz2_decompress(std::span<const uint8_t> data) {
  LibResult r;
  if (data.empty()) {  // bzip2: "Compressed file ends unexpectedly"
    r.error = -99;
    return r;
  }
  std::vector<char> buf(1 << 16);
  size_t pos = 0;
  for (bool first = true;; first = false) {
    if (pos == data.size()) {
      r.ok = true;
      return r;
    }
    bz_stream s{};
    if (BZ2_bzDecompressInit(&s, 0, 0) != BZ_OK) std::abort();
    s.next_in = const_cast<char*>(reinterpret_cast<const char*>(data.data() + pos));
    s.avail_in = static_cast<unsigned int>(data.size() - pos);
    int ret;
    for (;;) {
      const unsigned int in_before = s.avail_in;
      s.next_out = buf.data();
      s.avail_out = static_cast<unsigned int>(buf.size());
      ret = BZ2_bzDecompress(&s);
      const size_t produced = buf.size() - s.avail_out;
      r.out.insert(r.out.end(), buf.data(), buf.data() + produced);
      if (ret != BZ_OK) break;
      if (produced == 0 && s.avail_in == in_before) {
        // Needs more input and there is none: the file ends inside this stream.
        ret = BZ_UNEXPECTED_EOF;
        break;
      }
    }
    const size_t consumed = (data.size() - pos) - s.avail_in;
    BZ2_bzDecompressEnd(&s);
    if (ret == BZ_STREAM_END) {
      pos += consumed;
      continue;
    }
    if (ret == BZ_DATA_ERROR_MAGIC && !first) {  // trailing garbage after a complete stream
      r.ok = true;
      return r;
    }
    r.error = ret;
    return r;
  }
}

uint32_t libbz2_crc(std::span<const uint8_t> data) {
  uint32_t crc = 0xFFFFFFFFu;
  for (uint8_t b : data) crc = (crc << 8) ^ BZ2_crc32Table[(crc >> 24) ^ b];
  return ~crc;
}

// ---- ours -------------------------------------------------------------------------------------

OurResult decode_ours(std::span<const uint8_t> data, bz2::BlockDecoder* decoder) {
  static bz2::BlockDecoder shared;
  OurResult r;
  bz2::SequentialSink sink;
  sink.write = [&](const uint8_t* p, size_t n) {
    r.out.insert(r.out.end(), p, p + n);
    return true;
  };
  sink.warn = [&](const std::string& m) { r.warnings.push_back(m); };
  r.error = bz2::decode_sequential(data, decoder ? *decoder : shared, sink);
  return r;
}

// ---- data -------------------------------------------------------------------------------------

uint64_t Rng::next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

Bytes random_bytes(size_t n, uint64_t seed) {
  Rng rng(seed);
  Bytes out(n);
  for (auto& b : out) b = rng.byte();
  return out;
}

Bytes text_bytes(size_t n, uint64_t seed) {
  static const char* const kWords[] = {
      "the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as", "was", "with", "be",
      "by", "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have",
      "an", "had", "they", "you", "were", "their", "one", "all", "we", "can", "her", "has", "there",
      "been", "if", "more", "when", "will", "would", "who", "so", "no", "block", "stream", "bzip2",
      "Huffman", "selector", "compression", "random", "access", "filesystem", "decoder", "table",
      "Burrows", "Wheeler", "transform", "river", "mountain", "library", "question", "morning",
      "evening", "yesterday", "thousand", "government", "particular", "experience", "whatever"};
  constexpr uint32_t kCount = sizeof kWords / sizeof kWords[0];
  Rng rng(seed);
  Bytes out;
  out.reserve(n + 32);
  bool capital = true;
  while (out.size() < n) {
    // A skewed choice: short common words dominate, as in prose.
    const uint32_t i = std::min(rng.below(kCount), std::min(rng.below(kCount), rng.below(kCount)));
    std::string w = kWords[i];
    if (capital) w[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(w[0])));
    capital = false;
    out.insert(out.end(), w.begin(), w.end());
    const uint32_t p = rng.below(100);
    if (p < 8) {
      out.push_back('.');
      capital = true;
    } else if (p < 13) {
      out.push_back(',');
    } else if (p == 13) {
      out.push_back(';');
    }
    if (rng.below(14) == 0) out.push_back('\n');
    else out.push_back(' ');
  }
  out.resize(n);
  return out;
}

Bytes runs_bytes(size_t n, uint64_t seed) {
  Rng rng(seed);
  Bytes out;
  out.reserve(n + 700);
  while (out.size() < n) {
    uint32_t len;
    switch (rng.below(5)) {
      case 0: len = 1 + rng.below(5); break;      // 1..5
      case 1: len = 3 + rng.below(3); break;      // 3..5: the RLE1 threshold
      case 2: len = 252 + rng.below(10); break;   // 252..261: the RLE1 count limit
      case 3: len = 1 + rng.below(600); break;
      default: len = 1 + rng.below(40); break;
    }
    const uint8_t v = static_cast<uint8_t>("abcdefgh\x00\xff"[rng.below(10)]);
    out.insert(out.end(), len, v);
  }
  out.resize(n);
  return out;
}

Bytes all_byte_values(size_t copies, uint64_t seed) {
  Bytes out;
  out.reserve(copies * 256);
  for (size_t c = 0; c < copies; ++c)
    for (int v = 0; v < 256; ++v) out.push_back(static_cast<uint8_t>(v));
  Rng rng(seed);
  for (size_t i = out.size(); i > 1; --i) std::swap(out[i - 1], out[rng.below(static_cast<uint32_t>(i))]);
  return out;
}

Bytes repeated_byte(size_t n, uint8_t value) { return Bytes(n, value); }

Bytes no_runs_bytes(size_t n, uint64_t seed) {
  Rng rng(seed);
  Bytes out(n);
  for (size_t i = 0; i < n; ++i) {
    uint8_t b;
    do b = rng.byte();
    while (i > 0 && (b | 1) == (out[i - 1] | 1));
    out[i] = b;
  }
  return out;
}

::testing::AssertionResult same_bytes(const Bytes& actual, const Bytes& expected) {
  if (actual == expected) return ::testing::AssertionSuccess();
  size_t i = 0;
  while (i < actual.size() && i < expected.size() && actual[i] == expected[i]) ++i;
  auto at = [](const Bytes& b, size_t k) { return k < b.size() ? std::to_string(b[k]) : std::string("end"); };
  return ::testing::AssertionFailure() << "sizes " << actual.size() << " (actual) and " << expected.size()
                                       << " (expected), first difference at byte " << i << ": " << at(actual, i)
                                       << " vs " << at(expected, i);
}

// ---- bits -------------------------------------------------------------------------------------

bool get_bit(std::span<const uint8_t> data, uint64_t bit) { return (data[bit / 8] >> (7 - bit % 8)) & 1; }

uint64_t get_bits(std::span<const uint8_t> data, uint64_t bit, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; ++i) v = (v << 1) | (get_bit(data, bit + i) ? 1 : 0);
  return v;
}

void set_bits(Bytes& data, uint64_t bit, unsigned n, uint64_t value) {
  for (unsigned i = 0; i < n; ++i) {
    const uint64_t b = bit + i;
    const uint8_t mask = static_cast<uint8_t>(0x80u >> (b % 8));
    if ((value >> (n - 1 - i)) & 1) data[b / 8] |= mask;
    else data[b / 8] &= static_cast<uint8_t>(~mask);
  }
}

void BitWriter::put(uint64_t value, unsigned n) {
  for (unsigned i = 0; i < n; ++i) {
    if (bits_ % 8 == 0) out_.push_back(0);
    if ((value >> (n - 1 - i)) & 1) out_.back() |= static_cast<uint8_t>(0x80u >> (bits_ % 8));
    ++bits_;
  }
}

void BitWriter::put_bytes(const std::string& s) {
  for (char c : s) put(static_cast<uint8_t>(c), 8);
}

Bytes BitWriter::finish() {
  bits_ = out_.size() * 8;
  return out_;
}

// ---- layout -----------------------------------------------------------------------------------

bool walk_file(std::span<const uint8_t> data, FileLayout* layout) {
  *layout = FileLayout{};
  bz2::BlockDecoder decoder;
  base::ByteBuffer buf;
  uint64_t byte = 0;
  size_t out_offset = 0;
  for (size_t stream = 0;; ++stream) {
    int level = 0;
    const bz2::StreamStart kind = bz2::classify_stream_start(data, byte, &level);
    if (kind == bz2::StreamStart::kEnd && stream > 0) return true;
    if (kind == bz2::StreamStart::kNotBzip2 && stream > 0) return true;
    if (kind != bz2::StreamStart::kStream) {
      ADD_FAILURE() << "walk_file: no stream header at byte " << byte;
      return false;
    }
    layout->stream_bytes.push_back(byte);
    uint64_t bit = byte * 8 + bz2::kStreamHeaderBits;
    for (;;) {
      const uint64_t magic = bz2::read48_at(data, bit);
      if (magic == bz2::kBlockMagic) {
        bz2::BlockResult r;
        buf.clear();
        if (bz2::Error e = decoder.decode(data, bit, level, buf, r)) {
          ADD_FAILURE() << "walk_file: block at bit " << bit << ": " << bz2::to_string(e);
          return false;
        }
        layout->blocks.push_back({bit, r.end_bit, level, r.stored_crc, r.bwt_length, stream, out_offset, buf.size()});
        out_offset += buf.size();
        bit = r.end_bit;
      } else if (magic == bz2::kEndOfStreamMagic) {
        layout->eos_bits.push_back(bit);
        bit += bz2::kEndOfStreamBits;
        break;
      } else {
        ADD_FAILURE() << "walk_file: no block or end-of-stream marker at bit " << bit;
        return false;
      }
    }
    byte = (bit + 7) / 8;
  }
}

// ---- transforms -------------------------------------------------------------------------------

Bytes rle1_encode(std::span<const uint8_t> data) {
  // bzip2 ends a run at 255 equal bytes (count byte 251); the format allows count bytes up to 255.
  Bytes out;
  size_t i = 0;
  while (i < data.size()) {
    size_t len = 1;
    while (i + len < data.size() && data[i + len] == data[i] && len < 255) ++len;
    if (len < 4) {
      out.insert(out.end(), len, data[i]);
    } else {
      out.insert(out.end(), 4, data[i]);
      out.push_back(static_cast<uint8_t>(len - 4));
    }
    i += len;
  }
  return out;
}

std::optional<Bytes> rle1_decode(std::span<const uint8_t> pre) {
  Bytes out;
  int last = -1;
  int run = 0;
  for (uint8_t b : pre) {
    if (run == 4) {
      out.insert(out.end(), b, static_cast<uint8_t>(last));
      run = 0;
      last = -1;
      continue;
    }
    out.push_back(b);
    if (b == last) {
      ++run;
    } else {
      last = b;
      run = 1;
    }
  }
  if (run == 4) return std::nullopt;
  return out;
}

Bytes randomisation_mask(size_t n) {
  // libbz2: BZ_RAND_UPD_MASK before each byte, then BZ_RAND_MASK = (rNToGo == 1).
  Bytes mask(n);
  int32_t to_go = 0;
  int32_t pos = 0;
  for (size_t k = 0; k < n; ++k) {
    if (to_go == 0) {
      to_go = BZ2_rNums[pos];
      pos = (pos + 1) % 512;
    }
    --to_go;
    mask[k] = to_go == 1 ? 1 : 0;
  }
  return mask;
}

uint32_t write_block(BitWriter& w, const BlockSpec& spec) {
  // The stored CRC covers the final bytes; a block ending in an unfinished run gets the CRC of
  // what a lenient decoder would output (the bytes as they stand).
  uint32_t crc;
  if (spec.crc) {
    crc = *spec.crc;
  } else if (auto plain = rle1_decode(spec.pre_rle1)) {
    crc = libbz2_crc(*plain);
  } else {
    crc = libbz2_crc(spec.pre_rle1);
  }

  Bytes pre = spec.pre_rle1;
  if (spec.randomised) {
    const Bytes mask = randomisation_mask(pre.size());
    for (size_t k = 0; k < pre.size(); ++k) pre[k] ^= mask[k];
  }
  const size_t n = pre.size();

  // The BWT by sorting the rotations (small blocks only).
  Bytes ll;
  uint32_t orig = 0;
  if (spec.bwt) {
    ll = *spec.bwt;
  } else if (n > 0) {
    Bytes twice = pre;
    twice.insert(twice.end(), pre.begin(), pre.end());
    std::vector<uint32_t> rot(n);
    for (uint32_t i = 0; i < n; ++i) rot[i] = i;
    std::stable_sort(rot.begin(), rot.end(),
                     [&](uint32_t a, uint32_t b) {
                       // Not memcmp: ASan's memcmp checks all n bytes of both sides on every call,
                       // which makes sorting a 900000-byte block take hours under ASan.
                       const uint8_t* pa = &twice[a];
                       const auto m = std::mismatch(pa, pa + n, &twice[b]);
                       return m.first != pa + n && *m.first < *m.second;
                     });
    ll.resize(n);
    for (uint32_t r = 0; r < n; ++r) {
      ll[r] = pre[(rot[r] + n - 1) % n];
      if (rot[r] == 0) orig = r;
    }
  }
  if (spec.orig_ptr) orig = *spec.orig_ptr;

  // Symbol map, MTF and the zero-run code.
  bool used[256] = {};
  for (uint8_t b : ll) used[b] = true;
  std::vector<uint8_t> in_use;
  for (int v = 0; v < 256; ++v)
    if (used[v]) in_use.push_back(static_cast<uint8_t>(v));
  const int alpha = static_cast<int>(in_use.size()) + 2;
  const int eob = alpha - 1;
  std::vector<uint16_t> syms;
  std::vector<uint8_t> mtf = in_use;
  uint32_t zeros = 0;
  auto flush_zeros = [&] {
    if (zeros == 0) return;
    uint32_t z = zeros - 1;
    for (;;) {
      syms.push_back((z & 1) ? 1 : 0);  // RUNB : RUNA
      if (z < 2) break;
      z = (z - 2) / 2;
    }
    zeros = 0;
  };
  for (uint8_t b : ll) {
    const size_t j = static_cast<size_t>(std::find(mtf.begin(), mtf.end(), b) - mtf.begin());
    if (j == 0) {
      ++zeros;
      continue;
    }
    flush_zeros();
    mtf.erase(mtf.begin() + static_cast<std::ptrdiff_t>(j));
    mtf.insert(mtf.begin(), b);
    syms.push_back(static_cast<uint16_t>(j + 1));
  }
  flush_zeros();
  syms.push_back(static_cast<uint16_t>(eob));

  // Tables: the spec's code lengths, or flat ones.
  std::vector<std::vector<uint8_t>> lengths = spec.code_lengths;
  if (lengths.empty()) {
    unsigned len = 1;
    while ((1 << len) < alpha) ++len;
    lengths.assign(static_cast<size_t>(spec.tables), std::vector<uint8_t>(static_cast<size_t>(alpha), static_cast<uint8_t>(len)));
  }
  // Canonical codes as bzip2 assigns them (hbAssignCodes): by length, then by symbol.
  std::vector<std::vector<uint32_t>> codes(lengths.size());
  for (size_t t = 0; t < lengths.size(); ++t) {
    codes[t].assign(static_cast<size_t>(alpha), 0);
    uint32_t code = 0;
    for (int len = 1; len <= 20; ++len) {
      for (int sym = 0; sym < alpha; ++sym)
        if (lengths[t][static_cast<size_t>(sym)] == len) codes[t][static_cast<size_t>(sym)] = code++;
      code <<= 1;
    }
  }
  auto table_of_group = [&](size_t g) -> size_t { return spec.group_tables.empty() ? 0 : spec.group_tables[g % spec.group_tables.size()]; };
  const size_t groups = spec.selectors.value_or(static_cast<uint32_t>((syms.size() + 49) / 50));

  w.put(bz2::kBlockMagic, 48);
  w.put(crc, 32);
  w.put(spec.randomised ? 1 : 0, 1);
  w.put(orig, 24);
  uint32_t group_bits = 0;
  for (int g = 0; g < 16; ++g)
    for (int j = 0; j < 16; ++j)
      if (used[g * 16 + j]) group_bits |= 0x8000u >> g;
  w.put(group_bits, 16);
  for (int g = 0; g < 16; ++g) {
    if (!(group_bits & (0x8000u >> g))) continue;
    uint32_t bits = 0;
    for (int j = 0; j < 16; ++j)
      if (used[g * 16 + j]) bits |= 0x8000u >> j;
    w.put(bits, 16);
  }
  w.put(static_cast<uint64_t>(lengths.size()), 3);
  w.put(groups, 15);
  // Selectors, MTF-coded in unary.
  std::vector<uint8_t> table_mtf(lengths.size());
  for (size_t t = 0; t < table_mtf.size(); ++t) table_mtf[t] = static_cast<uint8_t>(t);
  for (size_t i = 0; i < groups; ++i) {
    const uint8_t t = static_cast<uint8_t>(table_of_group(i));
    const size_t j = static_cast<size_t>(std::find(table_mtf.begin(), table_mtf.end(), t) - table_mtf.begin());
    for (size_t k = 0; k < j; ++k) w.put(1, 1);
    w.put(0, 1);
    table_mtf.erase(table_mtf.begin() + static_cast<std::ptrdiff_t>(j));
    table_mtf.insert(table_mtf.begin(), t);
  }
  // Code lengths, delta-coded: 10 is one longer, 11 one shorter, 0 next symbol.
  for (const std::vector<uint8_t>& lens : lengths) {
    int cur = lens[0];
    w.put(static_cast<uint64_t>(cur), 5);
    for (int s = 0; s < alpha; ++s) {
      const int target = lens[static_cast<size_t>(s)];
      for (; cur < target; ++cur) w.put(2, 2);
      for (; cur > target; --cur) w.put(3, 2);
      w.put(0, 1);
    }
  }
  for (size_t i = 0; i < syms.size(); ++i) {
    const size_t t = table_of_group(i / 50);
    w.put(codes[t][syms[i]], lengths[t][syms[i]]);
  }
  return crc;
}

int block_alphabet_size(const BlockSpec& spec) {
  Bytes pre = spec.pre_rle1;
  bool used[256] = {};
  if (spec.bwt) {
    for (uint8_t b : *spec.bwt) used[b] = true;
  } else {
    // The BWT is a permutation of the (masked) bytes.
    if (spec.randomised) {
      const Bytes mask = randomisation_mask(pre.size());
      for (size_t k = 0; k < pre.size(); ++k) pre[k] ^= mask[k];
    }
    for (uint8_t b : pre) used[b] = true;
  }
  return static_cast<int>(std::count(std::begin(used), std::end(used), true)) + 2;
}

Bytes make_stream(int level, const std::vector<BlockSpec>& blocks) {
  BitWriter w;
  w.put_bytes("BZh");
  w.put(static_cast<uint64_t>('0' + level), 8);
  uint32_t combined = 0;
  for (const BlockSpec& b : blocks) {
    const uint32_t crc = write_block(w, b);
    combined = ((combined << 1) | (combined >> 31)) ^ crc;
  }
  w.put(bz2::kEndOfStreamMagic, 48);
  w.put(combined, 32);
  return w.finish();
}

// ---- files and programs -----------------------------------------------------------------------

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string templ = std::string(base && *base ? base : "/tmp") + "/mibz2-test-XXXXXX";
  if (!mkdtemp(templ.data())) {
    std::perror("mkdtemp");
    std::abort();
  }
  path_ = templ;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::filesystem::path TempDir::write(const std::string& name, std::span<const uint8_t> data) const {
  const auto p = file(name);
  write_file(p, data);
  return p;
}

Bytes read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file(const std::filesystem::path& path, std::span<const uint8_t> data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::chrono::microseconds pause(100);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(1));
  }
  return true;
}

CommandResult run_command(const std::string& command) {
  CommandResult r;
  std::fflush(nullptr);
  FILE* p = popen(command.c_str(), "r");
  if (!p) return r;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.insert(r.out.end(), buf, buf + n);
  const int st = pclose(p);
  if (st == -1) r.status = -1;
  else if (WIFEXITED(st)) r.status = WEXITSTATUS(st);
  else if (WIFSIGNALED(st)) r.status = 128 + WTERMSIG(st);
  return r;
}

CommandResult run_command(const std::string& command, const std::filesystem::path& err_path) {
  CommandResult r = run_command(command + " 2>" + shell_quote(err_path.string()));
  const Bytes err = read_file(err_path);
  r.err.assign(err.begin(), err.end());
  return r;
}

std::vector<std::string> CommandResult::err_lines() const {
  std::vector<std::string> lines;
  for (size_t start = 0, end; start < err.size(); start = end + 1) {
    end = err.find('\n', start);
    if (end == std::string::npos) end = err.size();
    lines.push_back(err.substr(start, end - start));
  }
  return lines;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += "'\\''";
    else q += c;
  }
  return q + "'";
}

bool have_program(const std::string& name) {
  return run_command("command -v " + shell_quote(name) + " >/dev/null 2>&1").status == 0;
}

}  // namespace mibz2::test
