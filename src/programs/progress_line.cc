#include "programs/progress_line.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "base/words.h"
#include "programs/cli_common.h"

namespace mibz2::programs {
namespace {

std::string eta_of(const ProgressFigures& f) {
  const double rate = f.seconds > 0 ? static_cast<double>(f.done) / f.seconds : 0;
  if (f.done >= f.total) return "0:00";
  if (rate <= 0) return "--:--";
  const long s = std::lround(static_cast<double>(f.total - f.done) / rate);
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

// The label cut to `room` columns, keeping its end (the file name).
std::string fit_label(const std::string& label, size_t room) {
  if (label.size() <= room) return label;
  if (room <= 3) return label.substr(label.size() - room);
  return std::string("...").append(label, label.size() - (room - 3));
}

}  // namespace

std::string progress_line(const ProgressFigures& f, size_t width) {
  const double frac = f.total ? std::min(1.0, static_cast<double>(f.done) / static_cast<double>(f.total)) : 0;
  const double rate = f.seconds > 0 ? static_cast<double>(f.done) / f.seconds : 0;
  char pct[8];
  std::snprintf(pct, sizeof pct, " %3.0f%%", frac * 100);
  char mbs[32];
  std::snprintf(mbs, sizeof mbs, "  %.0f MB/s", rate / 1e6);
  // Appended piece by piece: `" " + std::string` trips a false -Wrestrict in g++ 12.
  std::string sizes = " ";
  sizes.append(base::human_bytes(f.done)).append(" / ").append(base::human_bytes(f.total));
  const std::string eta = "  ETA " + eta_of(f);
  // The parts after the bar, most wanted first; dropped from the end of this list while they do
  // not fit: the rate, then the sizes.
  constexpr size_t kMinBar = 10;  // "[" + 8 + "]"
  constexpr size_t kMinLabel = 12;
  std::string tail;
  const std::string options[] = {std::string(pct) + sizes + mbs + eta, std::string(pct) + sizes + eta,
                                 std::string(pct) + eta, std::string(pct)};
  for (const std::string& t : options) {
    tail = t;
    if (kMinLabel + 1 + kMinBar + tail.size() <= width) break;
  }
  std::string line;
  if (kMinLabel + 1 + kMinBar + tail.size() <= width) {
    // Label, then the bar in what is left (at most 40 columns: a longer bar says nothing more).
    const size_t label_room = std::min(f.label.size(), width - 1 - kMinBar - tail.size());
    const std::string label = fit_label(f.label, std::max(label_room, kMinLabel));
    const size_t bar_inner = std::min<size_t>(40, width - label.size() - 1 - tail.size() - 2);
    std::string bar(bar_inner, ' ');
    const size_t filled = static_cast<size_t>(frac * static_cast<double>(bar_inner));
    for (size_t i = 0; i < bar_inner; ++i) bar[i] = i < filled ? '=' : (i == filled ? '>' : ' ');
    line = label + " [" + bar + "]" + tail;
  } else {
    line = fit_label(f.label, width > tail.size() + 1 ? width - tail.size() - 1 : 0) + " " + tail;
  }
  if (line.size() > width) line.resize(width);
  return line;
}

size_t terminal_width(int fd) {
  winsize ws{};
  if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char* c = std::getenv("COLUMNS"); c && *c) {
    char* end = nullptr;
    const long n = std::strtol(c, &end, 10);
    if (*end == 0 && n > 0 && n < 10000) return static_cast<size_t>(n);
  }
  return 80;
}

}  // namespace mibz2::programs
