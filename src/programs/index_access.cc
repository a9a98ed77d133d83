#include "programs/index_access.h"

#include <chrono>
#include <cstdio>

#include "base/words.h"
#include "io/paths.h"
#include "programs/cli_common.h"

namespace mibz2::programs {

namespace {

engine::EngineOptions engine_options(unsigned threads, uint64_t cache_bytes) {
  engine::EngineOptions o;
  o.threads = threads;
  o.cache_bytes = cache_bytes;
  return o;
}

}  // namespace

IndexAccess::IndexAccess(std::string program, unsigned threads, const std::string& index_dir, uint64_t cache_bytes,
                         const catalog::SourceAccess* access, bool warn_unsaved)
    : program_(std::move(program)),
      warn_unsaved_(warn_unsaved),
      store_(index_dir),
      engine_(std::make_unique<engine::Engine>(engine_options(threads, cache_bytes))),
      catalog_(std::make_unique<catalog::Catalog>(*engine_, store_, access)) {}

IndexAccess::~IndexAccess() {
  catalog_.reset();  // its builds leave the pool before the engine goes
  engine_.reset();
}

catalog::FileRef IndexAccess::file(const std::string& path) { return catalog_->add(io::absolute_path(path)); }

catalog::IndexStatus IndexAccess::obtain(const catalog::FileRef& file, const std::string& shown, bool rebuild,
                                        bool quiet_notes) {
  {
    Progress progress("indexing " + base::one_line(shown));
    catalog_->prepare(file, rebuild ? catalog::Catalog::Need::kRebuild : catalog::Catalog::Need::kNow);
    while (!catalog_->wait_for(file, std::chrono::milliseconds(200))) {
      const catalog::IndexStatus s = catalog_->status(file);
      if (overall_) {
        const ProgressFigures total = overall_(s.build_done);
        progress.update(s.build_done, s.build_total, &total);
      } else {
        progress.update(s.build_done, s.build_total);
      }
    }
  }
  catalog::IndexStatus s = catalog_->status(file);
  // One line each, whatever the names in it hold (mibz2fs -o wait_index names SOURCE's files).
  auto say = [&](const std::string& what) { std::fprintf(stderr, "%s: %s\n", program_.c_str(), base::one_line(what).c_str()); };
  if (!s.origin.not_loaded_reason.empty() && s.origin.built)
    say(shown + ": stored index not used, rebuilt: " + s.origin.not_loaded_reason);
  if (!quiet_notes)
    for (const std::string& n : s.origin.notes) say(shown + ": " + n);
  if (!s.ready()) {
    say(shown + ": " + s.error.message());
  } else if (warn_unsaved_ && s.origin.built && !s.origin.saved && !warned_unsaved_) {
    warned_unsaved_ = true;
    say("index not saved (" + s.origin.save_error + "); keeping it in memory only: the next command indexes it again");
  }
  return s;
}

}  // namespace mibz2::programs
