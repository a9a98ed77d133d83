#include "catalog_test_support.h"

#include <cstdio>
#include <cstdlib>

namespace mibz2::test {

void settle_guarded(engine::Catalog& catalog, const engine::FileRef& file) {
  if (!catalog.wait_for(file, kBuildTimeout)) {
    std::fprintf(stderr, "FATAL: the index of %s did not settle in %lld s (state %s)\n", file->path().c_str(),
                 static_cast<long long>(kBuildTimeout.count()), engine::to_string(catalog.status(file).state));
    std::fflush(stderr);
    std::abort();  // pool threads still hold the build: end the program rather than hang the suite
  }
}

std::shared_ptr<engine::Reader> reader_of(engine::Catalog& catalog, const engine::FileRef& file) {
  base::Result<std::shared_ptr<engine::Reader>> opened = catalog.open(file);
  if (!opened.ok()) {
    ADD_FAILURE() << file->path() << ": cannot open: " << opened.status();
    return nullptr;
  }
  return std::move(opened).value();
}

engine::IndexStatus obtain_guarded(const std::string& path, index::IndexStore& store, unsigned threads, bool rebuild) {
  engine::EngineOptions options;
  options.threads = threads;
  engine::Engine engine(options);
  engine::Catalog catalog(engine, store);
  const engine::FileRef file = catalog.add(io::absolute_path(path));
  catalog.prepare(file, rebuild ? engine::Catalog::Need::kRebuild : engine::Catalog::Need::kNow);
  settle_guarded(catalog, file);
  return catalog.status(file);
}

}  // namespace mibz2::test
