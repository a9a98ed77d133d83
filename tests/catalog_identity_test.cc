// An index built once serves every copy, without a mount: index files are named by the
// source's content (size and fingerprint), so a copy (new path, mtime and inode) finds its index and
// uses it once a sample of its blocks checks out, with no rebuild; a sidecar next to the source is
// used the same way; and an index presented for another file of the same size, even one of the same
// fingerprint, never serves that file wrong bytes: it is rejected by identity or by the sample, or
// the first read of a block that differs fails with EIO (logged once) and the next open rebuilds.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <ctime>
#include <functional>
#include <thread>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include "catalog_test_support.h"
#include "engine/reader.h"
#include "index/block_check.h"
#include "index/index_format.h"

namespace mibz2::test {
namespace {

namespace fs = std::filesystem;
using catalog::Catalog;
using catalog::IndexState;
using index::Load;
using Need = catalog::Catalog::Need;

constexpr size_t kFingerprintSpan = 64 * 1024;

// The engine's log lines while it lives (spdlog's default logger replaced, then restored).
class LogCapture {
 public:
  LogCapture() : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(1000)), old_(spdlog::default_logger()) {
    auto logger = std::make_shared<spdlog::logger>("capture", sink_);
    logger->set_level(spdlog::level::debug);
    spdlog::set_default_logger(logger);
  }
  ~LogCapture() { spdlog::set_default_logger(old_); }
  size_t count(const std::string& text) const {
    size_t n = 0;
    for (const std::string& line : sink_->last_formatted())
      if (line.find(text) != std::string::npos) ++n;
    return n;
  }
  std::string all() const {
    std::string out;
    for (const std::string& line : sink_->last_formatted()) out += line;
    return out;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> old_;
};

// The whole file through a Reader, or the first read error (-errno) with what came before it.
struct ReadBack {
  Bytes data;
  int error = 0;
};
ReadBack read_through(Catalog& catalog, const catalog::FileRef& file, size_t chunk = 64 * 1024) {
  ReadBack out;
  base::Result<std::shared_ptr<engine::Reader>> opened = catalog.open(file);
  if (!opened.ok()) {
    out.error = -EIO;
    return out;
  }
  const std::shared_ptr<engine::Reader> reader = std::move(opened).value();
  Bytes buf(chunk);
  for (uint64_t off = 0;;) {
    const ssize_t n = reader->read(off, chunk, buf.data());
    if (n < 0) {
      out.error = static_cast<int>(n);
      return out;
    }
    if (n == 0) return out;
    out.data.insert(out.data.end(), buf.begin(), buf.begin() + n);
    off += static_cast<uint64_t>(n);
  }
}

// A copy has a new path, a new inode and a new mtime: its index is found by content and validated
// by its sample, not rebuilt; the copy reads right; the index file is left as it was.
TEST(IndexIdentity, CopyWithNewPathInodeAndMtimeIsValidatedNotRebuilt) {
  CatalogRig s;
  const Bytes plain = text_bytes(2'000'000, 41);
  fs::create_directories(s.dir.path() / "a");
  const fs::path original = s.dir.write("a/dump.bz2", libbz2_compress(plain, 1));
  const catalog::IndexStatus built = s.obtain(original);
  ASSERT_TRUE(built.ready()) << built.error;
  ASSERT_TRUE(built.origin.built && built.origin.saved) << built.origin.save_error;
  ASSERT_GT(built.index->blocks.size(), 8u) << "meant to sample 8 of more blocks";
  const Bytes index_before = read_file(built.origin.index_path);

  const fs::path copy = s.dir.path() / "b" / "renamed-copy.bz2";
  fs::create_directories(copy.parent_path());
  fs::copy_file(original, copy);
  struct timespec later = stat_times(original.string()).mtime;
  later.tv_sec += 3600;
  restore_mtime(copy.string(), later);
  ASSERT_NE(stat_times(copy.string()).inode, stat_times(original.string()).inode);

  // Another mount: a fresh catalog on the same index directory.
  CatalogAt on(s.store.dir());
  Catalog& catalog = on.catalog;
  const catalog::FileRef f = catalog.add(copy.string());
  catalog.prepare(f, Need::kNow);
  settle_guarded(catalog, f);
  const catalog::IndexStatus got = catalog.status(f);
  ASSERT_TRUE(got.ready()) << got.error;
  EXPECT_FALSE(got.origin.built) << "the copy was indexed again: " << got.origin.not_loaded_reason;
  EXPECT_TRUE(got.origin.validated);
  EXPECT_EQ(got.origin.blocks_validated, 8u);
  EXPECT_EQ(got.origin.index_path, built.origin.index_path) << "one index file for every copy";
  // In memory it is the copy's index now (its own mtime and inode), so opens and refreshes agree.
  EXPECT_EQ(got.index->source, identity_of(copy.string()));
  const ReadBack r = read_through(catalog, f);
  EXPECT_EQ(r.error, 0);
  EXPECT_TRUE(r.data == plain) << "the copy does not read as the original's content";
  EXPECT_TRUE(read_file(built.origin.index_path) == index_before) << "validating a copy rewrote the shared index";
}

// Touching a file (new mtime, same bytes) costs a validation, not a rebuild.
TEST(IndexIdentity, TouchedFileIsValidatedNotRebuilt) {
  CatalogRig s;
  const Bytes plain = text_bytes(300000, 42);
  const fs::path path = s.dir.write("t.bz2", libbz2_compress(plain, 1));
  ASSERT_TRUE(s.obtain(path).origin.built);
  struct timespec later = stat_times(path.string()).mtime;
  later.tv_sec += 10;
  restore_mtime(path.string(), later);
  index::IndexStore shared(s.store.dir());
  const catalog::IndexStatus got = obtain_guarded(path.string(), shared, 1);
  ASSERT_TRUE(got.ready());
  EXPECT_FALSE(got.origin.built);
  EXPECT_TRUE(got.origin.validated);
}

// An index file is named by its source's size and fingerprint; files of other content never share
// a name, and a file's name does not depend on where the file is.
TEST(IndexIdentity, IndexFilesAreNamedByContent) {
  TempDir dir;
  index::IndexStore store((dir.path() / "idx").string());
  index::SourceIdentity id;
  id.size = 1048576000;
  id.fingerprint = 0x3f0c6a1d9e2b4c55;
  id.mtime_ns = 12345;
  id.inode = 99;
  EXPECT_EQ(store.path_for(id), store.dir() + "/3f0c6a1d9e2b4c55-1048576000.idx");
  index::SourceIdentity moved = id;
  moved.mtime_ns = 1;
  moved.inode = 2;
  EXPECT_EQ(store.path_for(moved), store.path_for(id)) << "mtime and inode are not part of the name";
  index::SourceIdentity other = id;
  other.size += 1;
  EXPECT_NE(store.path_for(other), store.path_for(id));
  other = id;
  other.fingerprint ^= 1;
  EXPECT_NE(store.path_for(other), store.path_for(id));
}

// The samples: 8 undamaged blocks spread over the file, the first and the last among them.
TEST(IndexIdentity, SampleIsSpreadOverTheFile) {
  index::BlockIndex idx;
  for (uint64_t i = 0; i < 100; ++i)
    idx.blocks.push_back(index::BlockRecord::make(32 + i * 1000, 1, 0, i * 10, 1000, 0));
  std::vector<size_t> s = index::sample_blocks(idx);
  ASSERT_EQ(s.size(), 8u);
  EXPECT_EQ(s.front(), 0u);
  EXPECT_EQ(s.back(), 99u);
  EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));
  EXPECT_EQ(std::adjacent_find(s.begin(), s.end()), s.end());
  for (size_t i = 1; i < s.size(); ++i) EXPECT_LE(s[i] - s[i - 1], 15u) << "not spread evenly";
  // Damaged blocks are never sampled (they are never served either).
  idx.blocks.mutable_at(0).flags |= index::BlockRecord::kCrcMismatch;
  idx.blocks.mutable_at(99).flags |= index::BlockRecord::kTruncated;
  idx.damaged_blocks = 2;
  s = index::sample_blocks(idx);
  ASSERT_EQ(s.size(), 8u);
  EXPECT_EQ(s.front(), 1u);
  EXPECT_EQ(s.back(), 98u);
  // Few blocks: all of them.
  idx.blocks.resize(5);
  idx.damaged_blocks = 1;
  EXPECT_EQ(index::sample_blocks(idx), (std::vector<size_t>{1, 2, 3, 4}));
}

