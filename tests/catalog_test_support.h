// Helpers for the tests of the Catalog (on top of index_test_support.h): the engine options of
// every engine and catalog test, the catalog rig, and a file's index obtained through a fresh
// engine and catalog, under a watchdog, as mibz2 obtains it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "catalog/catalog.h"
#include "catalog/source_access.h"
#include "engine/engine.h"
#include "index/index_store.h"
#include "index_test_support.h"
#include "io/paths.h"

namespace mibz2::test {

// The block cache of the tests' engines unless one says otherwise: ample for their files.
inline constexpr uint64_t kTestCacheBytes = uint64_t{64} << 20;

// The tests' EngineOptions: `threads` decoders, a cache of `cache_bytes` (0: the engine's
// default), read-ahead on or off.
engine::EngineOptions options(unsigned threads, uint64_t cache_bytes = kTestCacheBytes, bool readahead = true);

// Waits for `file` to settle, or aborts the test program after kBuildTimeout.
void settle_guarded(catalog::Catalog& catalog, const catalog::FileRef& file);

// Catalog::open's Reader for `file`; null, with a test failure that says why, when there is none.
std::shared_ptr<engine::Reader> reader_of(catalog::Catalog& catalog, const catalog::FileRef& file);

// The plain access (paths as given), for tests to derive from and change one thing of: where a
// file's source is opened (override open, and call PlainAccess::open for the opening itself), or
// how its bytes read (bytes).
struct PlainAccess : catalog::SourceAccess {
  catalog::PlainSourceAccess plain;
  base::Result<io::UniqueFd> open(const catalog::CatalogFile& file, struct stat* st) const override {
    return plain.open(file, st);
  }
  base::Status stat(const catalog::CatalogFile& file, struct stat* st) const override { return plain.stat(file, st); }
  base::Result<io::UniqueFd> open_sidecar(const catalog::CatalogFile& file, struct stat* dir_st) const override {
    return plain.open_sidecar(file, dir_st);
  }
};

// An engine of `threads` decoders and a catalog on `store` (and `access`, if given: both must
// outlive it), as a mount or a mibz2 command has them. Over a rig's store it is the next mount.
struct CatalogOn {
  explicit CatalogOn(index::IndexStore& store, unsigned threads = 2, const catalog::SourceAccess* access = nullptr);
  // The index of `path` (made absolute): loaded if current, else built (`rebuild`: built anyway).
  // If it does not settle within kBuildTimeout the test program aborts rather than hang the suite.
  catalog::IndexStatus obtain(const std::string& path, bool rebuild = false);

  engine::Engine engine;
  catalog::Catalog catalog;
};

// obtain() through a CatalogOn of its own, gone when it returns.
catalog::IndexStatus obtain_guarded(const std::string& path, index::IndexStore& store, unsigned threads,
                                   bool rebuild = false);

// An index store of its own on `dir`, made before the catalog on it and gone after (CatalogAt's
// first base).
struct StoreAt {
  explicit StoreAt(const std::string& dir) : store(dir) {}
  index::IndexStore store;
};

// Another mount over the index directory `dir` (another's, or one of its own): a store on it and a
// catalog on that.
struct CatalogAt : StoreAt, CatalogOn {
  explicit CatalogAt(const std::string& dir, unsigned threads = 2, const catalog::SourceAccess* access = nullptr)
      : StoreAt(dir), CatalogOn(store, threads, access) {}
};

// A temporary directory and an index store in it (dir/idx), made before the catalog and gone
// after it (CatalogRig's first base).
struct TempStore {
  TempDir dir;
  index::IndexStore store{(dir.path() / "idx").string()};
  // The index files in the store.
  size_t stored() const;
};

// The rig of the catalog tests: a temporary directory with its index store, and an engine and a
// catalog on it. A rig whose catalog reads through an access of its own keeps that access in a
// base before this one, so that it outlives the catalog.
struct CatalogRig : TempStore, CatalogOn {
  explicit CatalogRig(unsigned threads = 2, const catalog::SourceAccess* access = nullptr)
      : CatalogOn(store, threads, access) {}
  // Writes `plain` compressed at `level` as `name` in the directory; the catalog's new entry for it.
  catalog::FileRef add(const std::string& name, const Bytes& plain, int level = 1);
  // Writes `file` (bzip2 or not) as `name` in the directory; the catalog's new entry for it.
  catalog::FileRef add_file(const std::string& name, const Bytes& file);
};

}  // namespace mibz2::test
