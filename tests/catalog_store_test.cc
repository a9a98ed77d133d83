// Persistence of indexes (IndexStore, and the Catalog that loads and saves through it): a save-load
// round trip gives the same index; a stale or damaged index file of any kind (truncated, any byte
// flipped, wrong version, each field check, source modified in place with its mtime restored,
// source replaced by other content) is never taken as current, never crashes the loader, and the
// catalog rebuilds it; an index of the same content with another mtime or inode is validated, not
// rebuilt; an unwritable index directory makes the store read-only; index file names are the
// content's, so equal basenames never collide.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>

#include "catalog_test_support.h"
#include "index/index_dir.h"
#include "index/index_format.h"
#include "index/xxh3.h"

namespace mibz2::test {
namespace {

namespace fs = std::filesystem;
using index::IndexStore;
using Load = IndexStore::Load;

const char* load_name(Load l) { return index::to_string(l); }

void put8(Bytes& b, size_t off, uint8_t v) { b[off] = v; }
void put32(Bytes& b, size_t off, uint32_t v) { std::memcpy(b.data() + off, &v, 4); }
void put64(Bytes& b, size_t off, uint64_t v) { std::memcpy(b.data() + off, &v, 8); }
uint64_t get64(const Bytes& b, size_t off) {
  uint64_t v;
  std::memcpy(&v, b.data() + off, 8);
  return v;
}

// The index files in `dir`.
size_t count_idx(const fs::path& dir) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path().extension() == ".idx";
  return n;
}

// Recomputes the checksum (FORMAT.md: XXH3-64 of bytes [0, 120) and of the records), so that a
// test reaches the check after it.
void fix_checksum(Bytes& b) {
  index::Xxh3 h;
  h.update(b.data(), 120);
  h.update(b.data() + index::kHeaderSize, b.size() - index::kHeaderSize);
  put64(b, 120, h.digest());
}

// A source file with a few blocks in a temporary directory, its index obtained (built and saved)
// through a store in the same directory.
struct Fixture {
  TempDir dir;
  IndexStore store{(dir.path() / "indexes").string()};
  std::string source;
  Bytes plain;
  Bytes file;
  catalog::IndexStatus first;
  Bytes index_bytes;  // the saved index file

  explicit Fixture(size_t plain_size = 350000, uint64_t seed = 1) {
    plain = mixed_bytes(plain_size, seed);
    file = libbz2_compress(plain, 1);
    source = dir.write("source.bz2", file).string();
    first = obtain_guarded(source, store, 1);
    if (first.ready() && fs::exists(first.origin.index_path)) index_bytes = read_file(first.origin.index_path);
  }

