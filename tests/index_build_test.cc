// The index of every valid shape of bzip2 file against a sequential decode: the same blocks at the
// same bits, decompressed offsets and sizes, stream count and total; thousands of random ranges read
// through the index records alone equal the original bytes; any thread count or window gives the
// same index, byte for byte.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

#include "bz2/stream_parser.h"
#include "index/block_check.h"
#include "index/index_format.h"
#include "index/source_window.h"
#include "index_test_support.h"
#include "io/pipe_bytes.h"

namespace mibz2::test {
namespace {

TEST(IndexCorpus, CorpusHasTheShapesItClaims) {
  size_t multi_block = 0, multi_stream = 0;
  for (const Variant& v : corpus()) {
    FileLayout layout;
    ASSERT_TRUE(walk_file(v.file, &layout)) << v.name;
    if (layout.blocks.size() > 1) ++multi_block;
    if (layout.stream_bytes.size() > 1) ++multi_stream;
    if (v.name.rfind("level", 0) == 0) {
      EXPECT_GE(layout.blocks.size(), 2u) << v.name << " should have several blocks";
      EXPECT_EQ(layout.blocks.front().level, v.name.back() - '0') << v.name;
    }
  }
  EXPECT_GE(multi_block, 12u);
  EXPECT_GE(multi_stream, 4u);
}

TEST(IndexCorpus, IndexEqualsSequentialDecode) {
  for (const Variant& v : corpus()) {
    SCOPED_TRACE(v.name);
    const OurResult seq = decode_ours(v.file);
    ASSERT_TRUE(seq.ok()) << bz2::to_string(seq.error);
    ASSERT_TRUE(same_bytes(seq.out, v.plain));
    FileLayout layout;
    ASSERT_TRUE(walk_file(v.file, &layout));

    const index::BuildResult r = build_guarded(v.file, 1);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_TRUE(r.error.message().empty());
    EXPECT_TRUE(r.notes.empty()) << r.notes.front();
    EXPECT_TRUE(index_matches_layout(r.index, layout, seq.out.size()));
    // The block sizes add up to the total.
    uint64_t sum = 0;
    for (size_t i = 0; i < r.index.blocks.size(); ++i) sum += r.index.block_size(i);
    EXPECT_EQ(sum, v.plain.size());
  }
}

TEST(IndexCorpus, BlockAtMapsEveryBoundary) {
  for (const Variant& v : corpus()) {
    SCOPED_TRACE(v.name);
    const index::BuildResult r = build_guarded(v.file, 1);
    ASSERT_TRUE(r.ok()) << r.error;
    const index::BlockIndex& idx = r.index;
    for (size_t i = 0; i < idx.blocks.size(); ++i) {
      const uint64_t start = idx.blocks[i].out_offset;
      const uint64_t last = start + idx.block_size(i) - 1;
      ASSERT_EQ(idx.block_at(start), i);
      ASSERT_EQ(idx.block_at(last), i);
      ASSERT_EQ(idx.block_at(start + idx.block_size(i) / 2), i);
      if (i > 0) {
        ASSERT_EQ(idx.block_at(start - 1), i - 1);
      }
    }
  }
}

TEST(IndexCorpus, RandomRangesThroughTheIndexEqualTheOriginal) {
  const size_t per_variant = scaled(600, 150);
  size_t checked = 0, spanning_blocks = 0, spanning_streams = 0;
  for (const Variant& v : corpus()) {
    SCOPED_TRACE(v.name);
    const index::BuildResult r = build_guarded(v.file, 1);
    ASSERT_TRUE(r.ok()) << r.error;
    const index::BlockIndex& idx = r.index;
    IndexedBytes reader(v.file, idx);
    const uint64_t total = v.plain.size();

    // Where streams start in the decompressed file (for counting ranges that cross them).
    std::vector<uint64_t> stream_starts;
    for (const auto& b : idx.blocks)
      if (b.stream_start()) stream_starts.push_back(b.out_offset);

    auto check = [&](uint64_t off, uint64_t len) {
      const std::optional<Bytes> got = reader.range(off, len);
      ASSERT_TRUE(got.has_value()) << "range " << off << "+" << len;
      const uint64_t end = off >= total ? total : off + std::min(len, total - off);
      const Bytes want(v.plain.begin() + static_cast<std::ptrdiff_t>(std::min(off, total)),
                       v.plain.begin() + static_cast<std::ptrdiff_t>(end));
      ASSERT_TRUE(same_bytes(*got, want)) << "range " << off << "+" << len;
      ++checked;
      if (end > off && idx.block_at(off) != idx.block_at(end - 1)) ++spanning_blocks;
      if (end <= off) return;
      for (uint64_t s : stream_starts)
        if (s > off && s < end) {
          ++spanning_streams;
          break;
        }
    };

    // Edges: empty ranges, the end, past the end.
    check(0, 0);
    check(total, 10);
    check(total + 1000, 1);
    if (total == 0) continue;
    check(0, total);
    check(total - 1, 1);
    check(total - 1, 1000);
    // Around every block boundary, and from the middle of each block into the ones after it.
    for (size_t i = 0; i < idx.blocks.size(); ++i) {
      const uint64_t start = idx.blocks[i].out_offset;
      check(start, 1);
      if (start >= 3) check(start - 3, 7);
      const uint64_t mid = start + idx.block_size(i) / 2;
      check(mid, idx.block_size(i));
      if (i + 3 < idx.blocks.size()) check(mid, idx.blocks[i + 3].out_offset - mid + 5);
    }
    // Random ranges: short, within about a block, over several blocks, over much of the file.
    Rng rng(0x1DE5 + v.plain.size());
    const uint64_t block = std::max<uint64_t>(1, total / std::max<size_t>(1, idx.blocks.size()));
    for (size_t k = 0; k < per_variant; ++k) {
      const uint64_t off = rng.next() % total;
      uint64_t len;
      switch (rng.below(4)) {
        case 0: len = 1 + rng.below(100); break;
        case 1: len = 1 + rng.next() % block; break;
        case 2: len = 1 + rng.next() % (4 * block); break;
        default: len = 1 + rng.next() % total; break;
      }
      check(off, len);
    }
  }
  EXPECT_GE(checked, kSlowBuild ? 2500u : 10000u);
  EXPECT_GE(spanning_blocks, kSlowBuild ? 400u : 1000u);
  EXPECT_GE(spanning_streams, 100u);
}

// A block decoded for a reader (check_block) is held by the cache, which counts its capacity: the
// buffer is sized once from the block's record (its size + 4096) and the decode must not grow it.
// The decoder that reserved room of its own beyond that grew 66 blocks of the corpus.
TEST(IndexCorpus, ACheckedBlockKeepsTheBufferItsRecordSized) {
  bz2::BlockDecoder decoder;
  base::ByteBuffer compressed;
  for (const Variant& v : corpus()) {
    SCOPED_TRACE(v.name);
    const index::BuildResult r = build_guarded(v.file, 1);
    ASSERT_TRUE(r.ok()) << r.error;
    const io::SpanBytes source(v.file);
    for (size_t b = 0; b < r.index.blocks.size(); ++b) {
      const uint64_t expect = r.index.block_size(b);
      base::ByteBuffer out;
      out.reserve_exact(expect + 4096);  // what check_block reserves: it finds the room there
      const size_t sized = out.capacity();
      ASSERT_EQ(index::check_block(r.index, b, source, decoder, compressed, out).kind, index::BlockCheck::kOk);
      ASSERT_EQ(out.size(), expect);
      EXPECT_EQ(out.capacity(), sized) << "block " << b << " grew its buffer";
    }
  }
}

TEST(IndexCorpus, SerializeParseRoundTrip) {
  for (const Variant& v : corpus()) {
    SCOPED_TRACE(v.name);
    index::BuildResult r = build_guarded(v.file, 1);
    ASSERT_TRUE(r.ok()) << r.error;
    r.index.source = {v.file.size(), 1234567890123456789ull, 4242, 0xF00DF00DF00DF00Dull};
    const std::vector<uint8_t> bytes = index::serialize(r.index);
    ASSERT_EQ(bytes.size(), index::kHeaderSize + index::kBytesPerBlock * r.index.blocks.size());
    const base::Result<index::BlockIndex> back = index::parse(bytes);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_TRUE(same_index(*back, r.index));
    EXPECT_EQ(index::serialize(*back), bytes);
  }
}

// ---- several threads ----------------------------------------------------------------------------

TEST(IndexThreadsConcurrent, OneTwoAndFourThreadsGiveIdenticalIndexes) {
  for (const Variant& v : corpus()) {
    SCOPED_TRACE(v.name);
    const index::BuildResult one = build_guarded(v.file, 1);
    ASSERT_TRUE(one.ok()) << one.error;
    const std::vector<uint8_t> want = index::serialize(one.index);
    struct Config {
      unsigned threads;
      size_t window;
    };
    // (Fewer configurations under sanitizers, where every build is several times slower.)
    const std::vector<Config> configs = kSlowBuild ? std::vector<Config>{{2, 0}, {4, 1}}
                                                   : std::vector<Config>{{2, 0}, {4, 0}, {4, 1}, {2, 3}, {4, 64}};
    for (const Config c : configs) {
      const index::BuildResult other = build_guarded(v.file, c.threads, c.window);
      ASSERT_TRUE(other.ok()) << other.error;
      EXPECT_TRUE(same_index(other.index, one.index)) << c.threads << " threads, window " << c.window;
      EXPECT_EQ(index::serialize(other.index), want) << c.threads << " threads, window " << c.window;
      EXPECT_EQ(other.notes, one.notes);
    }
  }
}

TEST(IndexThreadsConcurrent, ManyBuildsOfTheSameFileAtOnce) {
  // Several builders over one mapped buffer at the same time (the filesystem indexes many files at
  // once): each gets the index a lone build gets.
  const Variant& v = corpus()[2];  // level3, several blocks
  const index::BuildResult want = build_guarded(v.file, 1);
  ASSERT_TRUE(want.ok());
  std::vector<index::BuildResult> got(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i)
    threads.emplace_back([&, i] { got[i] = build_guarded(v.file, 2, 1 + i); });
  for (auto& t : threads) t.join();
  for (const auto& g : got) {
    ASSERT_TRUE(g.ok());
    EXPECT_TRUE(same_index(g.index, want.index));
  }
}

TEST(IndexBuildConcurrent, CancelEndsABuildAtOnce) {
  const Variant& big = corpus().back();  // several MB of level-9 random data
  for (int when : {0, 1, 5}) {
    const io::SpanBytes bytes(big.file);
    index::IndexBuilder builder(bytes, 8);
    std::vector<std::thread> workers;
    for (int i = 0; i < 2; ++i) workers.emplace_back([&] { drive_builder(builder); });
    std::this_thread::sleep_for(std::chrono::milliseconds(when));
    builder.cancel();
    EXPECT_TRUE(builder.wait_finished(std::chrono::seconds(kSlowBuild ? 120 : 20)));
    for (auto& t : workers) t.join();
    const index::BuildResult r = builder.take_result();
    if (!r.ok()) {
      EXPECT_EQ(r.error.message(), "cancelled"); EXPECT_EQ(r.error.code(), ECANCELED);
    }
    builder.cancel();  // again: harmless
  }
}

}  // namespace
}  // namespace mibz2::test

