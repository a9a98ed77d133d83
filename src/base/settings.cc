#include "base/settings.h"

#include <unistd.h>

#include <limits>

#include "base/words.h"

namespace mibz2::base {
namespace {

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

}  // namespace mibz2::base