// Two files of one size with other content: A's index copied to B's index name is not B's index
// (its fingerprint is A's): B is indexed again and reads right.
TEST(IndexIdentity, IndexOfAnotherFileOfTheSameSizeUnderItsNameIsRebuilt) {
  CatalogRig s;
  const StreamedFile a = streamed_file(12, 60000, 51);
  StreamedFile b = a.with_stream_changed(0);  // the first 64 KiB differ: another fingerprint
  ASSERT_EQ(a.file().size(), b.file().size());
  const fs::path pa = s.dir.write("a.bz2", a.file()), pb = s.dir.write("b.bz2", b.file());
  const catalog::IndexStatus ia = s.obtain(pa);
  ASSERT_TRUE(ia.origin.saved);
  const index::SourceIdentity idb = identity_of(pb.string());
  ASSERT_NE(idb.fingerprint, ia.index->source.fingerprint);
  fs::copy_file(ia.origin.index_path, s.store.path_for(idb));

  const index::LoadedIndex stale = s.store.load(idb);
  EXPECT_EQ(stale.load, Load::kStale) << stale.why;
  LogCapture log;
  CatalogAt on(s.store.dir());
  Catalog& catalog = on.catalog;
  const catalog::FileRef f = catalog.add(pb.string());
  const ReadBack r = read_through(catalog, f);
  EXPECT_EQ(r.error, 0);
  EXPECT_TRUE(r.data == b.plain()) << "B read with A's index";
  EXPECT_TRUE(catalog.status(f).origin.built);
  EXPECT_EQ(log.count("stored index not used"), 1u) << log.all();
}