  Load load(std::string* reason, index::BlockIndex* out = nullptr) const {
    const int fd = open(source.c_str(), O_RDONLY);
    const base::Result<index::SourceIdentity> identified = index::identify_source(fd);
    EXPECT_TRUE(identified.ok()) << identified.status();
    const index::SourceIdentity id = identified.ok() ? *identified : index::SourceIdentity{};
    close(fd);
    index::LoadedIndex got = store.load(id);
    *reason = got.why.message();
    if (out) *out = std::move(got.index);
    return got.load;
  }
};

TEST(IndexStore, ObtainBuildsSavesThenLoads) {
  Fixture f;
  ASSERT_TRUE(f.first.ready()) << f.first.error;
  EXPECT_TRUE(f.first.origin.built);
  EXPECT_TRUE(f.first.origin.saved) << f.first.origin.save_error;
  EXPECT_TRUE(f.first.origin.not_loaded_reason.empty());
  EXPECT_EQ(f.first.origin.index_path, f.store.path_for(f.first.index->source));
  ASSERT_TRUE(fs::exists(f.first.origin.index_path));
  ASSERT_EQ(f.index_bytes.size(), index::kHeaderSize + index::kBytesPerBlock * f.first.index->blocks.size());
  EXPECT_GE(f.first.index->blocks.size(), 3u);

  // The identity is the file's.
  const FileTimes t = stat_times(f.source);
  EXPECT_EQ(f.first.index->source.size, f.file.size());
  EXPECT_EQ(f.first.index->source.inode, t.inode);
  EXPECT_EQ(f.first.index->source.mtime_ns, uint64_t(t.mtime.tv_sec) * 1000000000ull + uint64_t(t.mtime.tv_nsec));

  const catalog::IndexStatus again = obtain_guarded(f.source, f.store, 1);
  ASSERT_TRUE(again.ready()) << again.error;
  EXPECT_FALSE(again.origin.built);
  EXPECT_TRUE(again.origin.not_loaded_reason.empty()) << again.origin.not_loaded_reason;
  EXPECT_TRUE(same_index(*again.index, *f.first.index));

  // force_rebuild builds although the stored one is current, and gets the same.
  const catalog::IndexStatus forced = obtain_guarded(f.source, f.store, 1, /*force_rebuild=*/true);
  ASSERT_TRUE(forced.ready());
  EXPECT_TRUE(forced.origin.built);
  EXPECT_TRUE(same_index(*forced.index, *f.first.index));
}

TEST(IndexStore, SaveLoadRoundTripOfEveryCorpusShape) {
  TempDir dir;
  IndexStore store((dir.path() / "idx").string());
  size_t n = 0;
  for (const Variant& v : corpus()) {
    SCOPED_TRACE(v.name);
    std::string name = std::to_string(n++);  // (not "v" + to_string: a GCC 12 -Wrestrict false positive)
    name += ".bz2";
    const std::string path = dir.write(name, v.file).string();
    index::BuildResult r = build_guarded(v.file, 1);
    ASSERT_TRUE(r.ok()) << r.error;
    const int fd = open(path.c_str(), O_RDONLY);
    const base::Result<index::SourceIdentity> id = index::identify_source(fd);
    ASSERT_TRUE(id.ok()) << id.status();
    r.index.source = *id;
    close(fd);
    const base::Status saved = store.save(r.index);
    ASSERT_TRUE(saved.ok()) << saved;
    const index::LoadedIndex back = store.load(r.index.source);
    ASSERT_EQ(back.load, Load::kCurrent) << back.why;
    EXPECT_TRUE(same_index(back.index, r.index));
    // Saving again replaces it atomically (no temporary files left behind).
    const base::Status again = store.save(r.index);
    ASSERT_TRUE(again.ok()) << again;
  }
  for (const auto& e : fs::directory_iterator(dir.path() / "idx"))
    EXPECT_EQ(e.path().extension(), ".idx") << "left behind: " << e.path();
  EXPECT_FALSE(store.read_only());
}

TEST(IndexStore, MissingIndexIsMissing) {
  TempDir dir;
  IndexStore store((dir.path() / "does" / "not" / "exist").string());
  EXPECT_EQ(store.load({}).load, Load::kMissing);
}

// Writes `bytes` as the index file, loads, checks the status, then checks the catalog rebuilds (and
// saves a good index again).
void expect_rejected_then_rebuilt(Fixture& f, const Bytes& bytes, const std::string& what,
                                  Load expected = Load::kInvalid, bool rebuild = true) {
  SCOPED_TRACE(what);
  write_file(f.first.origin.index_path, bytes);
  std::string reason;
  const Load got = f.load(&reason);
  EXPECT_EQ(got, expected) << load_name(got) << ": " << reason;
  EXPECT_NE(got, Load::kCurrent);
  EXPECT_FALSE(reason.empty());
  if (!rebuild) return;
  const catalog::IndexStatus o = obtain_guarded(f.source, f.store, 1);
  ASSERT_TRUE(o.ready()) << o.error;
  EXPECT_TRUE(o.origin.built);
  EXPECT_FALSE(o.origin.not_loaded_reason.empty());
  EXPECT_TRUE(o.origin.saved) << o.origin.save_error;
  EXPECT_TRUE(same_index(*o.index, *f.first.index));
  std::string reason2;
  EXPECT_EQ(f.load(&reason2), Load::kCurrent) << reason2;
}

TEST(IndexStore, TruncatedOrPaddedIndexIsInvalidAndRebuilt) {
  Fixture f;
  ASSERT_TRUE(f.first.origin.saved);
  const size_t n = f.index_bytes.size();
  for (size_t keep : {size_t{0}, size_t{1}, size_t{8}, size_t{64}, size_t{119}, size_t{120}, size_t{127},
                      size_t{128}, size_t{129}, n - 32, n - 31, n - 1}) {
    const Bytes cut(f.index_bytes.begin(), f.index_bytes.begin() + static_cast<std::ptrdiff_t>(keep));
    expect_rejected_then_rebuilt(f, cut, "truncated to " + std::to_string(keep) + " bytes");
  }
  Bytes padded = f.index_bytes;
  padded.push_back(0);
  expect_rejected_then_rebuilt(f, padded, "one byte appended");
  padded = f.index_bytes;
  padded.insert(padded.end(), f.index_bytes.end() - 32, f.index_bytes.end());
  expect_rejected_then_rebuilt(f, padded, "last record repeated");
}

TEST(IndexStore, EveryFlippedBitAndByteIsDetected) {
  Fixture f;
  ASSERT_TRUE(f.first.origin.saved);
  const Bytes good = f.index_bytes;
  ASSERT_LT(good.size(), 1000u) << "meant to be a small index";
  for (size_t i = 0; i < good.size(); ++i) {
    for (int m : {0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xFF}) {
      Bytes bad = good;
      bad[i] ^= static_cast<uint8_t>(m);
      write_file(f.first.origin.index_path, bad);
      std::string reason;
      const Load got = f.load(&reason);
      ASSERT_EQ(got, Load::kInvalid) << "byte " << i << " xor " << m << ": " << load_name(got) << " " << reason;
    }
  }
  // the catalog rebuilds after any of them (a sample: each rebuild writes and fsyncs a file).
  for (size_t i = 0; i < good.size(); i += 13) {
    Bytes bad = good;
    bad[i] ^= 0x10;
    expect_rejected_then_rebuilt(f, bad, "byte " + std::to_string(i) + " flipped");
  }
}

TEST(IndexStore, WrongVersionIsInvalid) {
  Fixture f;
  ASSERT_TRUE(f.first.origin.saved);
  for (uint32_t version : {0u, 1u, 4u, 7u, 0xFFFFFFFFu}) {
    Bytes bad = f.index_bytes;
    put32(bad, 8, version);
    fix_checksum(bad);
    write_file(f.first.origin.index_path, bad);
    std::string reason;
    EXPECT_EQ(f.load(&reason), Load::kInvalid) << version;
    EXPECT_NE(reason.find("version"), std::string::npos) << reason;
    expect_rejected_then_rebuilt(f, bad, "version " + std::to_string(version));
  }
}

// Each validation of FORMAT.md, reached with a correct checksum so that it is the one that decides.
TEST(IndexStore, EachFieldCheckRejectsItsDamage) {
  Fixture f;
  ASSERT_TRUE(f.first.origin.saved);
  const Bytes good = f.index_bytes;
  const size_t n = f.first.index->blocks.size();
  ASSERT_GE(n, 3u);
  const size_t rec1 = index::kHeaderSize + 32;  // second record
  const size_t last = index::kHeaderSize + 32 * (n - 1);
  // Record fields (FORMAT.md): start_bit 0, out_offset 8, bit_length 16, crc 24, level 28, flags 29.
  struct Case {
    std::string what;
    std::function<void(Bytes&)> damage;
    Load expected;
  };
  const std::vector<Case> cases = {
      {"bad magic", [](Bytes& b) { b[0] = 'X'; }, Load::kInvalid},
      {"header size 64", [](Bytes& b) { put32(b, 12, 64); }, Load::kInvalid},
      {"header size 256", [](Bytes& b) { put32(b, 12, 256); }, Load::kInvalid},
      {"block count + 1", [&](Bytes& b) { put64(b, 48, n + 1); }, Load::kInvalid},
      {"block count - 1", [&](Bytes& b) { put64(b, 48, n - 1); }, Load::kInvalid},
      {"block count 2^60", [](Bytes& b) { put64(b, 48, uint64_t{1} << 60); }, Load::kInvalid},
      {"block count 2^64-1", [](Bytes& b) { put64(b, 48, ~uint64_t{0}); }, Load::kInvalid},
      {"first reserved byte", [](Bytes& b) { b[104] = 1; }, Load::kInvalid},
      {"line count + 2", [](Bytes& b) { put64(b, 96, get64(b, 96) + 2); }, Load::kInvalid},
      {"a newline count above its block's size", [&](Bytes& b) { put32(b, index::kHeaderSize + 32 * n, 0xFFFFFFF0u); },
       Load::kInvalid},
      {"last reserved byte", [](Bytes& b) { b[119] = 0x80; }, Load::kInvalid},
      {"unknown flag bit 3", [](Bytes& b) { put32(b, 88, 1u << 3); }, Load::kInvalid},
      {"unknown flag bit 31", [](Bytes& b) { put32(b, 88, 1u << 31); }, Load::kInvalid},
      {"record reserved flag bit 7", [&](Bytes& b) { put8(b, rec1 + 29, b[rec1 + 29] | 0x80); }, Load::kInvalid},
      {"record reserved bytes", [&](Bytes& b) { put8(b, rec1 + 31, 1); }, Load::kInvalid},
      {"record level 0", [&](Bytes& b) { put8(b, rec1 + 28, 0); }, Load::kInvalid},
      {"record level 10", [&](Bytes& b) { put8(b, rec1 + 28, 10); }, Load::kInvalid},
      {"record bit length 0", [&](Bytes& b) { put64(b, last + 16, 0); }, Load::kInvalid},
      {"record bit length 47", [&](Bytes& b) { put64(b, last + 16, 47); }, Load::kInvalid},
      {"record ends past the source", [&](Bytes& b) { put64(b, last + 16, 0xFFFFFFF0u); }, Load::kInvalid},
      {"record bit length 2^64-1", [&](Bytes& b) { put64(b, last + 16, ~uint64_t{0}); }, Load::kInvalid},
      {"record starts past the source", [&](Bytes& b) { put64(b, last, f.file.size() * 8 + 8); }, Load::kInvalid},
      {"record out_offset past the end",
       [&](Bytes& b) { put64(b, last + 8, f.first.index->decompressed_size); }, Load::kInvalid},
      {"out_offsets not ascending", [&](Bytes& b) { put64(b, rec1 + 8, 0); }, Load::kInvalid},
      {"start bits not ascending", [&](Bytes& b) { put64(b, rec1, 32); }, Load::kInvalid},
      {"records overlap", [&](Bytes& b) { put64(b, rec1, get64(b, rec1) - 1); }, Load::kInvalid},
      {"first out_offset not 0", [&](Bytes& b) { put64(b, index::kHeaderSize + 8, 1); }, Load::kInvalid},
      {"a block larger than its level allows",
       [&](Bytes& b) {
         put64(b, 56, get64(b, 56) + (uint64_t{1} << 40));  // the last block grows by 1 TiB
       },
       Load::kInvalid},
      {"damaged count without damaged records", [](Bytes& b) { put32(b, 92, 1); }, Load::kInvalid},
      {"damaged record not counted",
       [&](Bytes& b) { put8(b, rec1 + 29, b[rec1 + 29] | index::BlockRecord::kCrcMismatch); }, Load::kInvalid},
      {"undecodable record without its nominal size",
       [&](Bytes& b) {
         put8(b, rec1 + 29, b[rec1 + 29] | index::BlockRecord::kUndecodable);
         put32(b, 92, 1);
       },
       Load::kInvalid},
      {"no blocks but a size",
       [](Bytes& b) {
         b.resize(index::kHeaderSize);
         put64(b, 48, 0);
       },
       Load::kInvalid},
      {"implausible source size", [](Bytes& b) { put64(b, 16, uint64_t{1} << 62); }, Load::kInvalid},
      // Identity fields: the file parses, but it is not the index of this source.
      {"source size", [&](Bytes& b) { put64(b, 16, f.file.size() + 1); }, Load::kStale},
      {"source fingerprint", [](Bytes& b) { put64(b, 24, get64(b, 24) ^ 1); }, Load::kStale},
  };
  for (const Case& c : cases) {
    Bytes bad = good;
    c.damage(bad);
    fix_checksum(bad);
    expect_rejected_then_rebuilt(f, bad, c.what, c.expected);
  }
}

// mtime and inode are the fast path only (FORMAT.md, "Identity"): an index whose content identity
// is the source's while they differ is of the same content, used after its sample is checked.
TEST(IndexStore, OtherMtimeOrInodeIsTheSameContentValidatedNotRebuilt) {
  Fixture f;
  ASSERT_TRUE(f.first.origin.saved);
  for (const auto& [what, offset] : {std::pair{"source mtime", size_t{32}}, std::pair{"source inode", size_t{40}}}) {
    SCOPED_TRACE(what);
    Bytes other = f.index_bytes;
    put64(other, offset, get64(other, offset) + 1);
    fix_checksum(other);
    write_file(f.first.origin.index_path, other);
    std::string reason;
    EXPECT_EQ(f.load(&reason), Load::kSameContent) << reason;
    const catalog::IndexStatus o = obtain_guarded(f.source, f.store, 1);
    ASSERT_TRUE(o.ready()) << o.error;
    EXPECT_FALSE(o.origin.built) << o.origin.not_loaded_reason;
    EXPECT_TRUE(o.origin.validated);
    EXPECT_TRUE(same_index(*o.index, *f.first.index));
    EXPECT_TRUE(read_file(f.first.origin.index_path) == other) << "the stored index is left as it was";
  }
}

TEST(IndexStore, SourceModifiedInPlaceWithMtimeRestoredIsIndexedAgain) {
  // A change anywhere the fingerprint looks (the first and last 64 KiB), size and mtime unchanged.
  Fixture f(600000);
  ASSERT_TRUE(f.first.origin.saved);
  ASSERT_GT(f.file.size(), 2u * 64 * 1024) << "the source should be larger than the fingerprinted parts";
  for (size_t at : {size_t{1000}, size_t{64 * 1024 - 1}, f.file.size() - 64 * 1024 + 10, f.file.size() - 20}) {
    SCOPED_TRACE("byte " + std::to_string(at) + " changed");
    const FileTimes before = stat_times(f.source);
    Bytes changed = f.file;
    changed[at] ^= 0x04;
    {
      // Rewrite in place (same inode).
      FILE* out = std::fopen(f.source.c_str(), "r+b");
      ASSERT_TRUE(out);
      std::fseek(out, static_cast<long>(at), SEEK_SET);
      std::fputc(changed[at], out);
      std::fclose(out);
    }
    restore_mtime(f.source, before.mtime);
    const FileTimes after = stat_times(f.source);
    ASSERT_EQ(after.inode, before.inode);
    ASSERT_EQ(after.mtime.tv_sec, before.mtime.tv_sec);
    ASSERT_EQ(after.mtime.tv_nsec, before.mtime.tv_nsec);

    // Other content: another name, under which nothing is stored yet.
    std::string reason;
    EXPECT_EQ(f.load(&reason), Load::kMissing) << reason;
    const catalog::IndexStatus o = obtain_guarded(f.source, f.store, 1);
    ASSERT_TRUE(o.ready()) << o.error;
    EXPECT_TRUE(o.origin.built);
    EXPECT_NE(o.origin.index_path, f.first.origin.index_path);
    EXPECT_NE(o.index->source.fingerprint, f.first.index->source.fingerprint);
    // The rebuilt index describes the changed file (the flip damaged something in it).
    EXPECT_TRUE(o.index->flags != 0 || !o.origin.notes.empty()) << "a flipped bit went unnoticed";
    // Put the original back for the next round: its index is still there, under its own name.
    write_file(f.source, f.file);
    restore_mtime(f.source, before.mtime);
    const catalog::IndexStatus back = obtain_guarded(f.source, f.store, 1);
    EXPECT_FALSE(back.origin.built);
    EXPECT_TRUE(same_index(*back.index, *f.first.index));
  }
}

TEST(IndexStore, SourceTouchedIsValidatedResizedIsIndexedAgain) {
  Fixture f;
  ASSERT_TRUE(f.first.origin.saved);
  // Touched: same bytes, new mtime: the same content.
  const FileTimes before = stat_times(f.source);
  struct timespec later = before.mtime;
  later.tv_sec += 10;
  restore_mtime(f.source, later);
  std::string reason;
  EXPECT_EQ(f.load(&reason), Load::kSameContent) << reason;
  catalog::IndexStatus o = obtain_guarded(f.source, f.store, 1);
  ASSERT_TRUE(o.ready());
  EXPECT_FALSE(o.origin.built);
  EXPECT_TRUE(o.origin.validated);

  // Grown: a second stream appended, mtime restored: other content.
  const Bytes more = libbz2_compress(text_bytes(5000, 99), 5);
  Bytes grown = f.file;
  grown.insert(grown.end(), more.begin(), more.end());
  write_file(f.source, grown);
  restore_mtime(f.source, later);
  EXPECT_EQ(f.load(&reason), Load::kMissing) << reason;
  o = obtain_guarded(f.source, f.store, 1);
  ASSERT_TRUE(o.ready());
  EXPECT_TRUE(o.origin.built);
  EXPECT_EQ(o.index->stream_count, 2u);
  EXPECT_EQ(o.index->decompressed_size, f.plain.size() + 5000);
}

TEST(IndexStore, SourceReplacedByANewFileOfTheSameBytesIsValidated) {
  Fixture f;
  ASSERT_TRUE(f.first.origin.saved);
  const FileTimes before = stat_times(f.source);
  // The same bytes and the same mtime, but a new file renamed over the old one.
  const std::string tmp = f.source + ".new";
  write_file(tmp, f.file);
  restore_mtime(tmp, before.mtime);
  ASSERT_EQ(std::rename(tmp.c_str(), f.source.c_str()), 0);
  const FileTimes after = stat_times(f.source);
  ASSERT_NE(after.inode, before.inode);
  std::string reason;
  EXPECT_EQ(f.load(&reason), Load::kSameContent) << reason;
  const catalog::IndexStatus o = obtain_guarded(f.source, f.store, 1);
  ASSERT_TRUE(o.ready()) << o.error;
  EXPECT_FALSE(o.origin.built);
  EXPECT_TRUE(o.origin.validated);
  EXPECT_EQ(o.index->source.inode, after.inode);
  index::BlockIndex expected = *f.first.index;
  expected.source.inode = after.inode;
  EXPECT_TRUE(same_index(*o.index, expected));
}

void expect_unwritable(const std::string& dir) {
  SCOPED_TRACE(dir);
  Fixture f(120000);
  IndexStore store(dir);
  EXPECT_FALSE(store.read_only());
  const base::Status error = store.save(*f.first.index);
  EXPECT_FALSE(error.ok());
  EXPECT_FALSE(error.message().empty());
  EXPECT_TRUE(store.read_only());
  // Stays read-only; later saves fail at once.
  const base::Status error2 = store.save(*f.first.index);
  EXPECT_FALSE(error2.ok());
  EXPECT_FALSE(error2.message().empty());
  // the catalog still gives an index, kept in memory only.
  const catalog::IndexStatus o = obtain_guarded(f.source, store, 1);
  ASSERT_TRUE(o.ready()) << o.error;
  EXPECT_TRUE(o.origin.built);
  EXPECT_FALSE(o.origin.saved);
  EXPECT_FALSE(o.origin.save_error.empty());
  EXPECT_TRUE(same_index(*o.index, *f.first.index));
  // A fresh store on that directory: the first build fails to save and makes it read-only.
  IndexStore fresh(dir);
  const catalog::IndexStatus p = obtain_guarded(f.source, fresh, 1);
  ASSERT_TRUE(p.ready());
  EXPECT_FALSE(p.origin.saved);
  EXPECT_TRUE(fresh.read_only());
}

TEST(IndexStore, UnwritableDirectoryMakesTheStoreReadOnly) {
  // Tests run as root, so permissions do not stop writes: use paths below a regular file.
  expect_unwritable("/proc/version/x");
  TempDir dir;
  const std::string file = dir.write("plain-file", to_bytes("not a directory")).string();
  expect_unwritable(file);
  expect_unwritable(file + "/sub/dir");
}

// An index file in the store that someone else could have written (index/index_trust.h) is never
// read, whatever it holds: kUntrusted, and the catalog indexes the file as if there were none and
// saves the index it builds in its place.
TEST(IndexStore, IndexFileOthersCouldHaveWrittenIsNotBelieved) {
  Fixture f(120000);
  ASSERT_TRUE(f.first.ready());
  const std::string path = f.first.origin.index_path;
  std::string reason;
  ASSERT_EQ(f.load(&reason), Load::kCurrent) << reason;
  ASSERT_EQ(chmod(path.c_str(), 0664), 0);
  EXPECT_EQ(f.load(&reason), Load::kUntrusted);
  EXPECT_NE(reason.find("writable by group or others (mode 0664)"), std::string::npos) << reason;
  if (geteuid() == 0) {
    ASSERT_EQ(chmod(path.c_str(), 0644), 0);
    ASSERT_EQ(chown(path.c_str(), 65534, 65534), 0);
    EXPECT_EQ(f.load(&reason), Load::kUntrusted);
    EXPECT_NE(reason.find("owned by uid 65534"), std::string::npos) << reason;
  }
  const catalog::IndexStatus again = obtain_guarded(f.source, f.store, 1);
  ASSERT_TRUE(again.ready()) << again.error;
  EXPECT_TRUE(again.origin.built) << "an index not believed was used";
  EXPECT_NE(again.origin.not_loaded_reason.find("is not believed"), std::string::npos) << again.origin.not_loaded_reason;
  EXPECT_TRUE(again.origin.saved) << again.origin.save_error;
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, geteuid()) << "the index built is saved in place of the one not believed";
  EXPECT_EQ(f.load(&reason), Load::kCurrent) << reason;
}

