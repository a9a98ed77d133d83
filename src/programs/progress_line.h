// The line a progress bar draws, fitted to the terminal: what Progress (cli_common.h) redraws in
// place with \r on a terminal. Pure functions, so that the fitting is tested for every width.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace mibz2::programs {

struct ProgressFigures {
  std::string label;     // what is being done ("indexing /srv/dumps/x.bz2", "total 3/10 files")
  uint64_t done = 0;     // bytes done
  uint64_t total = 0;    // bytes in all
  double seconds = 0;    // since it began (for the rate and the ETA)
};

// "LABEL [=====>    ]  42% 1.2 GiB / 3.4 GiB  85 MB/s  ETA 0:41", at most `width` columns (ASCII
// only, so columns are bytes): the bar takes the room that is left, a label too long loses its
// beginning ("...x.bz2"), and on narrow terminals the rate, then the sizes, then the bar go.
std::string progress_line(const ProgressFigures& figures, size_t width);

// The columns of the terminal on `fd` (TIOCGWINSZ); else $COLUMNS if it is a number; else 80.
size_t terminal_width(int fd);

}  // namespace mibz2::programs
