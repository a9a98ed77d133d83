// The generator's shared model: one vocabulary per language and script, built once from fixed seeds
// (the --seed only changes the documents built from them).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "random.h"
#include "text.h"

namespace mibz2::corpus {

enum LangId : uint32_t { kEn, kDe, kFr, kEs, kIt, kNl, kPt, kSv, kPl, kRu, kUk, kJa, kZh, kAr, kKo, kFa, kLangCount };

struct Model {
  Vocab en, de, fr, es, it, nl, pt, sv, pl, ru, ja, zh, ar, ko, given, family;
  std::array<Lang, kLangCount> langs{};

  Model();
};

// Latin letters to Cyrillic and Arabic: transliterated person names, as in real label sets.
void transliterate(std::string& out, std::string_view latin, LangId lang);

}  // namespace mibz2::corpus