// The hard case: B has A's size and fingerprint (they differ in one stream in the middle only), so
// A's index is B's by name and identity. Whether the sample catches it or not, B never reads as A.
class SameIdentityOtherBytes : public ::testing::Test {
 protected:
  void make(bool differ_in_sample) {
    a_ = streamed_file(24, 60000, 61);
    const Bytes fa = a_.file();
    ASSERT_GT(fa.size(), 4 * kFingerprintSpan);
    // A's index, to know which blocks the sample takes (one stream = one block).
    const fs::path pa = s_.dir.write("a.bz2", fa);
    ia_ = s_.obtain(pa);
    ASSERT_TRUE(ia_.ready() && ia_.origin.saved);
    ASSERT_EQ(ia_.index->blocks.size(), a_.streams.size());
    const std::vector<size_t> sample = index::sample_blocks(*ia_.index);
    for (size_t k = 0; k < a_.streams.size(); ++k) {
      const bool outside_fingerprint = a_.stream_offset(k) >= kFingerprintSpan &&
                                       a_.stream_offset(k + 1) <= fa.size() - kFingerprintSpan;
      const bool sampled = std::count(sample.begin(), sample.end(), k) > 0;
      if (outside_fingerprint && sampled == differ_in_sample) {
        differ_ = k;
        break;
      }
    }
    ASSERT_NE(differ_, SIZE_MAX);
    b_ = a_.with_stream_changed(differ_);
    ASSERT_FALSE(b_.plain() == a_.plain());
    fs::create_directories(s_.dir.path() / "b");
    pb_ = s_.dir.write("b/b.bz2", b_.file());
    const index::SourceIdentity idb = identity_of(pb_.string());
    ASSERT_EQ(idb.size, ia_.index->source.size);
    ASSERT_EQ(idb.fingerprint, ia_.index->source.fingerprint) << "the twins should share their identity";
    ASSERT_EQ(s_.store.path_for(idb), ia_.origin.index_path);
  }

