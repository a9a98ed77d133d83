// The text of simple XML elements, as S3 answers them (an error's <Code>, a listing's <Key>):
// flat elements holding text, found by name. Not a general XML reader: S3's replies need none.
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>

namespace mibz2::io {

// The five predefined entities and numeric references (&#NN; &#xNN;) decoded; anything else kept.
inline std::string xml_unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out.push_back(s[i]);
      continue;
    }
    const size_t semi = s.find(';', i);
    if (semi == std::string_view::npos || semi - i > 10) {
      out.push_back('&');
      continue;
    }
    const std::string_view name = s.substr(i + 1, semi - i - 1);
    if (name == "amp") out.push_back('&');
    else if (name == "lt") out.push_back('<');
    else if (name == "gt") out.push_back('>');
    else if (name == "quot") out.push_back('"');
    else if (name == "apos") out.push_back('\'');
    else if (name.size() > 1 && name[0] == '#') {
      const bool hex = name[1] == 'x' || name[1] == 'X';
      const unsigned long cp = std::strtoul(std::string(name.substr(hex ? 2 : 1)).c_str(), nullptr, hex ? 16 : 10);
      // As UTF-8.
      if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
      } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      }
    } else {
      out.append(s.substr(i, semi - i + 1));
    }
    i = semi;
  }
  return out;
}

// The raw text of the first element <TAG>...</TAG> at or after `*pos` in `xml`, and *pos moved
// past it; false when there is none (then *pos is unchanged).
inline bool xml_element(std::string_view xml, std::string_view tag, size_t* pos, std::string_view* text) {
  // Appended piece by piece: GCC 12 warns (-Wrestrict, wrongly) of "<" + std::string(tag).
  std::string open(1, '<');
  open.append(tag).push_back('>');
  std::string close("</");
  close.append(tag).push_back('>');
  const size_t start = xml.find(open, *pos);
  if (start == std::string_view::npos) return false;
  const size_t end = xml.find(close, start + open.size());
  if (end == std::string_view::npos) return false;
  *text = xml.substr(start + open.size(), end - start - open.size());
  *pos = end + close.size();
  return true;
}

// The decoded text of the first <TAG> in `xml`, or empty.
inline std::string xml_first(std::string_view xml, std::string_view tag) {
  size_t pos = 0;
  std::string_view text;
  return xml_element(xml, tag, &pos, &text) ? xml_unescape(text) : std::string();
}

}  // namespace mibz2::io