namespace mibz2::test {
namespace {

// A source that shrank to `left` bytes after the build took its size: reads past it come back short.
class ShrunkBytes final : public io::SourceBytes {
 public:
  ShrunkBytes(const Bytes& data, uint64_t left) : io::SourceBytes(data.size()), data_(data), left_(left) {}

 private:
  io::SourceRead read_at(uint64_t offset, size_t len, uint8_t* out) const override {
    if (offset >= left_) return {};
    const size_t n = static_cast<size_t>(std::min<uint64_t>(len, left_ - offset));
    std::memcpy(out, data_.data() + offset, n);
    return {n};
  }
  const Bytes& data_;
  const uint64_t left_;
};

// A source that records the length of every read, in order.
class RecordedBytes final : public io::SourceBytes {
 public:
  explicit RecordedBytes(const Bytes& data) : io::SourceBytes(data.size()), data_(data) {}
  std::vector<size_t> reads() const {
    std::lock_guard lk(mu_);
    return reads_;
  }

 private:
  io::SourceRead read_at(uint64_t offset, size_t len, uint8_t* out) const override {
    {
      std::lock_guard lk(mu_);
      reads_.push_back(len);
    }
    std::memcpy(out, data_.data() + offset, len);
    return {len};
  }
  const Bytes& data_;
  mutable std::mutex mu_;
  mutable std::vector<size_t> reads_;
};

// Every decoder but the scanning one waits for the first scan piece: it is short, so that
// decoding starts at once (a first piece of 4 MB, read and scanned, took as long as decoding a
// block), and the pieces after it grow to 1 MiB. The build is the same.
TEST(IndexBuilder, DecodingStartsAfterAShortFirstScan) {
  const Bytes plain = random_bytes(6 << 20, 61);  // hardly compresses: 6 MB of input
  const Bytes file = libbz2_compress(plain, 1);
  const RecordedBytes bytes(file);
  index::IndexBuilder builder(bytes, 8);
  bz2::BlockDecoder decoder;
  base::ByteBuffer scratch;
  ASSERT_EQ(builder.step(decoder, scratch), index::IndexBuilder::Step::kWorked);  // the first scan
  ASSERT_EQ(bytes.reads().size(), 1u);
  EXPECT_LE(bytes.reads()[0], size_t{300} << 10) << "the first scan piece";
  EXPECT_GT(builder.ready_work(), 0u) << "no block to decode after the first scan";
  drive_builder(builder);
  const index::BuildResult got = builder.take_result();
  const index::BuildResult want = build_guarded(file, 1);
  ASSERT_TRUE(got.ok()) << got.error;
  EXPECT_EQ(got.index.blocks.size(), want.index.blocks.size());
  EXPECT_EQ(got.index.decompressed_size, plain.size());
  size_t largest = 0;
  for (size_t r : bytes.reads()) largest = std::max(largest, r);
  EXPECT_GE(largest, size_t{1} << 20) << "later pieces grow (256 kB, 256 kB, 512 kB, 1 MB, ...)";
}

// A finished build has resolved the whole file: its progress (user.mibz2fs.index, a stream's
// status) reads 100%, not the offset of the last end-of-stream marker.
TEST(IndexBuilder, AFinishedBuildHasResolvedEveryByte) {
  const Bytes file = libbz2_compress(text_bytes(300000, 62), 1);
  const io::SpanBytes bytes(file);
  index::IndexBuilder builder(bytes, 4);
  drive_builder(builder);
  ASSERT_TRUE(builder.finished());
  EXPECT_EQ(builder.bytes_done(), builder.bytes_total());
  EXPECT_EQ(builder.bytes_total(), file.size());
}

// A file dense with marks (3,000 tiny streams: 6,000 marks in its first scan piece; a crafted one
// holds 170,000 a MiB) is scanned in parts, so that the candidates a build holds stay bounded
// (several builds hold theirs at once), and its index is exact.
TEST(IndexBuilder, AFileDenseWithMarksHoldsBoundedCandidatesAndIsIndexedExactly) {
  const StreamedFile sf = streamed_file(3000, 20, 63);
  const Bytes file = sf.file();
  FileLayout layout;
  ASSERT_TRUE(walk_file(file, &layout));
  const io::SpanBytes bytes(file);
  constexpr size_t kWindow = 8;
  index::IndexBuilder builder(bytes, kWindow);
  bz2::BlockDecoder decoder;
  base::ByteBuffer scratch;
  size_t most = 0;
  for (size_t steps = 0; builder.step(decoder, scratch) != index::IndexBuilder::Step::kFinished; ++steps) {
    most = std::max(most, builder.candidates_held());
    ASSERT_LT(steps, 100000u) << "the build does not end";
  }
  EXPECT_GT(most, kWindow);
  EXPECT_LE(most, 2 * kWindow + index::IndexBuilder::kMaxScanMarks);
  const index::BuildResult r = builder.take_result();
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.index.blocks.size(), 3000u);
  EXPECT_TRUE(index_matches_layout(r.index, layout, sf.plain().size()));
}

// Decodes a whole file through `input` as mibz2 cat -j 1 does: the bytes written; the error in *e.
Bytes decode_through(index::SourceWindow& input, bz2::Error* e) {
  Bytes got;
  bz2::SequentialSink sink;
  sink.write = [&](const uint8_t* d, size_t n) {
    got.insert(got.end(), d, d + n);
    return true;
  };
  bz2::BlockDecoder decoder;
  *e = bz2::decode_sequential(input, decoder, sink);
  return got;
}

// mibz2 cat -j 1 reads through a SourceWindow: with windows far smaller than a block (every block
// straddles refills) and larger, the output and the error are those of the whole file in memory.
TEST(SourceWindow, SequentialDecodeThroughAnySizeOfWindowIsTheWholeFilesDecode) {
  for (const Variant& v : corpus()) {
    const OurResult want = decode_ours(v.file);
    for (size_t window : {size_t{1}, size_t{4096}, size_t{100000}, size_t{8} << 20}) {
      SCOPED_TRACE(v.name + ", window " + std::to_string(window));
      const io::SpanBytes bytes(v.file);
      index::SourceWindow input(bytes, window);
      bz2::Error e;
      const Bytes got = decode_through(input, &e);
      EXPECT_EQ(e.code, want.error.code);
      EXPECT_EQ(e.bit_offset, want.error.bit_offset);
      EXPECT_TRUE(same_bytes(got, want.out));
      EXPECT_FALSE(input.shrank());
    }
  }
}

// The window's buffer is never larger than the file: `mibz2 cat -j 1` of a small file does not
// take the 8 MiB the window reads at a time in a large one.
TEST(SourceWindow, ABufferNoLargerThanTheFile) {
  const Bytes plain = text_bytes(20000, 3);
  const Bytes file = libbz2_compress(plain, 9);
  const io::SpanBytes bytes(file);
  index::SourceWindow input(bytes);
  bz2::Error e;
  const Bytes got = decode_through(input, &e);
  EXPECT_FALSE(e) << bz2::to_string(e);
  EXPECT_TRUE(same_bytes(got, plain));
  EXPECT_GT(input.buffer_bytes(), 0u);
  EXPECT_LE(input.buffer_bytes(), file.size());
}

// A file that shrinks under the reader ends the input where it now ends, and says it shrank.
TEST(SourceWindow, AFileThatShrankEndsTheInputAndSaysSo) {
  const Variant& v = corpus().back();
  const ShrunkBytes bytes(v.file, v.file.size() / 2);
  index::SourceWindow input(bytes, 4096);
  bz2::Error e;
  const Bytes got = decode_through(input, &e);
  EXPECT_EQ(e.code, bz2::ErrorCode::kTruncated) << bz2::to_string(e);
  EXPECT_TRUE(input.shrank());
  EXPECT_EQ(input.read_error(), 0);
  EXPECT_LT(got.size(), v.plain.size());
}

// ---- read errors: never the end of the file, never damage, never a mismatch -----------------

// A file of many blocks in two streams, and its index built without faults.
struct Faultable {
  Bytes plain;
  Bytes file;
  index::BuildResult whole;
};
const Faultable& faultable() {
  static const Faultable f = [] {
    Faultable x;
    const Bytes a = mixed_bytes(scaled(900000, 300000), 71), b = mixed_bytes(scaled(600000, 200000), 72);
    const Bytes fa = libbz2_compress(a, 1), fb = libbz2_compress(b, 2);
    x.plain = concat({&a, &b});
    x.file = concat({&fa, &fb});
    x.whole = build_guarded(x.file, 2);
    return x;
  }();
  return f;
}

// A read error is no end of the file (docs/ARCHITECTURE.md): a build that meets one wherever it is (the first
// scan, a block's bytes, the last bytes) ends failed with its errno and says where; it never
// finishes with a truncation (which the catalog would store as the file's size for good). The
// same bytes without the fault build whole, as if it had never been.
TEST(IndexBuilder, AReadErrorFailsTheBuildWithItsErrnoNeverATruncation) {
  const Faultable& f = faultable();
  ASSERT_TRUE(f.whole.ok()) << f.whole.error;
  ASSERT_GE(f.whole.index.blocks.size(), 4u) << "meant to have several blocks";
  const uint64_t size = f.file.size();
  for (const uint64_t at : {uint64_t{0}, size / 3, size / 2, size - 1}) {
    for (const unsigned threads : {1u, 2u}) {
      SCOPED_TRACE("fault at byte " + std::to_string(at) + ", " + std::to_string(threads) + " threads");
      const FaultyBytes bytes(std::make_unique<io::SpanBytes>(f.file), at, at + 1);
      const index::BuildResult r = build_guarded(bytes, threads);
      EXPECT_FALSE(r.ok());
      EXPECT_EQ(r.error.code(), EIO);
      EXPECT_EQ(r.index.truncated_at_bit, 0u) << "a read error taken for the end of the file";
      EXPECT_EQ(r.index.damaged_blocks, 0u) << "a read error taken for damage";
      EXPECT_NE(r.error.message().find("read error at byte"), std::string::npos) << r.error;
      EXPECT_NE(r.error.message().find("Input/output error (EIO)"), std::string::npos) << r.error;
      EXPECT_GT(bytes.failed_reads(), 0u);
    }
  }
  std::atomic<bool> on{false};
  const FaultyBytes later(std::make_unique<io::SpanBytes>(f.file), size / 2, size / 2 + 1, &on);
  const index::BuildResult r = build_guarded(later, 2);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.error.code(), 0);
  EXPECT_TRUE(same_index(r.index, f.whole.index));
  EXPECT_EQ(r.index.decompressed_size, f.plain.size());
}

