// What the programs' logs make of the text of a message (base/words.h's escape_for_log, and
// base/log_sink.h's EscapingSink, through which every message of mibz2fs and mibz2 goes): control
// characters never reach a sink, and each escape stands for exactly one byte of the text.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "base/log_sink.h"
#include "base/words.h"
#include "programs/cli_common.h"

namespace mibz2::programs {
namespace {

TEST(LogEscape, ControlCharactersBackslashesAndC1AreEscaped) {
  struct Case {
    std::string text, logged;
  };
  const Case cases[] = {
      {"plain name.bz2", "plain name.bz2"},
      {"a\nb", "a\\nb"},
      {"a\r\tb", "a\\r\\tb"},
      {"\x1b[31mred", "\\x1b[31mred"},
      {std::string("nul\0byte", 8), "nul\\x00byte"},
      {"\x01\x1f\x7f", "\\x01\\x1f\\x7f"},
      {"back\\slash", "back\\\\slash"},
      {"\\n is two bytes", "\\\\n is two bytes"},
      {"csi \xc2\x9b" "2J nel \xc2\x85", "csi \\u009b2J nel \\u0085"},
      {"\xc3\xa9t\xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x93\xa6", "\xc3\xa9t\xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x93\xa6"},  // other UTF-8 kept
      {"\xff\xfe \xc2", "\xff\xfe \xc2"},  // not UTF-8: kept, a lone lead byte at the end too
      {"\xc2\xa0nbsp", "\xc2\xa0nbsp"},
  };
  for (const Case& c : cases) EXPECT_EQ(base::escape_for_log(c.text), c.logged) << c.text;
}

// Reading the escapes back gives the text again: two different texts are never logged alike.
TEST(LogEscape, TheEscapingIsUnambiguous) {
  auto unescape = [](const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] != '\\') {
        out += s[i];
        continue;
      }
      const char k = s[++i];
      if (k == 'n') out += '\n';
      else if (k == 'r') out += '\r';
      else if (k == 't') out += '\t';
      else if (k == '\\') out += '\\';
      else if (k == 'x') out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16)), i += 2;
      else if (k == 'u') out += '\xc2', out += static_cast<char>(std::stoi(s.substr(i + 1, 4), nullptr, 16)), i += 4;
      else ADD_FAILURE() << "unknown escape in " << s;
    }
    return out;
  };
  std::string every_byte;
  for (int b = 0; b < 256; ++b) every_byte += static_cast<char>(b);
  for (const std::string& text : {every_byte, std::string("\\x41 is not A"), std::string("\\\\\n\\"),
                                  std::string("\xc2\x80\xc2\xc2\x9f\\u0080")}) {
    const std::string logged = base::escape_for_log(text);
    for (char c : logged) {
      const auto u = static_cast<unsigned char>(c);
      EXPECT_TRUE(u >= 0x20 && u != 0x7f) << "control byte " << int{u} << " in " << logged;
    }
    EXPECT_EQ(unescape(logged), text);
  }
}

// Messages stay one line on a terminal too (one_line: the programs' own messages), where a
// backslash is left as it is.
TEST(LogEscape, OneLineEscapesControlsOnly) {
  EXPECT_EQ(base::one_line("a\nb\\c\x1b"), "a\\nb\\c\\x1b");
}

// Through a logger: the message's text is escaped; the pattern's own fields are not touched.
TEST(LogEscape, EveryMessageThroughTheSinkIsEscaped) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  const auto logger = base::escaping_logger("test", sink);
  logger->set_pattern("[%l] %v");
  logger->warn("{}: damaged", "/src/evil\n[error] FORGED\x1b[0m.bz2");
  logger->info("plain {}", 42);
  logger->debug("not logged\n");  // below the level: nothing
  EXPECT_EQ(out.str(), "[warning] /src/evil\\n[error] FORGED\\x1b[0m.bz2: damaged\n[info] plain 42\n");
}

}  // namespace
}  // namespace mibz2::programs