  CatalogRig s_;
  StreamedFile a_, b_;
  catalog::IndexStatus ia_;
  size_t differ_ = SIZE_MAX;
  fs::path pb_;
};

TEST_F(SameIdentityOtherBytes, BlockOutsideTheSampleFailsWithEioThenRebuilds) {
  make(/*differ_in_sample=*/false);
  if (HasFailure()) return;
  LogCapture log;
  CatalogAt on(s_.store.dir());
  Catalog& catalog = on.catalog;
  const catalog::FileRef f = catalog.add(pb_.string());
  catalog.prepare(f, Need::kNow);
  settle_guarded(catalog, f);
  ASSERT_TRUE(catalog.status(f).origin.validated) << "the sample should not see the difference";

  const Bytes plain_b = b_.plain(), plain_a = a_.plain();
  const uint64_t from = ia_.index->blocks[differ_].out_offset;
  const uint64_t size = ia_.index->block_size(differ_);
  std::shared_ptr<engine::Reader> reader = reader_of(catalog, f);
  ASSERT_TRUE(reader);
  // Every block but the one that differs reads right; that one fails, whoever asks, however often.
  Bytes buf(size);
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(reader->read(from, size, buf.data()), -EIO) << "round " << round;
    EXPECT_EQ(reader->read(from + size / 2, 100, buf.data()), -EIO);
  }
  for (size_t k = 0; k < a_.streams.size(); ++k) {
    if (k == differ_) continue;
    const uint64_t o = ia_.index->blocks[k].out_offset, n = ia_.index->block_size(k);
    Bytes got(n);
    const ssize_t r = reader->read(o, n, got.data());
    if (r < 0) continue;  // read after the catalog distrusted the index: EIO is allowed, wrong bytes not
    ASSERT_EQ(static_cast<uint64_t>(r), n);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), plain_b.begin() + static_cast<ptrdiff_t>(o))) << "block " << k;
  }
  EXPECT_EQ(log.count("fail until it is indexed again"), 1u) << "logged once:\n" << log.all();
  EXPECT_EQ(catalog.status(f).state, IndexState::kStale) << log.all();
  reader.reset();

  // The next open builds B's own index (not A's again) and reads right; A's bytes never appear.
  const ReadBack r = read_through(catalog, f);
  EXPECT_EQ(r.error, 0);
  EXPECT_TRUE(r.data == plain_b);
  EXPECT_TRUE(catalog.status(f).origin.built);
  EXPECT_EQ(log.count("fail until it is indexed again"), 1u) << log.all();
}

