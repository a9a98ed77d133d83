#include "base/words.h"

#include <cstdio>

namespace mibz2::base {

// "'TEXT'": appended piece by piece (`"'" + std::string(...)` trips a false -Wrestrict in g++ 12).
std::string quoted(std::string_view text) {
  std::string s = "'";
  s.append(text);
  s += '\'';
  return s;
}

namespace {

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

}  // namespace mibz2::base
