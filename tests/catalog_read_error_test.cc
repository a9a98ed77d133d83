// A read error while a file is indexed, or while a copy's index is validated, is a failure of the
// machine's, not a fact about the file (docs/ARCHITECTURE.md): the Catalog settles the file failed as
// kEnvironment with the errno in its words, stores nothing, and tries once more at the next
// request that needs the file now: one attempt shared by everyone who asks meanwhile, none from
// the tree walk (kSoon), no loop. Once the source reads, the file is indexed whole (or its index
// validated). The sources' bytes are read through a SourceAccess that fails a range on demand.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "catalog/source_access.h"
#include "catalog_test_support.h"
#include "engine_test_support.h"
#include "index/block_check.h"

namespace mibz2::test {
namespace {

namespace fs = std::filesystem;
using catalog::Catalog;
using catalog::IndexState;
using Need = catalog::Catalog::Need;

// Opens the paths as given; their bytes fail with EIO wherever a read overlaps [from, to) while
// `fault` is set. Counts the opens (each attempt at a file opens it).
struct FaultyAccess final : PlainAccess {
  std::atomic<bool> fault{false};
  std::atomic<uint64_t> from{0}, to{0};
  int error = EIO;  // the errno the reads fail with
  mutable std::atomic<int> opens{0};

  base::Result<io::UniqueFd> open(const catalog::CatalogFile& file, struct stat* st) const override {
    ++opens;
    return PlainAccess::open(file, st);
  }
  std::unique_ptr<io::SourceBytes> bytes(int fd, uint64_t size) const override {
    return std::make_unique<FaultyBytes>(std::make_unique<io::FdBytes>(fd, size), from, to, &fault, error);
  }
};

// The access first, so that it outlives the catalog that reads through it.
struct WithFaultyAccess {
  FaultyAccess access;
};

// A file of about 20 blocks with the fault on one byte in its middle (away from the first and last
// 64 KiB, which the fingerprint reads), and a catalog that reads it through FaultyAccess.
struct Rig : WithFaultyAccess, CatalogRig {
  Bytes plain = text_bytes(scaled(2'000'000, 1'000'000), 81);
  Bytes file = libbz2_compress(plain, 1);
  fs::path path = dir.write("f.bz2", file);

