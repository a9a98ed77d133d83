#include "index_test_support.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <thread>

#include "base/byte_buffer.h"
#include "index/index_format.h"
#include "index/xxh3.h"

namespace mibz2::test {

// ---- corpus -----------------------------------------------------------------------------------

Bytes mixed_bytes(size_t n, uint64_t seed) {
  Rng rng(seed);
  Bytes out;
  out.reserve(n + 8192);
  uint64_t piece_seed = seed * 1000;
  while (out.size() < n) {
    const size_t len = 1024 + rng.below(7 * 1024);
    Bytes piece;
    switch (rng.below(5)) {
      case 0: piece = runs_bytes(len, ++piece_seed); break;
      case 1: piece = random_bytes(len, ++piece_seed); break;
      default: piece = text_bytes(len, ++piece_seed); break;
    }
    out.insert(out.end(), piece.begin(), piece.end());
  }
  out.resize(n);
  return out;
}

const std::vector<Variant>& corpus() {
  static const std::vector<Variant> variants = [] {
    std::vector<Variant> v;
    auto one = [&](std::string name, Bytes plain, int level) {
      Bytes file = libbz2_compress(plain, level);
      v.push_back({std::move(name), std::move(plain), std::move(file)});
    };
    // Several blocks at every level (a level-L block holds L * 100000 bytes before RLE1).
    for (int level = 1; level <= 9; ++level) {
      const size_t n = static_cast<size_t>(level) * 100000 * (kSlowBuild ? 16 : 25) / 10;
      one("level" + std::to_string(level), mixed_bytes(n, 100 + level), level);
    }
    {
      // Concatenated streams with mixed levels, empty streams among them.
      const Bytes a = text_bytes(scaled(250000, 120000), 1);
      const Bytes b = runs_bytes(scaled(300000, 150000), 2);
      const Bytes c = random_bytes(150000, 3);
      const Bytes d = text_bytes(120000, 4);
      const Bytes e = mixed_bytes(scaled(700000, 350000), 5);
      const Bytes none;
      const Bytes fa = libbz2_compress(a, 1), fempty9 = libbz2_compress(none, 9), fb = libbz2_compress(b, 9),
                  fc = libbz2_compress(c, 5), fd = libbz2_compress(d, 2), fe = libbz2_compress(e, 3),
                  fempty1 = libbz2_compress(none, 1);
      v.push_back({"multistream_mixed_levels", concat({&a, &none, &b, &c, &d, &e, &none}),
                   concat({&fa, &fempty9, &fb, &fc, &fd, &fe, &fempty1})});
      const Bytes t = text_bytes(50000, 6);
      const Bytes fe4 = libbz2_compress(none, 4), ft = libbz2_compress(t, 6), fe2 = libbz2_compress(none, 2);
      v.push_back({"empty_streams_around_one", t, concat({&fe4, &ft, &fe2})});
      v.push_back({"two_empty_streams", none, concat({&fempty1, &fempty9})});
      // Many small streams, as pbzip2 writes them.
      Bytes plain, file;
      for (int i = 0; i < 40; ++i) {
        const Bytes p = mixed_bytes(1000 + 997 * static_cast<size_t>(i), 700 + i);
        const Bytes f = libbz2_compress(p, 1 + i % 9);
        plain.insert(plain.end(), p.begin(), p.end());
        file.insert(file.end(), f.begin(), f.end());
      }
      v.push_back({"forty_small_streams", std::move(plain), std::move(file)});
    }
    one("empty_stream", {}, 9);
    one("runs_level1", runs_bytes(scaled(1500000, 400000), 7), 1);
    // Blocks that decode to ~5 MB each (RLE1 turns 255 equal bytes into 5).
    one("one_long_run_level1", repeated_byte(scaled(12000000, 6000000), 'z'), 1);
    one("all_byte_values_level2", all_byte_values(scaled(4096, 1024), 8), 2);
    one("one_byte", to_bytes("x"), 1);
    one("short_text", text_bytes(100, 9), 9);
    // Compressed size beyond one 4 MB scanner chunk.
    one("random_level9_multi_chunk", random_bytes(4500000, 10), 9);
    return v;
  }();
  return variants;
}

// ---- builds -----------------------------------------------------------------------------------

void drive_builder(index::IndexBuilder& builder) {
  bz2::BlockDecoder decoder;
  base::ByteBuffer scratch;
  for (;;) {
    const index::IndexBuilder::Step s = builder.step(decoder, scratch);
    if (s == index::IndexBuilder::Step::kFinished) return;
    // Others are decoding what resolution waits for (or a sink is full): let them run.
    if (s == index::IndexBuilder::Step::kIdle) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

index::BuildResult build_guarded(std::span<const uint8_t> data, unsigned threads, size_t window) {
  const io::SpanBytes bytes(data);
  return build_guarded(bytes, threads, window);
}

index::BuildResult build_guarded(const io::SourceBytes& source, unsigned threads, size_t window,
                                 const index::IndexPrefix* kept, uint64_t* decodes) {
  threads = std::max(1u, threads);
  index::IndexBuilder builder(source, window ? window : 4 * size_t{threads}, nullptr, kept);
  std::vector<std::thread> workers;
  for (unsigned i = 0; i < threads; ++i) workers.emplace_back([&builder] { drive_builder(builder); });
  if (!builder.wait_finished(kBuildTimeout)) {
    std::fprintf(stderr, "FATAL: the index build of a %llu-byte file on %u threads (window %zu) did not finish in %lld s\n",
                 static_cast<unsigned long long>(source.size()), threads, window,
                 static_cast<long long>(kBuildTimeout.count()));
    std::fflush(stderr);
    std::abort();  // its threads cannot be joined: end the program rather than hang the suite
  }
  for (auto& t : workers) t.join();
  if (decodes) *decodes = builder.decodes();
  return builder.take_result();
}

// ---- read errors ------------------------------------------------------------------------------

FaultyBytes::FaultyBytes(std::unique_ptr<io::SourceBytes> inner, uint64_t from, uint64_t to,
                         const std::atomic<bool>* fault_on, int error)
    : io::SourceBytes(inner->size()), inner_(std::move(inner)), from_(from), to_(to), fault_on_(fault_on), error_(error) {}

io::SourceRead FaultyBytes::read_at(uint64_t offset, size_t len, uint8_t* out) const {
  const bool on = !fault_on_ || fault_on_->load();
  if (on && offset < to_ && offset + len > from_) {
    failed_.fetch_add(1);
    return io::SourceRead::failure(error_, offset, len);  // the whole request fails, as a file system's does
  }
  return inner_->read(offset, len, out);
}

// ---- checks -----------------------------------------------------------------------------------

namespace {

std::string record_text(const index::BlockRecord& r) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "{start_bit %llu level %d flags %s%s%s%s%s out_offset %llu bit_length %llu crc %08x}",
                static_cast<unsigned long long>(r.start_bit()), r.level(), r.crc_mismatch() ? "C" : "-",
                r.undecodable() ? "U" : "-", r.stream_start() ? "S" : "-", r.stream_crc_mismatch() ? "M" : "-",
                r.truncated() ? "T" : "-", static_cast<unsigned long long>(r.out_offset),
                static_cast<unsigned long long>(r.bit_length), r.crc);
  return buf;
}

}  // namespace

uint64_t sed_lines(std::span<const uint8_t> plain) {
  uint64_t lines = 0;
  for (uint8_t c : plain) lines += c == '\n';
  return lines + (!plain.empty() && plain.back() != '\n' ? 1 : 0);
}

Bytes version2_bytes(const index::BlockIndex& idx) {
  Bytes v3 = index::serialize(idx);
  Bytes v2(v3.begin(), v3.begin() + static_cast<ptrdiff_t>(index::kHeaderSize + 32 * idx.blocks.size()));
  std::fill(v2.begin() + 8, v2.begin() + 12, 0);  // version 2, little-endian
  v2[8] = 2;
  std::fill(v2.begin() + 96, v2.begin() + 104, 0);
  index::Xxh3 h;
  h.update(v2.data(), 120);
  h.update(v2.data() + index::kHeaderSize, v2.size() - index::kHeaderSize);
  const uint64_t sum = h.digest();
  std::memcpy(v2.data() + 120, &sum, sizeof sum);
  return v2;
}

uint64_t walked_line_start(std::span<const uint8_t> plain, uint64_t n) {
  if (n == 1) return 0;
  uint64_t seen = 0;
  for (size_t i = 0; i < plain.size(); ++i)
    if (plain[i] == '\n' && ++seen == n - 1) return i + 1;
  return plain.size();
}

void mark_damaged(index::BlockIndex& want, size_t block, uint8_t flags) {
  want.blocks.mutable_at(block).flags |= flags;
  if (want.newlines.size() > block) want.newlines.mutable_at(block) = index::kUnknownNewlines;
  want.line_count = index::kUnknownLines;
}

::testing::AssertionResult same_index(const index::BlockIndex& a, const index::BlockIndex& e) {
  auto fail = [] { return ::testing::AssertionFailure(); };
  if (!(a.source == e.source))
    return fail() << "source identity differs: size " << a.source.size << "/" << e.source.size << " mtime "
                  << a.source.mtime_ns << "/" << e.source.mtime_ns << " inode " << a.source.inode << "/"
                  << e.source.inode << " fingerprint " << a.source.fingerprint << "/" << e.source.fingerprint;
  if (a.decompressed_size != e.decompressed_size)
    return fail() << "decompressed_size " << a.decompressed_size << " vs " << e.decompressed_size;
  if (a.stream_count != e.stream_count) return fail() << "stream_count " << a.stream_count << " vs " << e.stream_count;
  if (a.trailing_bytes != e.trailing_bytes)
    return fail() << "trailing_bytes " << a.trailing_bytes << " vs " << e.trailing_bytes;
  if (a.truncated_at_bit != e.truncated_at_bit)
    return fail() << "truncated_at_bit " << a.truncated_at_bit << " vs " << e.truncated_at_bit;
  if (a.flags != e.flags) return fail() << "flags " << a.flags << " vs " << e.flags;
  if (a.damaged_blocks != e.damaged_blocks)
    return fail() << "damaged_blocks " << a.damaged_blocks << " vs " << e.damaged_blocks;
  if (a.blocks.size() != e.blocks.size())
    return fail() << "block count " << a.blocks.size() << " vs " << e.blocks.size();
  for (size_t i = 0; i < a.blocks.size(); ++i) {
    const auto& x = a.blocks[i];
    const auto& y = e.blocks[i];
    if (x.first_bit != y.first_bit || x.stream_level != y.stream_level || x.flags != y.flags ||
        x.out_offset != y.out_offset || x.bit_length != y.bit_length || x.crc != y.crc || x.reserved != y.reserved)
      return fail() << "block " << i << ": " << record_text(x) << " vs " << record_text(y);
  }
  if (a.line_count != e.line_count) return fail() << "line_count " << a.line_count << " vs " << e.line_count;
  if (a.newlines != e.newlines) {
    if (a.newlines.size() != e.newlines.size())
      return fail() << "newline counts of " << a.newlines.size() << " blocks vs " << e.newlines.size();
    const size_t i = static_cast<size_t>(std::mismatch(a.newlines.begin(), a.newlines.end(), e.newlines.begin()).first -
                                         a.newlines.begin());
    return fail() << "block " << i << ": " << a.newlines[i] << " newlines vs " << e.newlines[i];
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult index_matches_layout(const index::BlockIndex& idx, const FileLayout& layout,
                                                uint64_t decompressed_size) {
  auto fail = [] { return ::testing::AssertionFailure(); };
  if (idx.blocks.size() != layout.blocks.size())
    return fail() << "index has " << idx.blocks.size() << " blocks, the decode walked " << layout.blocks.size();
  for (size_t i = 0; i < idx.blocks.size(); ++i) {
    const index::BlockRecord& r = idx.blocks[i];
    const BlockSpan& s = layout.blocks[i];
    const bool first_of_stream = i == 0 || layout.blocks[i - 1].stream != s.stream;
    if (r.start_bit() != s.start_bit || r.end_bit() != s.end_bit || r.level() != s.level || r.crc != s.stored_crc ||
        r.out_offset != s.out_offset || idx.block_size(i) != s.out_size || r.damaged() ||
        r.stream_start() != first_of_stream || r.reserved != 0)
      return fail() << "block " << i << ": index " << record_text(r) << " size " << idx.block_size(i)
                    << ", decode: start_bit " << s.start_bit << " end_bit " << s.end_bit << " level " << s.level
                    << " crc " << s.stored_crc << " out_offset " << s.out_offset << " size " << s.out_size
                    << (first_of_stream ? " first of its stream" : "");
  }
  if (idx.decompressed_size != decompressed_size)
    return fail() << "decompressed_size " << idx.decompressed_size << ", decoded " << decompressed_size;
  if (idx.stream_count != layout.stream_bytes.size())
    return fail() << "stream_count " << idx.stream_count << ", the decode walked " << layout.stream_bytes.size();
  if (idx.trailing_bytes || idx.truncated_at_bit || idx.flags || idx.damaged_blocks)
    return fail() << "a valid file with trailing_bytes " << idx.trailing_bytes << " truncated_at_bit "
                  << idx.truncated_at_bit << " flags " << idx.flags << " damaged_blocks " << idx.damaged_blocks;
  return ::testing::AssertionSuccess();
}

const Bytes* IndexedBytes::block(size_t i) {
  const index::BlockRecord& r = idx_.blocks[i];
  if (r.damaged()) return nullptr;
  if (auto it = blocks_.find(i); it != blocks_.end()) return &it->second;
  base::ByteBuffer out;
  bz2::BlockResult res;
  const bz2::Error e = decoder_.decode(file_, r.start_bit(), r.level(), out, res);
  if (e) {
    ADD_FAILURE() << "block " << i << " " << record_text(r) << " does not decode from its record: " << bz2::to_string(e);
    return nullptr;
  }
  if (res.end_bit != r.end_bit() || res.stored_crc != r.crc || out.size() != idx_.block_size(i)) {
    ADD_FAILURE() << "block " << i << " " << record_text(r) << " decodes to end bit " << res.end_bit << ", crc "
                  << res.stored_crc << ", " << out.size() << " bytes; the index says " << idx_.block_size(i);
    return nullptr;
  }
  Bytes bytes(out.size());
  if (out.size()) std::memcpy(bytes.data(), out.data(), out.size());
  return &blocks_.emplace(i, std::move(bytes)).first->second;
}

std::optional<Bytes> IndexedBytes::range(uint64_t offset, uint64_t length) {
  Bytes out;
  if (offset >= idx_.decompressed_size || length == 0) return out;
  const uint64_t end = offset + std::min(length, idx_.decompressed_size - offset);
  const size_t first = idx_.block_at(offset);
  const size_t last = idx_.block_at(end - 1);
  uint64_t pos = offset;
  for (size_t b = first; b <= last; ++b) {
    const Bytes* blk = block(b);
    if (!blk) return std::nullopt;
    const uint64_t from = pos - idx_.blocks[b].out_offset;
    const uint64_t take = std::min<uint64_t>(blk->size() - from, end - pos);
    out.insert(out.end(), blk->begin() + static_cast<std::ptrdiff_t>(from),
               blk->begin() + static_cast<std::ptrdiff_t>(from + take));
    pos += take;
  }
  if (pos != end) {
    ADD_FAILURE() << "blocks " << first << ".." << last << " cover only up to " << pos << " of [" << offset << ", "
                  << end << ")";
    return std::nullopt;
  }
  return out;
}

// ---- damage -----------------------------------------------------------------------------------

std::optional<Bytes> with_crc_only_damage(const Bytes& file, const BlockSpan& block) {
  const std::optional<uint64_t> bit = find_crc_only_flip(file, block);
  if (!bit) return std::nullopt;
  Bytes damaged = file;
  flip_bit(damaged, *bit);
  return damaged;
}

std::optional<uint64_t> find_crc_only_flip(const Bytes& file, const BlockSpan& block) {
  Bytes f = file;
  bz2::BlockDecoder decoder;
  base::ByteBuffer out;
  const uint64_t from = block.start_bit + (block.end_bit - block.start_bit) / 2;
  for (uint64_t bit = from; bit + 64 < block.end_bit && bit < from + 4000; ++bit) {
    flip_bit(f, bit);
    out.clear();
    bz2::BlockResult r;
    const bz2::Error e = decoder.decode(f, block.start_bit, block.level, out, r);
    flip_bit(f, bit);
    if (e.code == bz2::ErrorCode::kBlockCrcMismatch && r.end_bit == block.end_bit && out.size() == block.out_size)
      return bit;
  }
  return std::nullopt;
}

std::optional<uint64_t> find_early_failure_flip(const Bytes& file, const BlockSpan& block) {
  Bytes f = file;
  bz2::BlockDecoder decoder;
  base::ByteBuffer out;
  // Magic (48), CRC (32), randomised (1), origin pointer (24): the symbol map starts after them.
  const uint64_t tables = block.start_bit + 48 + 32 + 1 + 24;
  for (uint64_t bit = tables; bit < tables + 2000 && bit < block.end_bit; ++bit) {
    flip_bit(f, bit);
    out.clear();
    bz2::BlockResult r;
    const bz2::Error e = decoder.decode(f, block.start_bit, block.level, out, r);
    flip_bit(f, bit);
    if (e && !r.symbols_read) return bit;
  }
  return std::nullopt;
}

namespace {

bool bit_at(const Bytes& b, uint64_t i) { return (b[i / 8] >> (7 - i % 8)) & 1; }

void append_bit(Bytes& b, uint64_t& n, bool v) {
  if (n % 8 == 0) b.push_back(0);
  if (v) b.back() |= static_cast<uint8_t>(0x80u >> (n % 8));
  ++n;
}

}  // namespace

Bytes copy_bits(const Bytes& file, uint64_t from, uint64_t to) {
  Bytes out;
  uint64_t n = 0;
  for (uint64_t i = from; i < to; ++i) append_bit(out, n, bit_at(file, i));
  return out;
}

Bytes splice_bits(const Bytes& file, uint64_t from, uint64_t to, const Bytes& insert, uint64_t insert_bits) {
  Bytes out;
  uint64_t n = 0;
  for (uint64_t i = 0; i < from; ++i) append_bit(out, n, bit_at(file, i));
  for (uint64_t i = 0; i < insert_bits; ++i) append_bit(out, n, bit_at(insert, i));
  for (uint64_t i = to; i < file.size() * 8; ++i) append_bit(out, n, bit_at(file, i));
  return out;
}

// ---- files ------------------------------------------------------------------------------------

FileTimes stat_times(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    ADD_FAILURE() << "stat " << path;
    return {};
  }
  return {st.st_mtim, static_cast<uint64_t>(st.st_ino)};
}

void restore_mtime(const std::string& path, const struct timespec& t) {
  const struct timespec times[2] = {t, t};
  if (utimensat(AT_FDCWD, path.c_str(), times, 0) != 0) ADD_FAILURE() << "utimensat " << path;
}

Bytes StreamedFile::plain() const {
  Bytes out;
  for (const Bytes& p : plains) out.insert(out.end(), p.begin(), p.end());
  return out;
}

Bytes StreamedFile::file() const {
  Bytes out;
  for (const Bytes& s : streams) out.insert(out.end(), s.begin(), s.end());
  return out;
}

uint64_t StreamedFile::stream_offset(size_t k) const {
  uint64_t off = 0;
  for (size_t i = 0; i < k; ++i) off += streams[i].size();
  return off;
}

StreamedFile StreamedFile::with_stream_changed(size_t k) const {
  StreamedFile twin = *this;
  // Change one letter at a time until the stream compresses to the same size (a few tries: sizes
  // move by a few bytes either way).
  for (size_t attempt = 0; attempt < 5000; ++attempt) {
    Bytes p = plains[k];
    const size_t at = (attempt * 7919 + 13) % p.size();
    p[at] = static_cast<uint8_t>(p[at] == 'x' ? 'y' : 'x');
    if (p == plains[k]) continue;
    Bytes s = libbz2_compress(p, 1);
    if (s.size() != streams[k].size()) continue;
    twin.plains[k] = std::move(p);
    twin.streams[k] = std::move(s);
    return twin;
  }
  ADD_FAILURE() << "no change of stream " << k << " compresses to its size";
  return twin;
}

StreamedFile streamed_file(size_t streams, size_t stream_plain, uint64_t seed) {
  StreamedFile f;
  for (size_t i = 0; i < streams; ++i) {
    f.plains.push_back(text_bytes(stream_plain, seed * 1000 + i));
    f.streams.push_back(libbz2_compress(f.plains.back(), 1));
  }
  return f;
}

index::SourceIdentity identity_of(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0) << path;
  if (fd < 0) return {};
  const base::Result<index::SourceIdentity> id = index::identify_source(fd);
  EXPECT_TRUE(id.ok()) << path << ": " << id.status();
  close(fd);
  return id.ok() ? *id : index::SourceIdentity{};
}

}  // namespace mibz2::test