// The directory part of the rule is checked once, when the store is made: a directory others can
// write (not sticky), a regular file or a symlink is not used at all, with one reason.
TEST(IndexStore, DirectoryNotFitForIndexesIsRefusedOnce) {
  TempDir tmp;
  const fs::path d = tmp.path() / "shared";
  fs::create_directories(d);
  ASSERT_EQ(chmod(d.c_str(), 0777), 0);
  {
    IndexStore store(d.string());
    EXPECT_EQ(store.dir(), "");
    EXPECT_NE(store.problem().find("refused as index directory"), std::string::npos) << store.problem();
    EXPECT_NE(store.problem().find("mode 0777"), std::string::npos) << store.problem();
  }
  ASSERT_EQ(chmod(d.c_str(), 01777), 0);
  EXPECT_EQ(IndexStore(d.string()).dir(), d.string()) << "a sticky directory is fit";
  ASSERT_EQ(chmod(d.c_str(), 0755), 0);
  EXPECT_EQ(IndexStore(d.string()).dir(), d.string());

  const fs::path file = tmp.write("a-file", to_bytes("not a directory"));
  IndexStore in_file(file.string());
  EXPECT_EQ(in_file.dir(), "");
  EXPECT_NE(in_file.problem().find("is not a directory"), std::string::npos) << in_file.problem();

  const fs::path link = tmp.path() / "link";
  fs::create_directory_symlink(d, link);
  IndexStore via_link(link.string());
  EXPECT_EQ(via_link.dir(), "");
  EXPECT_NE(via_link.problem().find("is a symlink"), std::string::npos) << via_link.problem();
}

