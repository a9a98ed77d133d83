// The lines `mibz2 cat --lines` writes, as the user names them: FIRST:LAST, FIRST: (to the end) or
// N (line N alone). Lines count from 1 and the range is inclusive, as in `sed -n 'FIRST,LASTp'`;
// the rules are sed's where sed has one (a LAST before FIRST selects line FIRST alone), and
// line 0 is refused (sed takes it only before a regular expression, which a range here never is).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mibz2::programs {

struct LineRange {
  uint64_t first = 1;             // 1-based
  std::optional<uint64_t> last;   // inclusive, >= first; nullopt: to the end of the file
};

// Whole numbers from 1 to 2^64 - 1 in decimal digits, no sign, no spaces: "5:9", "5:", "5". A
// LAST smaller than FIRST gives {FIRST, FIRST}, as sed prints line FIRST alone for 'FIRST,LASTp'.
std::optional<LineRange> parse_line_range(std::string_view text);
// "'TEXT' is not a line range (...)": the wording of a bad --lines.
std::string not_a_line_range(std::string_view text);

}  // namespace mibz2::programs
