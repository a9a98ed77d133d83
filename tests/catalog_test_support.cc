#include "catalog_test_support.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace mibz2::test {

engine::EngineOptions options(unsigned threads, uint64_t cache_bytes, bool readahead) {
  engine::EngineOptions o;
  o.threads = threads;
  o.cache_size = cache_bytes;
  o.readahead = readahead;
  return o;
}

void settle_guarded(catalog::Catalog& catalog, const catalog::FileRef& file) {
  if (!catalog.wait_for(file, kBuildTimeout)) {
    std::fprintf(stderr, "FATAL: the index of %s did not settle in %lld s (state %s)\n", file->path().c_str(),
                 static_cast<long long>(kBuildTimeout.count()), catalog::to_string(catalog.status(file).state));
    std::fflush(stderr);
    std::abort();  // pool threads still hold the build: end the program rather than hang the suite
  }
}

std::shared_ptr<engine::Reader> reader_of(catalog::Catalog& catalog, const catalog::FileRef& file) {
  base::Result<std::shared_ptr<engine::Reader>> opened = catalog.open(file);
  if (!opened.ok()) {
    ADD_FAILURE() << file->path() << ": cannot open: " << opened.status();
    return nullptr;
  }
  return std::move(opened).value();
}

CatalogOn::CatalogOn(index::IndexStore& store, unsigned threads, const catalog::SourceAccess* access)
    : engine(options(threads)), catalog(engine, store, access) {}

catalog::IndexStatus CatalogOn::obtain(const std::string& path, bool rebuild) {
  const catalog::FileRef file = catalog.add(io::absolute_path(path));
  catalog.prepare(file, rebuild ? catalog::Catalog::Need::kRebuild : catalog::Catalog::Need::kNow);
  settle_guarded(catalog, file);
  return catalog.status(file);
}

catalog::IndexStatus obtain_guarded(const std::string& path, index::IndexStore& store, unsigned threads, bool rebuild) {
  return CatalogOn(store, threads).obtain(path, rebuild);
}

size_t TempStore::stored() const {
  size_t n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(store.dir(), ec)) n += e.path().extension() == ".idx";
  return n;
}

catalog::FileRef CatalogRig::add(const std::string& name, const Bytes& plain, int level) {
  return add_file(name, libbz2_compress(plain, level));
}

catalog::FileRef CatalogRig::add_file(const std::string& name, const Bytes& file) {
  return catalog.add(dir.write(name, file).string());
}

}  // namespace mibz2::test
