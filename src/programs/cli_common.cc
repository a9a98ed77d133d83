#include "programs/cli_common.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "programs/progress_line.h"

namespace mibz2::programs {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

Progress::Progress(std::string label) : label_(std::move(label)), enabled_(isatty(STDERR_FILENO)), start_(now_seconds()) {}

Progress::~Progress() { finish(); }

void Progress::update(uint64_t done, uint64_t total, const ProgressFigures* overall) {
  if (!enabled_ || total == 0) return;
  // One column is left free: a line that fills the last column wraps on some terminals, and then
  // \r no longer goes back to its start.
  const size_t width = std::max<size_t>(terminal_width(STDERR_FILENO), 2) - 1;
  // (Appended piece by piece: `"\r" + std::string` trips a false -Wrestrict in g++ 12.)
  std::string out = "\r";
  out.append(progress_line({label_, done, total, now_seconds() - start_}, width)).append("\033[K");
  // A second line: drawn under the bar, then the cursor goes back up to the bar's line.
  if (overall) out.append("\n").append(progress_line(*overall, width)).append("\033[K\033[A\r");
  std::fputs(out.c_str(), stderr);
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::finish() {
  if (drawn_) {
    std::fprintf(stderr, "\r\033[J");  // clears the bar's line and any line under it
    std::fflush(stderr);
    drawn_ = false;
  }
}

}  // namespace mibz2::programs