// The check behind every read of the engine and the validation of a copy's index: a block whose
// bytes cannot be read is a read error with its errno, not a mismatch (which distrusts the index);
// a source shorter than its index says is one.
TEST(BlockCheck, AReadErrorIsNoMismatch) {
  const Faultable& f = faultable();
  const index::BlockIndex& idx = f.whole.index;
  const size_t block = idx.blocks.size() / 2;
  const uint64_t at = idx.blocks[block].start_bit() / 8 + 100;
  const FaultyBytes bytes(std::make_unique<io::SpanBytes>(f.file), at, at + 1);
  bz2::BlockDecoder decoder;
  base::ByteBuffer compressed, out;
  const index::BlockCheck c = index::check_block(idx, block, bytes, decoder, compressed, out);
  EXPECT_EQ(c.kind, index::BlockCheck::kReadError) << c.why;
  EXPECT_EQ(c.why.code(), EIO);
  EXPECT_NE(c.why.message().find("Input/output error"), std::string::npos) << c.why;
  EXPECT_EQ(index::check_block(idx, block - 1, bytes, decoder, compressed, out).kind, index::BlockCheck::kOk);
  const ShrunkBytes shrunk(f.file, at);
  EXPECT_EQ(index::check_block(idx, block, shrunk, decoder, compressed, out).kind, index::BlockCheck::kMismatch);
}