// The directory is held from the moment it is opened: its path replaced by a symlink to another
// directory changes nothing, indexes are saved into and loaded from the directory first opened.
TEST(IndexStore, DirectoryIsHeldNotItsPath) {
  Fixture f(120000);
  ASSERT_TRUE(f.first.origin.saved);
  const fs::path held = f.store.dir(), moved = f.dir.path() / "moved", other = f.dir.path() / "other";
  fs::rename(held, moved);
  fs::create_directories(other);
  fs::create_directory_symlink(other, held);
  std::string reason;
  EXPECT_EQ(f.load(&reason), Load::kCurrent) << "not loaded from the directory opened: " << reason;

  const Bytes plain2 = mixed_bytes(90000, 7);
  const std::string source2 = f.dir.write("second.bz2", libbz2_compress(plain2, 1)).string();
  const catalog::IndexStatus second = obtain_guarded(source2, f.store, 1);
  ASSERT_TRUE(second.ready());
  EXPECT_TRUE(second.origin.saved) << second.origin.save_error;
  EXPECT_EQ(count_idx(moved), 2u) << "saved elsewhere than in the directory opened";
  EXPECT_EQ(count_idx(other), 0u) << "saved through the symlink";
}

TEST(IndexStore, SameBasenameInDifferentDirectoriesGetsDifferentIndexes) {
  TempDir dir;
  IndexStore store((dir.path() / "idx").string());
  fs::create_directories(dir.path() / "a");
  fs::create_directories(dir.path() / "b");
  const Bytes pa = text_bytes(150000, 1), pb = text_bytes(90000, 2);
  const std::string a = dir.write("a/dump.bz2", libbz2_compress(pa, 1)).string();
  const std::string b = dir.write("b/dump.bz2", libbz2_compress(pb, 9)).string();
  const std::string ia = store.path_for(identity_of(a));
  const std::string ib = store.path_for(identity_of(b));
  EXPECT_NE(ia, ib);
  for (const auto& [p, source] : {std::pair{ia, a}, std::pair{ib, b}}) {
    const std::string name = fs::path(p).filename().string();
    EXPECT_EQ(fs::path(p).parent_path(), fs::path(store.dir()));
    // <16 hex>-<size>.idx (FORMAT.md): the content, not the name.
    const std::string size = std::to_string(fs::file_size(source));
    ASSERT_EQ(name.size(), 16 + 1 + size.size() + 4) << name;
    for (size_t i = 0; i < 16; ++i) EXPECT_TRUE(std::isxdigit(static_cast<unsigned char>(name[i]))) << name;
    EXPECT_EQ(name.substr(16), "-" + size + ".idx") << name;
  }
  const catalog::IndexStatus oa = obtain_guarded(a, store, 1), ob = obtain_guarded(b, store, 1);
  ASSERT_TRUE(oa.origin.saved && ob.origin.saved);
  EXPECT_EQ(oa.origin.index_path, ia);
  EXPECT_EQ(ob.origin.index_path, ib);
  // Each loads its own.
  const catalog::IndexStatus la = obtain_guarded(a, store, 1), lb = obtain_guarded(b, store, 1);
  EXPECT_FALSE(la.origin.built);
  EXPECT_FALSE(lb.origin.built);
  EXPECT_EQ(la.index->decompressed_size, pa.size());
  EXPECT_EQ(lb.index->decompressed_size, pb.size());
}

