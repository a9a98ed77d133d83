#include "tools/cli_common.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace mibz2::tools {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::optional<uint64_t> parse_size(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || v < 0 || !std::isfinite(v)) return std::nullopt;
  std::string suffix(end);
  if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b')) suffix.pop_back();
  if (suffix.size() == 2 && (suffix[1] == 'i' || suffix[1] == 'I')) suffix.pop_back();
  double mult = 1;
  if (suffix.empty()) mult = 1;
  else if (suffix == "K" || suffix == "k") mult = 1024.0;
  else if (suffix == "M" || suffix == "m") mult = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "g") mult = 1024.0 * 1024 * 1024;
  else if (suffix == "T" || suffix == "t") mult = 1024.0 * 1024 * 1024 * 1024;
  else return std::nullopt;
  const double bytes = v * mult;
  if (bytes > 1.8e19) return std::nullopt;
  if (suffix.empty() && bytes != std::floor(bytes)) return std::nullopt;
  return static_cast<uint64_t>(bytes);
}

std::optional<unsigned> parse_threads(const std::string& text) {
  char* end = nullptr;
  const long n = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end || n < 1 || n > 1024) return std::nullopt;
  return static_cast<unsigned>(n);
}

std::string human_bytes(uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0) std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

Progress::Progress(std::string label) : label_(std::move(label)), enabled_(isatty(STDERR_FILENO)), start_(now_seconds()) {}

Progress::~Progress() { finish(); }

void Progress::update(uint64_t done, uint64_t total) {
  if (!enabled_ || total == 0) return;
  const double elapsed = now_seconds() - start_;
  const double frac = std::min(1.0, static_cast<double>(done) / static_cast<double>(total));
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
  char eta[32] = "--:--";
  if (rate > 0 && done < total) {
    const long s = std::lround(static_cast<double>(total - done) / rate);
    std::snprintf(eta, sizeof eta, "%ld:%02ld", s / 60, s % 60);
  }
  constexpr int kWidth = 30;
  char bar[kWidth + 1];
  const int filled = static_cast<int>(frac * kWidth);
  for (int i = 0; i < kWidth; ++i) bar[i] = i < filled ? '=' : (i == filled ? '>' : ' ');
  bar[kWidth] = 0;
  std::fprintf(stderr, "\r%s [%s] %3.0f%% %s / %s  %.0f MB/s  ETA %s  ", label_.c_str(), bar, frac * 100,
               human_bytes(done).c_str(), human_bytes(total).c_str(), rate / 1e6, eta);
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::finish() {
  if (drawn_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    drawn_ = false;
  }
}

}  // namespace mibz2::tools
