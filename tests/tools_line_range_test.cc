// `mibz2 cat --lines`' rule (programs/line_range.h) without running the program: what each form
// selects, checked against `sed -n` where sed has the same address pair, and what is refused.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>

#include "programs/line_range.h"
#include "test_support.h"

namespace mibz2::programs {
namespace {

constexpr uint64_t kMax = UINT64_MAX;

TEST(LineRangeRule, TheThreeFormsAndSedsRuleForALastBeforeTheFirst) {
  struct Case {
    const char* text;
    uint64_t first;
    std::optional<uint64_t> last;
  };
  const Case cases[] = {
      {"5:9", 5, 9},    {"1:1", 1, 1},  {"7", 7, 7},       {"3:", 3, std::nullopt}, {"1:", 1, std::nullopt},
      {"9:5", 9, 9},    {"2:1", 2, 2},  {"007:010", 7, 10},
      {"18446744073709551615", kMax, kMax},
      {"1:18446744073709551615", 1, kMax},
      {"18446744073709551615:", kMax, std::nullopt},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const std::optional<LineRange> r = parse_line_range(c.text);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->first, c.first);
    EXPECT_EQ(r->last, c.last);
  }
}

TEST(LineRangeRule, ZeroAndAnythingButDigitsAreRefused) {
  for (const char* text : {"", ":", ":5", "0", "0:5", "5:0", "0:", "00", "5::", "5:9:", "5:9:12", "+5", "-5", " 5",
                           "5 ", "5: 9", "a", "5:a", "1e3", "5-9", "5,9", "0x10", "1.5",
                           "18446744073709551616", "1:18446744073709551616", "99999999999999999999999:"}) {
    SCOPED_TRACE(std::string("'") + text + "'");
    EXPECT_FALSE(parse_line_range(text));
  }
  EXPECT_EQ(not_a_line_range("0:5"),
            "'0:5' is not a line range (FIRST:LAST, FIRST: to the end, or N; lines count from 1)");
}

// The forms select what sed selects for the matching address pair: FIRST:LAST as 'FIRST,LASTp'
// (a LAST before FIRST included), FIRST: as 'FIRST,$p', N as 'Np'.
TEST(LineRangeRule, SelectsWhatSedSelects) {
  if (!test::have_program("sed") || !test::have_program("seq")) GTEST_SKIP() << "needs sed and seq";
  struct Case {
    const char* range;
    const char* sed;
  };
  const Case cases[] = {{"3:6", "3,6p"}, {"6:3", "6,3p"}, {"4", "4p"}, {"8:", "8,$p"}, {"9:20", "9,20p"},
                        {"10:10", "10,10p"}, {"11:", "11,$p"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.range);
    const std::optional<LineRange> r = parse_line_range(c.range);
    ASSERT_TRUE(r);
    std::string want;
    for (uint64_t n = r->first; n <= 10 && (!r->last || n <= *r->last); ++n) want += std::to_string(n) + "\n";
    const test::CommandResult sed = test::run_command(std::string("seq 10 | sed -n '") + c.sed + "'");
    ASSERT_EQ(sed.status, 0);
    EXPECT_EQ(std::string(sed.out.begin(), sed.out.end()), want);
  }
}

}  // namespace
}  // namespace mibz2::programs
