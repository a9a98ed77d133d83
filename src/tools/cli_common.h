// Pieces shared by the programs' command lines: option values, sizes, progress display.
#pragma once

#include <cstdint>
#include <optional>
#include <string>


namespace mibz2::tools {

// "4096", "64K", "1.5M", "2G", "1T" (binary units). nullopt if malformed.
std::optional<uint64_t> parse_size(const std::string& text);
// A thread count 1..1024, or nullopt.
std::optional<unsigned> parse_threads(const std::string& text);
// "1.5 GiB"
std::string human_bytes(uint64_t bytes);

// A progress bar on stderr when it is a terminal (compressed position, MB/s, ETA); silent otherwise.
class Progress {
 public:
  explicit Progress(std::string label);
  ~Progress();
  void update(uint64_t done, uint64_t total);
  void finish();  // clears the bar line
  bool enabled() const { return enabled_; }

 private:
  std::string label_;
  bool enabled_;
  bool drawn_ = false;
  double start_;
};

}  // namespace mibz2::tools