// A crafted index believed without a sample (this file's own, current) in which every block from
// the third on is said to start 100,000 bytes later. Only the decode of the second block can tell;
// the blocks after it match their records and are served at the forged offsets until then. Once
// the mismatch is found, the Reader serves nothing more (not even blocks it had cached, nor the
// first, which is right), and the catalog tells its listener (the mount retires the file's node)
// once; the next open reads right.
TEST(IndexIdentity, ReaderThatMetAMismatchServesNothingMore) {
  CatalogRig s;
  const Bytes plain = text_bytes(2'000'000, 81);
  const fs::path p = s.dir.write("f.bz2", libbz2_compress(plain, 1));
  const catalog::IndexStatus built = s.obtain(p);
  ASSERT_TRUE(built.ready() && built.origin.saved) << built.error << built.origin.save_error;
  ASSERT_GE(built.index->blocks.size(), 12u);
  constexpr uint64_t kShift = 100'000;
  index::BlockIndex forged = *built.index;
  for (size_t i = 2; i < forged.blocks.size(); ++i) forged.blocks.mutable_at(i).out_offset += kShift;
  forged.decompressed_size += kShift;
  write_file(built.origin.index_path, index::serialize(forged));

  CatalogAt on(s.store.dir());
  Catalog& catalog = on.catalog;
  std::mutex mu;
  std::vector<catalog::FileRef> told;
  catalog.set_distrust_listener([&](const catalog::FileRef& file) {
    std::lock_guard lk(mu);
    told.push_back(file);
  });
  const catalog::FileRef f = catalog.add(p.string());
  std::shared_ptr<engine::Reader> reader = reader_of(catalog, f);
  ASSERT_TRUE(reader);
  ASSERT_EQ(reader->size(), plain.size() + kShift) << "the forged index is not believed: nothing to test";
  const uint64_t at = forged.blocks[5].out_offset + 100;
  Bytes buf(4096);
  ASSERT_EQ(reader->read(at, buf.size(), buf.data()), 4096);
  ASSERT_FALSE(std::equal(buf.begin(), buf.end(), plain.begin() + static_cast<ptrdiff_t>(at)))
      << "the forged index served right bytes: nothing to test";

  EXPECT_EQ(reader->read(forged.blocks[1].out_offset + 100, buf.size(), buf.data()), -EIO);
  EXPECT_TRUE(reader->distrusted());
  EXPECT_EQ(reader->read(at, buf.size(), buf.data()), -EIO) << "a block read (and cached) before";
  EXPECT_EQ(reader->read(0, buf.size(), buf.data()), -EIO) << "the first block, right as it is";
  EXPECT_EQ(reader->read(forged.blocks[10].out_offset, buf.size(), buf.data()), -EIO) << "a block never read";
  {
    std::lock_guard lk(mu);
    ASSERT_EQ(told.size(), 1u);
    EXPECT_EQ(told[0], f);
  }
  reader.reset();
  const ReadBack r = read_through(catalog, f);
  EXPECT_EQ(r.error, 0);
  EXPECT_TRUE(r.data == plain);
  std::lock_guard lk(mu);
  EXPECT_EQ(told.size(), 1u);
}

TEST_F(SameIdentityOtherBytes, BlockInTheSampleIsCaughtBeforeAnyRead) {
  make(/*differ_in_sample=*/true);
  if (HasFailure()) return;
  LogCapture log;
  CatalogAt on(s_.store.dir());
  Catalog& catalog = on.catalog;
  const catalog::FileRef f = catalog.add(pb_.string());
  const ReadBack r = read_through(catalog, f);
  EXPECT_EQ(r.error, 0) << "no read should fail: the sample caught it";
  EXPECT_TRUE(r.data == b_.plain());
  const catalog::IndexStatus st = catalog.status(f);
  EXPECT_TRUE(st.origin.built);
  EXPECT_FALSE(st.origin.validated);
  EXPECT_NE(st.origin.not_loaded_reason.find("not its blocks"), std::string::npos) << st.origin.not_loaded_reason;
  EXPECT_EQ(log.count("stored index not used"), 1u) << log.all();
  EXPECT_EQ(log.count("fail until it is indexed again"), 0u) << log.all();
}

// ---- sidecars ------------------------------------------------------------------------------------

// `mibz2 index --output` writes this: the index as built, by write_index_file.
void write_sidecar(const fs::path& source, const index::BlockIndex& idx) {
  const base::Status written = index::write_index_file(source.string() + index::kSidecarSuffix, idx);
  ASSERT_TRUE(written.ok()) << written;
}