TEST(IndexStore, RelativeAndSymlinkedPathsShareOneIndex) {
  TempDir dir;
  IndexStore store((dir.path() / "idx").string());
  const std::string real = dir.write("real.bz2", libbz2_compress(text_bytes(20000, 3), 9)).string();
  const std::string link = (dir.path() / "link.bz2").string();
  fs::create_symlink(real, link);
  const catalog::IndexStatus via_link = obtain_guarded(link, store, 1);
  ASSERT_TRUE(via_link.ready());
  EXPECT_TRUE(via_link.origin.built);
  EXPECT_EQ(via_link.origin.index_path, store.path_for(identity_of(real)));
  const catalog::IndexStatus via_real = obtain_guarded(real, store, 1);
  EXPECT_FALSE(via_real.origin.built);
  // Relative to the working directory.
  const fs::path cwd = fs::current_path();
  fs::current_path(dir.path());
  const catalog::IndexStatus relative = obtain_guarded("real.bz2", store, 1);
  fs::current_path(cwd);
  EXPECT_FALSE(relative.origin.built);
  EXPECT_EQ(relative.origin.index_path, via_link.origin.index_path);
}

TEST(IndexStore, DirectoryNaming) {
  EXPECT_EQ(IndexStore("/tmp/some/dir///").dir(), "/tmp/some/dir");
  EXPECT_EQ(IndexStore("/tmp/x/").path_for(index::SourceIdentity{}).rfind("/tmp/x/", 0), 0u);
  // default_index_dir follows XDG_CACHE_HOME, then HOME (restored afterwards).
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const std::string saved = xdg ? xdg : "";
  setenv("XDG_CACHE_HOME", "/var/tmp/xdg-test", 1);
  EXPECT_EQ(index::default_index_dir(), "/var/tmp/xdg-test/mibz2fs");
  EXPECT_EQ(IndexStore().dir(), "/var/tmp/xdg-test/mibz2fs");
  setenv("XDG_CACHE_HOME", "relative/ignored", 1);
  if (const char* home = std::getenv("HOME"); home && *home && geteuid() != 0) {
    EXPECT_EQ(index::default_index_dir(), std::string(home) + "/.cache/mibz2fs");
  }
  if (xdg) setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  else unsetenv("XDG_CACHE_HOME");
}

