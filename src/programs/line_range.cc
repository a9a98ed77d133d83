#include "programs/line_range.h"

#include <limits>

namespace mibz2::programs {
namespace {

// A line number: decimal digits only, from 1 to the largest uint64_t.
std::optional<uint64_t> parse_line_number(std::string_view text) {
  if (text.empty()) return std::nullopt;
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  uint64_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<uint64_t>(c - '0');
    if (n > (kMax - digit) / 10) return std::nullopt;
    n = n * 10 + digit;
  }
  if (n == 0) return std::nullopt;
  return n;
}

}  // namespace

std::optional<LineRange> parse_line_range(std::string_view text) {
  const size_t colon = text.find(':');
  const std::optional<uint64_t> first = parse_line_number(text.substr(0, colon));
  if (!first) return std::nullopt;
  if (colon == std::string_view::npos) return LineRange{*first, *first};
  const std::string_view rest = text.substr(colon + 1);
  if (rest.empty()) return LineRange{*first, std::nullopt};
  const std::optional<uint64_t> last = parse_line_number(rest);  // a second colon is no digit
  if (!last) return std::nullopt;
  return LineRange{*first, *last < *first ? *first : *last};
}

std::string not_a_line_range(std::string_view text) {
  std::string s = "'";
  s.append(text);
  s += "' is not a line range (FIRST:LAST, FIRST: to the end, or N; lines count from 1)";
  return s;
}

}  // namespace mibz2::programs
