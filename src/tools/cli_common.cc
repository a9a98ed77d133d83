#include "tools/cli_common.h"

#include "tools/progress_line.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace mibz2::tools {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::optional<uint64_t> parse_size(std::string_view text) {
  // Exact integer arithmetic (no floating point): 128 bits hold 2^64 << 40 and 10^19 << 40.
  using Wide = unsigned __int128;
  constexpr Wide kMax = std::numeric_limits<uint64_t>::max();
  size_t i = 0;
  Wide whole = 0;
  for (; i < text.size() && is_digit(text[i]); ++i) {
    whole = whole * 10 + static_cast<unsigned>(text[i] - '0');
    if (whole > kMax) return std::nullopt;
  }
  if (i == 0) return std::nullopt;
  Wide fraction = 0, scale = 1;  // the fraction is fraction / scale
  bool has_fraction = false;
  if (i < text.size() && text[i] == '.') {
    const size_t first = ++i;
    for (; i < text.size() && is_digit(text[i]); ++i) {
      if (scale >= Wide{10'000'000'000'000'000'000u}) continue;  // digits past 10^-19 change nothing
      fraction = fraction * 10 + static_cast<unsigned>(text[i] - '0');
      scale *= 10;
    }
    if (i == first) return std::nullopt;
    has_fraction = true;
  }
  unsigned shift = 0;
  if (i < text.size()) {
    switch (text[i]) {
      case 'k': case 'K': shift = 10; break;
      case 'm': case 'M': shift = 20; break;
      case 'g': case 'G': shift = 30; break;
      case 't': case 'T': shift = 40; break;
      default: break;
    }
  }
  if (shift) {
    ++i;
    if (i < text.size() && (text[i] == 'i' || text[i] == 'I')) ++i;
  }
  if (i < text.size() && (text[i] == 'B' || text[i] == 'b')) ++i;
  if (i != text.size()) return std::nullopt;
  if (has_fraction && shift == 0) return std::nullopt;
  const Wide bytes = (whole << shift) + (fraction << shift) / scale;
  if (bytes > kMax) return std::nullopt;
  return static_cast<uint64_t>(bytes);
}

namespace {

// "'TEXT'": appended piece by piece (`"'" + std::string(...)` trips a false -Wrestrict in g++ 12).
std::string quoted(std::string_view text) {
  std::string s = "'";
  s.append(text);
  s += '\'';
  return s;
}

constexpr char kHex[] = "0123456789abcdef";

// `text` with its control characters escaped; with `for_log`, backslashes and UTF-8 C1
// controls too (escape_for_log).
std::string escaped(std::string_view text, bool for_log) {
  std::string s;
  s.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const auto u = static_cast<unsigned char>(c);
    if (for_log && u == 0xc2 && i + 1 < text.size()) {
      const auto next = static_cast<unsigned char>(text[i + 1]);
      if (next >= 0x80 && next <= 0x9f) {  // U+0080 to U+009F
        s += "\\u00";
        s += kHex[next >> 4];
        s += kHex[next & 15];
        ++i;
        continue;
      }
    }
    if (u >= 0x20 && u != 0x7f && !(for_log && c == '\\')) {
      s += c;
      continue;
    }
    switch (c) {
      case '\n': s += "\\n"; break;
      case '\t': s += "\\t"; break;
      case '\r': s += "\\r"; break;
      case '\\': s += "\\\\"; break;
      default:
        s += "\\x";
        s += kHex[u >> 4];
        s += kHex[u & 15];
    }
  }
  return s;
}

}  // namespace

std::string one_line(std::string_view text) { return escaped(text, false); }

std::string escape_for_log(std::string_view text) { return escaped(text, true); }

std::string not_a_size(std::string_view text) {
  return quoted(text) + " is not a size (bytes, or a number with K, M, G or T: 4096, 64K, 1.5G)";
}

std::optional<unsigned> parse_threads(std::string_view text) {
  if (text.empty() || text.size() > 4) return std::nullopt;
  unsigned n = 0;
  for (char c : text) {
    if (!is_digit(c)) return std::nullopt;
    n = n * 10 + static_cast<unsigned>(c - '0');
  }
  if (n < 1 || n > 1024) return std::nullopt;
  return n;
}

std::string not_a_thread_count(std::string_view text) {
  return quoted(text) + " is not a thread count (1 to 1024)";
}

std::string check_cache_size(uint64_t bytes, uint64_t physical_memory, std::string* warning) {
  warning->clear();
  if (bytes < kMinCacheBytes) return human_bytes(bytes) + " is too small for a cache: the least is 1M";
  if (physical_memory && bytes > physical_memory)
    *warning = human_bytes(bytes) + " is more than this machine's memory (" + human_bytes(physical_memory) +
               "): a cache that fills it makes the machine swap";
  return {};
}

uint64_t physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

std::string human_bytes(uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0) std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

std::string plural(uint64_t n, std::string_view noun) {
  std::string s = std::to_string(n) + " " + std::string(noun);
  if (n != 1) s += 's';
  return s;
}

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

}  // namespace mibz2::tools