TEST(IndexSidecar, SidecarOfACopyIsUsedWithAnEmptyIndexDirectory) {
  TempDir dir;
  const Bytes plain = text_bytes(1'500'000, 71);
  const Bytes file = libbz2_compress(plain, 1);
  fs::create_directories(dir.path() / "publisher");
  fs::create_directories(dir.path() / "mirror");
  const fs::path published = dir.write("publisher/dump.bz2", file);
  index::IndexStore publisher((dir.path() / "publisher-idx").string());
  const catalog::IndexStatus built = obtain_guarded(published.string(), publisher, 2);
  ASSERT_TRUE(built.ready());
  const fs::path here = dir.write("mirror/dump.bz2", file);  // downloaded: a new file
  write_sidecar(here, *built.index);

  CatalogAt on((dir.path() / "empty-idx").string());
  Catalog& catalog = on.catalog;
  const catalog::FileRef f = catalog.add(here.string());
  const ReadBack r = read_through(catalog, f);
  EXPECT_EQ(r.error, 0);
  EXPECT_TRUE(r.data == plain);
  const catalog::IndexStatus st = catalog.status(f);
  EXPECT_FALSE(st.origin.built) << st.origin.not_loaded_reason;
  EXPECT_TRUE(st.origin.sidecar);
  EXPECT_TRUE(st.origin.validated);
  EXPECT_EQ(st.origin.index_path, here.string() + index::kSidecarSuffix);
  EXPECT_FALSE(fs::exists(on.store.dir())) << "a sidecar is not copied into the index directory";
}