// The rule of index/index_dir.h, case by case.
TEST(IndexDir, DefaultFollowsXdgThenRootThenHome) {
  using index::choose_default_index_dir;
  auto dir = [](const char* xdg, const char* home, bool root) { return choose_default_index_dir({xdg, home, root}); };
  // XDG_CACHE_HOME, when absolute, for anyone.
  EXPECT_EQ(dir("/x/cache", "/home/u", false).dir, "/x/cache/mibz2fs");
  EXPECT_EQ(dir("/x/cache", "/root", true).dir, "/x/cache/mibz2fs");
  EXPECT_FALSE(dir("/x/cache", "/root", true).system);
  // Root: /var/cache/mibz2fs whatever HOME says (fstab at boot has none, sudo may keep the user's).
  for (const char* home : {static_cast<const char*>(nullptr), "", "/root", "/home/u"}) {
    EXPECT_EQ(dir(nullptr, home, true).dir, "/var/cache/mibz2fs") << (home ? home : "(unset)");
    EXPECT_TRUE(dir(nullptr, home, true).system);
    EXPECT_EQ(dir("relative", home, true).dir, "/var/cache/mibz2fs");
    EXPECT_EQ(dir("", home, true).dir, "/var/cache/mibz2fs");
  }
  // Others: HOME, else none.
  EXPECT_EQ(dir(nullptr, "/home/u", false).dir, "/home/u/.cache/mibz2fs");
  EXPECT_EQ(dir("relative", "/home/u", false).dir, "/home/u/.cache/mibz2fs");
  EXPECT_FALSE(dir(nullptr, "/home/u", false).system);
  EXPECT_EQ(dir(nullptr, nullptr, false).dir, "");
  EXPECT_EQ(dir(nullptr, "", false).dir, "");
}

