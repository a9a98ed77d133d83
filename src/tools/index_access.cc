#include "tools/index_access.h"

#include <chrono>
#include <cstdio>

#include "io/paths.h"
#include "tools/cli_common.h"

namespace mibz2::tools {

namespace {

engine::EngineOptions engine_options(unsigned threads, uint64_t cache_bytes) {
  engine::EngineOptions o;
  o.threads = threads;
  o.cache_bytes = cache_bytes;
  return o;
}

}  // namespace

IndexAccess::IndexAccess(std::string program, unsigned threads, const std::string& index_dir, uint64_t cache_bytes,
                         const engine::SourceAccess* access, bool warn_unsaved)
    : program_(std::move(program)),
      warn_unsaved_(warn_unsaved),
      store_(index_dir),
      engine_(std::make_unique<engine::Engine>(engine_options(threads, cache_bytes))),
      catalog_(std::make_unique<engine::Catalog>(*engine_, store_, access)) {}

IndexAccess::~IndexAccess() {
  catalog_.reset();  // its builds leave the pool before the engine goes
  engine_.reset();
}

engine::FileRef IndexAccess::file(const std::string& path) { return catalog_->add(io::absolute_path(path)); }

engine::IndexStatus IndexAccess::obtain(const engine::FileRef& file, const std::string& shown, bool rebuild,
                                        bool quiet_notes) {
  {
    Progress progress("indexing " + shown);
    catalog_->prepare(file, rebuild ? engine::Catalog::Need::kRebuild : engine::Catalog::Need::kNow);
    while (!catalog_->wait_for(file, std::chrono::milliseconds(200))) {
      const engine::IndexStatus s = catalog_->status(file);
      if (overall_) {
        const ProgressFigures total = overall_(s.build_done);
        progress.update(s.build_done, s.build_total, &total);
      } else {
        progress.update(s.build_done, s.build_total);
      }
    }
  }
  engine::IndexStatus s = catalog_->status(file);
  const char* p = program_.c_str();
  if (!s.origin.not_loaded_reason.empty() && s.origin.built)
    std::fprintf(stderr, "%s: %s: stored index not used, rebuilt: %s\n", p, shown.c_str(),
                 s.origin.not_loaded_reason.c_str());
  if (!quiet_notes)
    for (const std::string& n : s.origin.notes) std::fprintf(stderr, "%s: %s: %s\n", p, shown.c_str(), n.c_str());
  if (!s.ready()) {
    std::fprintf(stderr, "%s: %s: %s\n", p, shown.c_str(), s.error.c_str());
  } else if (warn_unsaved_ && s.origin.built && !s.origin.saved && !warned_unsaved_) {
    warned_unsaved_ = true;
    std::fprintf(stderr, "%s: index not saved (%s); keeping it in memory only: the next command indexes it again\n",
                 p, s.origin.save_error.c_str());
  }
  return s;
}

}  // namespace mibz2::tools