// mibz2 cat -j 1: a read error ends the input with its errno and where it happened; it is not a
// file that shrank.
TEST(SourceWindow, AReadErrorEndsTheInputWithItsErrno) {
  const Faultable& f = faultable();
  const uint64_t at = f.file.size() / 2;
  const FaultyBytes bytes(std::make_unique<io::SpanBytes>(f.file), at, at + 1);
  index::SourceWindow input(bytes, 4096);
  bz2::Error e;
  const Bytes got = decode_through(input, &e);
  EXPECT_EQ(input.read_error(), EIO);
  EXPECT_LE(input.read_failure().at, at);
  EXPECT_FALSE(input.shrank());
  EXPECT_LT(got.size(), f.plain.size());
}

// A pipe whose read fails has not ended: its size stays unknown, and a read past what came gets
// the error (so a build of it fails with it) while what came before is still there.
TEST(PipeBytes, AReadErrorIsNoEndOfTheInput) {
  TempDir dir;
  const int fd = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY);  // read(2) fails: EISDIR
  ASSERT_GE(fd, 0);
  const io::PipeBytes pipe(fd);
  uint8_t buf[16];
  const io::SourceRead r = pipe.read(0, sizeof buf, buf);
  EXPECT_TRUE(r.failed());
  EXPECT_EQ(r.error, EISDIR);
  EXPECT_EQ(pipe.error(), EISDIR);
  EXPECT_EQ(pipe.size(), io::SourceBytes::kUnknownSize);
  const index::BuildResult built = build_guarded(pipe, 1);
  EXPECT_FALSE(built.ok());
  EXPECT_EQ(built.error.code(), EISDIR);
  ::close(fd);
}

}  // namespace
}  // namespace mibz2::test
