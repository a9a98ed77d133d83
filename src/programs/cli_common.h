// The progress display the programs share (the rules of their values are base/settings.h, the
// words of their messages base/words.h).
#pragma once

#include <cstdint>
#include <string>

namespace mibz2::programs {

struct ProgressFigures;

// A progress bar on stderr when it is a terminal (compressed position, MB/s, ETA), fitted to its
// width and redrawn in place; silent otherwise.
class Progress {
 public:
  explicit Progress(std::string label);
  ~Progress();
  // `overall`, if given, is drawn as a second line under the bar (mibz2fs -o wait_index's total).
  void update(uint64_t done, uint64_t total, const ProgressFigures* overall = nullptr);
  void finish();  // clears the bar's lines
  bool enabled() const { return enabled_; }

 private:
  std::string label_;
  bool enabled_;
  bool drawn_ = false;
  double start_;
};

}  // namespace mibz2::programs