// Hostile sidecars: never a crash, never wrong bytes, never a hang; the file is indexed instead.
TEST(IndexSidecar, HostileSidecarsAreRejectedAndTheFileIndexed) {
  TempDir dir;
  const Bytes plain = text_bytes(400000, 72);
  fs::create_directories(dir.path() / "src");
  const fs::path src = dir.write("src/f.bz2", libbz2_compress(plain, 1));
  const fs::path side = src.string() + index::kSidecarSuffix;
  index::IndexStore elsewhere((dir.path() / "elsewhere").string());
  const catalog::IndexStatus good = obtain_guarded(src.string(), elsewhere, 1);
  ASSERT_TRUE(good.ready());
  const Bytes good_bytes = index::serialize(*good.index);
  // An index of other content of the same size class.
  const Bytes other_plain = text_bytes(400000, 73);
  const catalog::IndexStatus other =
      obtain_guarded(dir.write("o.bz2", libbz2_compress(other_plain, 1)).string(), elsewhere, 1);
  ASSERT_TRUE(other.ready());

  struct Case {
    std::string what;
    std::function<void()> make;
  };
  const std::vector<Case> cases = {
      {"garbage", [&] { write_file(side, to_bytes("not an index at all")); }},
      {"truncated", [&] { write_file(side, as_span(Bytes(good_bytes.begin(), good_bytes.end() - 5))); }},
      {"a checksum flipped",
       [&] {
         Bytes b = good_bytes;
         b[121] ^= 1;
         write_file(side, b);
       }},
      {"an index of other content", [&] { write_file(side, index::serialize(*other.index)); }},
      {"huge and sparse",
       [&] {
         write_file(side, good_bytes);
         ASSERT_EQ(truncate(side.c_str(), off_t{8} << 30), 0);
       }},
      {"a directory", [&] { fs::create_directory(side); }},
      {"a fifo", [&] { ASSERT_EQ(mkfifo(side.c_str(), 0600), 0); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    fs::remove_all(side);
    c.make();
    index::IndexStore empty((dir.path() / ("idx-" + std::to_string(&c - cases.data()))).string());
    const catalog::IndexStatus got = obtain_guarded(src.string(), empty, 1);
    ASSERT_TRUE(got.ready()) << got.error;
    EXPECT_TRUE(got.origin.built);
    EXPECT_FALSE(got.origin.sidecar);
    EXPECT_NE(got.origin.not_loaded_reason.find(index::kSidecarSuffix), std::string::npos)
        << got.origin.not_loaded_reason;
    EXPECT_TRUE(same_index(*got.index, *good.index));
  }
  fs::remove_all(side);
}

// Sidecars the trust rule does not believe (index/index_trust.h) are never read, however valid
// they are: the file is indexed as if there were none, and that is logged once per file and reason,
// not at every load. The same index, believable, is used.
TEST(IndexSidecar, SidecarsNotBelievedAreNeverReadAndTheFileIndexed) {
  TempDir dir;
  const Bytes plain = text_bytes(400000, 74);
  const fs::path srcdir = dir.path() / "src";
  fs::create_directories(srcdir);
  const fs::path src = dir.write("src/f.bz2", libbz2_compress(plain, 1));
  const fs::path side = src.string() + index::kSidecarSuffix;
  index::IndexStore elsewhere((dir.path() / "elsewhere").string());
  const catalog::IndexStatus good = obtain_guarded(src.string(), elsewhere, 1);
  ASSERT_TRUE(good.ready());
  const fs::path good_copy = dir.path() / "good.mibz2idx";
  write_sidecar(dir.path() / "good", *good.index);
  const bool root = geteuid() == 0;

  struct Case {
    std::string what;
    std::function<void()> make;
    std::string reason;  // "" for the sidecar believed
  };
  const std::vector<Case> cases = {
      {"believed: mine, 0644, in my 0755 directory", [&] { write_sidecar(src, *good.index); }, ""},
      {"group-writable",
       [&] {
         write_sidecar(src, *good.index);
         ASSERT_EQ(chmod(side.c_str(), 0664), 0);
       },
       "writable by group or others (mode 0664)"},
      {"in a directory others can write, not sticky",
       [&] {
         write_sidecar(src, *good.index);
         ASSERT_EQ(chmod(srcdir.c_str(), 0777), 0);
       },
       "its directory is writable by group or others"},
      {"believed: in a sticky directory others can write", [&] {
         write_sidecar(src, *good.index);
         ASSERT_EQ(chmod(srcdir.c_str(), 01777), 0);
       },
       ""},
      {"a symlink to a believable index", [&] { fs::create_symlink(good_copy, side); }, "cannot open"},
  };
  std::vector<Case> all = cases;
  if (root)
    all.push_back({"another user's",
                   [&] {
                     write_sidecar(src, *good.index);
                     ASSERT_EQ(chown(side.c_str(), 65534, 65534), 0);
                   },
                   "owned by uid 65534"});
  for (const Case& c : all) {
    SCOPED_TRACE(c.what);
    fs::remove_all(side);
    ASSERT_EQ(chmod(srcdir.c_str(), 0755), 0);
    c.make();
    LogCapture log;
    CatalogAt on((dir.path() / ("trust-idx-" + std::to_string(&c - all.data()))).string());
    Catalog& catalog = on.catalog;
    for (int load = 0; load < 2; ++load) {  // a second entry for the same file loads again
      const catalog::FileRef f = catalog.add(src.string());
      ASSERT_TRUE(catalog.wait(f));
      const catalog::IndexStatus got = catalog.status(f);
      ASSERT_TRUE(got.ready()) << got.error;
      EXPECT_TRUE(same_index(*got.index, *good.index));
      if (c.reason.empty()) {
        EXPECT_TRUE(got.origin.sidecar) << got.origin.not_loaded_reason;
        continue;
      }
      EXPECT_FALSE(got.origin.sidecar);
      EXPECT_NE(got.origin.not_loaded_reason.find(c.reason), std::string::npos) << got.origin.not_loaded_reason;
      fs::remove_all(on.store.dir());  // so that the second entry looks for the sidecar again
    }
    if (c.reason.empty() || c.reason == "cannot open") continue;
    EXPECT_EQ(log.count("is not believed"), 1u) << "logged once per file and reason:\n" << log.all();
    EXPECT_EQ(log.count(c.reason), 1u) << log.all();
  }
  ASSERT_EQ(chmod(srcdir.c_str(), 0755), 0);
  fs::remove_all(side);
}

// ---- the store shared by many writers ---------------------------------------------------------------

// A reader loading while writers replace the file never sees a partial index.
TEST(IndexStoreConcurrent, LoadsDuringSavesSeeWholeFilesOnly) {
  TempDir dir;
  const Bytes file = libbz2_compress(text_bytes(900000, 81), 1);
  const fs::path src = dir.write("s.bz2", file);
  index::IndexStore store((dir.path() / "idx").string());
  const catalog::IndexStatus built = obtain_guarded(src.string(), store, 1);
  ASSERT_TRUE(built.origin.saved);
  const index::SourceIdentity id = built.index->source;
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  std::atomic<int> saves{0};
  for (int w = 0; w < 2; ++w)
    writers.emplace_back([&] {
      index::IndexStore mine(store.dir());  // as another mount would
      while (!stop) {
        if (const base::Status saved = mine.save(*built.index); saved.ok()) ++saves;
        else ADD_FAILURE() << saved;
      }
    });
  int loads = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < end || saves < 20) {
    const index::LoadedIndex got = store.load(id);
    ASSERT_EQ(got.load, Load::kCurrent) << index::to_string(got.load) << ": " << got.why;
    ++loads;
  }
  stop = true;
  for (auto& t : writers) t.join();
  EXPECT_GT(loads, 0);
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(store.dir())) {
    ++files;
    EXPECT_EQ(e.path().extension(), ".idx") << "left behind: " << e.path();
  }
  EXPECT_EQ(files, 1u);
}

