#include "programs/index_access.h"

#include <chrono>
#include <cstdio>

#include "base/words.h"
#include "io/paths.h"
#include "programs/cli_common.h"

namespace mibz2::programs {

IndexAccess::IndexAccess(std::string program, const catalog::FrontDoorOptions& options, bool warn_unsaved)
    : program_(std::move(program)), warn_unsaved_(warn_unsaved), door_(options) {}

catalog::IndexStatus IndexAccess::obtain(const catalog::FileRef& file, const std::string& shown, bool force,
                                         bool quiet_notes) {
  catalog::IndexStatus s;
  {
    Progress progress("indexing " + base::one_line(shown));
    s = door_.obtain(file, force, [&](uint64_t done, uint64_t total) {
      if (overall_) {
        const ProgressFigures figures = overall_(done);
        progress.update(done, total, &figures);
      } else {
        progress.update(done, total);
      }
      return true;
    });
  }
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