  Rig() : CatalogRig(2, &access) {
    access.from = file.size() / 2;
    access.to = file.size() / 2 + 1;
  }
};

void expect_failed_for_now(const catalog::IndexStatus& st) {
  EXPECT_EQ(st.state, IndexState::kFailed);
  EXPECT_TRUE(base::is_environment(st.error)) << "a read error taken for bad content: " << st.error;
  EXPECT_NE(st.error.message().find("Input/output error (EIO)"), std::string::npos) << st.error;
  EXPECT_FALSE(st.index);
}

TEST(CatalogReadError, ABuildThatMeetsOneFailsForNowStoresNothingAndIsTriedAgain) {
  Rig r;
  r.access.fault = true;
  const catalog::FileRef f = r.catalog.add(r.path.string());
  EXPECT_FALSE(r.catalog.wait(f));
  const catalog::IndexStatus failed = r.catalog.status(f);
  expect_failed_for_now(failed);
  EXPECT_NE(failed.error.message().find("read error at byte"), std::string::npos) << failed.error;
  EXPECT_TRUE(failed.origin.built);
  EXPECT_EQ(r.stored(), 0u) << "an index was stored from a build that met a read error";

  // The tree walk (kSoon) never tries again; a request that needs the file now does, once, and
  // with the fault still there fails alike.
  const int opens = r.access.opens;
  r.catalog.prepare(f, Need::kSoon);
  EXPECT_EQ(r.catalog.status(f).state, IndexState::kFailed);
  EXPECT_EQ(r.access.opens, opens) << "kSoon tried again";
  EXPECT_FALSE(r.catalog.wait(f));
  expect_failed_for_now(r.catalog.status(f));
  EXPECT_GT(r.access.opens, opens) << "a request that needs the file did not try again";
  EXPECT_EQ(r.stored(), 0u);

  // The fault is gone: the next request gets the whole file, and its index is stored.
  r.access.fault = false;
  ASSERT_TRUE(r.catalog.wait(f)) << r.catalog.status(f).error;
  const catalog::IndexStatus got = r.catalog.status(f);
  EXPECT_EQ(got.index->decompressed_size, r.plain.size());
  EXPECT_EQ(got.index->truncated_at_bit, 0u);
  EXPECT_TRUE(got.origin.built && got.origin.saved) << got.origin.save_error;
  EXPECT_EQ(r.stored(), 1u);
  const std::shared_ptr<engine::Reader> reader = reader_of(r.catalog, f);
  ASSERT_TRUE(reader);
  Bytes back(r.plain.size());
  EXPECT_EQ(reader->read(0, back.size(), back.data()), static_cast<ssize_t>(r.plain.size()));
  EXPECT_TRUE(same_bytes(back, r.plain));
}

// A read that fails with EBADMSG (ext4's answer to a block whose checksum does not match) is a
// failing disk, not damaged bzip2: the file fails for now and is tried again, as for EIO. (The
// errno is one base::Status reserves for bad input; base::Status::os_error keeps it the machine's.)
TEST(CatalogReadError, AReadErrorOfAnyErrnoIsTheMachines) {
  Rig r;
  r.access.error = EBADMSG;
  r.access.fault = true;
  const catalog::FileRef f = r.catalog.add(r.path.string());
  EXPECT_FALSE(r.catalog.wait(f));
  const catalog::IndexStatus failed = r.catalog.status(f);
  EXPECT_EQ(failed.state, IndexState::kFailed);
  EXPECT_TRUE(base::is_environment(failed.error)) << "a read error taken for bad content: " << failed.error;
  EXPECT_NE(failed.error.message().find("EBADMSG"), std::string::npos) << failed.error;
  EXPECT_EQ(r.stored(), 0u);
  r.access.fault = false;
  EXPECT_TRUE(r.catalog.wait(f)) << "not tried again: " << r.catalog.status(f).error;
}

// Everyone who needs the file while an attempt is under way waits for that attempt: no second one.
// The attempt is held at its start (the catalog's test hook) while the others ask.
TEST(CatalogReadErrorConcurrent, RequestsDuringAnAttemptShareIt) {
  Rig r;
  std::atomic<bool> held{false};
  r.catalog.hold_builds_while([&held] { return held.load(); });
  r.access.fault = true;
  const catalog::FileRef f = r.catalog.add(r.path.string());
  EXPECT_FALSE(r.catalog.wait(f));

  held = true;
  std::atomic<bool> first_ready{true};
  std::thread first([&] { first_ready = r.catalog.wait(f); });
  // Building, its source open (a builder is there once it is): the attempt has made its opens.
  ASSERT_TRUE(eventually([&] {
    const catalog::IndexStatus st = r.catalog.status(f);
    return st.state == IndexState::kBuilding && st.build_total > 0;
  }));
  const int opens = r.access.opens;  // the attempt's: its load and its build
  for (int i = 0; i < 3; ++i) r.catalog.prepare(f, Need::kNow);
  EXPECT_EQ(r.catalog.status(f).state, IndexState::kBuilding);
  EXPECT_EQ(r.access.opens, opens) << "a request during an attempt made another";
  held = false;
  first.join();
  EXPECT_FALSE(first_ready);
  expect_failed_for_now(r.catalog.status(f));
  EXPECT_EQ(r.access.opens, opens);
}

// A copy's index (same size and fingerprint, another mtime) is validated by a sample of blocks; a
// read error in the sample is no mismatch: the index is neither used nor rejected, nothing is
// rebuilt, and the file fails for now. Once the source reads, the same index is validated.
TEST(CatalogReadError, AValidationThatMeetsOneNeitherUsesNorRejectsTheIndex) {
  Rig r;
  const catalog::FileRef f = r.catalog.add(r.path.string());
  ASSERT_TRUE(r.catalog.wait(f));
  const catalog::IndexStatus built = r.catalog.status(f);
  ASSERT_TRUE(built.origin.saved) << built.origin.save_error;
  const Bytes stored_before = read_file(built.origin.index_path);
  // The fault on a block of the sample; then the file touched (same bytes, new mtime).
  const std::vector<size_t> sample = index::sample_blocks(*built.index);
  ASSERT_GE(sample.size(), 4u);
  const uint64_t at = built.index->blocks[sample[sample.size() / 2]].start_bit() / 8 + 10;
  r.access.from = at;
  r.access.to = at + 1;
  struct timespec later = stat_times(r.path.string()).mtime;
  later.tv_sec += 3600;
  restore_mtime(r.path.string(), later);

  // Another mount: a fresh catalog on the same index directory, the fault on.
  CatalogOn on(r.store, 2, &r.access);
  Catalog& catalog = on.catalog;
  const catalog::FileRef g = catalog.add(r.path.string());
  r.access.fault = true;
  EXPECT_FALSE(catalog.wait(g));
  const catalog::IndexStatus failed = catalog.status(g);
  expect_failed_for_now(failed);
  EXPECT_NE(failed.error.message().find("cannot validate"), std::string::npos) << failed.error;
  EXPECT_FALSE(failed.origin.built) << "rebuilt after a read error in the sample";
  EXPECT_TRUE(read_file(built.origin.index_path) == stored_before) << "the stored index was replaced";

  r.access.fault = false;
  ASSERT_TRUE(catalog.wait(g)) << catalog.status(g).error;
  const catalog::IndexStatus got = catalog.status(g);
  EXPECT_TRUE(got.origin.validated);
  EXPECT_FALSE(got.origin.built);
  EXPECT_EQ(got.index->decompressed_size, r.plain.size());
}

}  // namespace
}  // namespace mibz2::test