// Temporaries of dead writers go; a live writer's, another host's fresh one and other files stay.
TEST(IndexStore, StaleTemporariesAreRemoved) {
  TempDir dir;
  const Bytes file = libbz2_compress(text_bytes(100000, 82), 1);
  const fs::path src = dir.write("s.bz2", file);
  index::IndexStore builder((dir.path() / "idx").string());
  const catalog::IndexStatus built = obtain_guarded(src.string(), builder, 1);
  ASSERT_TRUE(built.origin.saved);
  const std::string final_name = built.origin.index_path;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  // A pid that is not running: a child that has exited and been reaped.
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  const std::string me = std::to_string(getpid());
  const std::string d = std::to_string(dead);
  auto age = [&](const std::string& path, int seconds) {
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= seconds;
    t[1] = t[0];
    ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), t, 0), 0);
  };
  struct Temp {
    std::string name;
    int age_s;
    bool removed;
  };
  const std::vector<Temp> temps = {
      {final_name + ".tmp." + host + "." + d + ".AAAAAA", 120, true},        // this host, dead, old enough
      {final_name + ".tmp." + host + "." + d + ".BBBBBB", 5, false},         // dead, but only just written
      {final_name + ".tmp." + host + "." + me + ".CCCCCC", 120, false},      // a live writer (this process)
      {final_name + ".tmp.elsewhere.example." + me + ".DDDDDD", 600, false}, // another host, fresh
      {final_name + ".tmp.elsewhere.example.1.EEEEEE", 7200, true},          // another host, hours old
      {(fs::path(final_name).parent_path() / "notes.txt").string(), 7200, false},
  };
  for (const Temp& t : temps) {
    write_file(t.name, to_bytes("partial"));
    age(t.name, t.age_s);
  }
  index::IndexStore store(builder.dir());
  const base::Status saved = store.save(*built.index);  // the first save cleans
  ASSERT_TRUE(saved.ok()) << saved;
  for (const Temp& t : temps) EXPECT_EQ(fs::exists(t.name), !t.removed) << t.name;
  const index::LoadedIndex got = store.load(built.index->source);
  EXPECT_EQ(got.load, Load::kCurrent) << got.why;
}

}  // namespace
}  // namespace mibz2::test