// Root's directory is made private, and refused when it is not.
TEST(IndexDir, PrivateDirectoryIsCreatedOrRefused) {
  TempDir tmp;
  const uid_t me = geteuid();
  const std::string made = (tmp.path() / "made").string();
  EXPECT_EQ(index::ensure_private_dir(made, me), "");
  struct stat st;
  ASSERT_EQ(lstat(made.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(index::ensure_private_dir(made, me), "") << "an existing private directory is fine";
  ASSERT_EQ(chmod(made.c_str(), 0755), 0);
  EXPECT_EQ(index::ensure_private_dir(made, me), "") << "readable by others, writable by no one else";

  ASSERT_EQ(chmod(made.c_str(), 0777), 0);
  EXPECT_NE(index::ensure_private_dir(made, me).find("writable by others (mode 0777)"), std::string::npos);
  ASSERT_EQ(chmod(made.c_str(), 0770), 0);
  EXPECT_NE(index::ensure_private_dir(made, me).find("writable by others"), std::string::npos);
  ASSERT_EQ(chmod(made.c_str(), 0700), 0);
  EXPECT_NE(index::ensure_private_dir(made, me + 1).find("is owned by uid"), std::string::npos);

  const std::string link = (tmp.path() / "link").string();
  ASSERT_EQ(symlink(made.c_str(), link.c_str()), 0);
  EXPECT_NE(index::ensure_private_dir(link, me).find("is a symlink"), std::string::npos);
  const std::string file = (tmp.path() / "file").string();
  write_file(file, as_span(to_bytes("x")));
  EXPECT_NE(index::ensure_private_dir(file, me).find("is not a directory"), std::string::npos);
  EXPECT_NE(index::ensure_private_dir((tmp.path() / "no" / "parent").string(), me).find("cannot create"),
            std::string::npos);
}

}  // namespace
}  // namespace mibz2::test
