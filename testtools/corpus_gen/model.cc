#include "model.h"

#include <unordered_set>
#include <vector>

namespace mibz2::corpus {
namespace {

// English: the language of most labels and of all the Wikipedia-like text, so the largest
// vocabulary, with real function words at the top ranks.
void build_english(Vocab& en) {
  const std::vector<std::string_view> en_head = {
      "the", "of", "and", "in", "to", "a", "was", "is", "for", "on", "as", "by", "with", "he", "at", "from", "his",
      "an", "it", "were", "which", "are", "this", "also", "be", "has", "or", "had", "first", "one", "their", "its",
      "new", "after", "who", "they", "two", "her", "she", "been", "other", "when", "time", "during", "there", "into",
      "school", "more", "may", "years", "over", "only", "year", "most", "would", "world", "city", "some", "where",
      "between", "later", "three", "state", "such", "then", "national", "used", "made", "known", "under", "many",
      "university", "united", "while", "part", "season", "team", "these", "american", "than", "film", "second",
      "born", "south", "became", "states", "war", "through", "being", "including", "both", "before", "north", "high",
      "however", "people", "family", "early", "history", "album", "area", "them", "series", "against", "until",
      "since", "district", "county", "name", "work", "life", "group", "music", "following", "number", "company",
      "several", "four", "called", "played", "released", "career", "league", "game", "government", "house", "each",
      "based", "day", "same", "won", "use", "station", "club", "international", "town", "located", "population",
      "general", "college", "east", "found", "age", "march", "end", "september", "began", "home", "public",
      "church", "line", "june", "river", "member", "system", "place", "century", "band", "july", "york", "january",
      "october", "song", "august", "best", "former", "british", "party", "named", "held", "village", "show", "local",
      "november", "took", "service", "december", "built", "another", "major", "within", "along", "members", "five",
      "single", "due", "although", "small", "old", "left", "final", "large", "include", "building", "served",
      "president", "received", "games", "death", "february", "main", "third", "set", "children", "own", "order",
      "species", "park", "law", "air", "published", "road", "died", "book", "men", "women", "army", "often",
      "according", "education", "central", "country", "division", "english", "top", "included", "development",
      "french", "community", "among", "water", "around", "term", "research", "study", "results", "data", "analysis",
      "cell", "protein", "patients", "effect", "method", "model", "human", "gene", "expression", "clinical"};
  SyllableSet latin{{"", "", "b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "st",
                     "tr", "pr", "br", "ch", "th", "sh", "gr", "cl", "pl", "fr", "sp", "dr", "cr"},
                    {"a", "e", "i", "o", "u", "a", "e", "i", "o", "ea", "ou", "ai", "io", "ia", "y", "ee"},
                    {"", "", "", "n", "r", "s", "l", "t", "m", "nd", "st", "ng", "rt", "x", "ck", "ll", "ss", "nt"}};
  build_syllable_vocab(en, latin, en_head, 60000, 1, 2, 4);
}

// German, French, Spanish, Italian, Portuguese, Dutch, Swedish, Polish: syllables and function
// words enough to look and compress like each language, with its accented letters.
void build_european(Model& m) {
  SyllableSet german{{"", "b", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "w", "z", "sch", "st",
                      "pf", "kr", "gr", "br", "tr", "fr", "spr"},
                     {"a", "e", "i", "o", "u", "ei", "au", "ie", "ä", "ö", "ü", "eu", "e", "e"},
                     {"", "n", "r", "s", "t", "ch", "ng", "ß", "nd", "rt", "lt", "ck", "tz", "ung", "en", "er"}};
  build_syllable_vocab(m.de, german,
                       {"der", "die", "und", "in", "den", "von", "zu", "das", "mit", "sich", "des", "auf", "für",
                        "ist", "im", "dem", "nicht", "ein", "eine", "als", "auch", "es", "an", "wurde", "aus", "bei"},
                       20000, 2, 2, 40);
  SyllableSet french{{"", "b", "c", "d", "f", "g", "j", "l", "m", "n", "p", "r", "s", "t", "v", "ch", "gr", "pr",
                      "tr", "br", "qu"},
                     {"a", "e", "i", "o", "u", "é", "è", "ou", "ai", "eau", "oi", "au", "ê", "e"},
                     {"", "", "n", "r", "s", "t", "x", "l", "nt", "ç", "re", "le", "que", "ment"}};
  build_syllable_vocab(m.fr, french,
                       {"de", "la", "le", "et", "les", "des", "en", "un", "du", "une", "est", "dans", "par", "pour",
                        "au", "sur", "qui", "il", "a", "avec", "son", "se", "plus", "sa", "ses"},
                       20000, 3, 2, 40);
  SyllableSet romance{{"", "b", "c", "d", "f", "g", "l", "m", "n", "p", "r", "s", "t", "v", "ll", "ch", "pr", "tr",
                       "br", "gl", "ñ"},
                      {"a", "e", "i", "o", "u", "á", "é", "í", "ó", "ia", "io", "ue", "ão", "à"},
                      {"", "", "n", "r", "s", "l", "z", "nt", "sc", "do", "ta", "ne", "ción", "mente"}};
  build_syllable_vocab(m.es, romance, {"de", "la", "que", "el", "en", "y", "a", "los", "del", "se", "las", "por", "un"},
                       15000, 4, 2, 40);
  build_syllable_vocab(m.it, romance, {"di", "e", "il", "la", "che", "in", "a", "per", "un", "del", "della", "con"},
                       15000, 5, 2, 40);
  build_syllable_vocab(m.pt, romance, {"de", "a", "o", "que", "e", "do", "da", "em", "um", "para", "com", "uma"},
                       15000, 6, 2, 40);
  SyllableSet dutch{{"", "b", "d", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "sch", "st",
                     "kr", "gr", "sj"},
                    {"a", "e", "i", "o", "u", "aa", "ee", "oo", "ij", "ui", "oe", "å", "ä", "ö"},
                    {"", "n", "r", "s", "t", "k", "l", "nd", "ng", "cht", "rt", "lj", "gen", "heid"}};
  build_syllable_vocab(m.nl, dutch, {"de", "van", "het", "een", "en", "in", "is", "op", "te", "dat", "die", "voor"},
                       15000, 7, 2, 40);
  build_syllable_vocab(m.sv, dutch, {"och", "i", "att", "det", "som", "en", "på", "är", "av", "för", "med", "till"},
                       12000, 8, 2, 40);
  SyllableSet polish{{"", "b", "d", "g", "k", "l", "m", "n", "p", "r", "s", "t", "w", "z", "sz", "cz", "rz", "prz",
                      "dz", "ł", "ś", "ż"},
                     {"a", "e", "i", "o", "u", "y", "ą", "ę", "ó", "ie", "ia"},
                     {"", "n", "k", "s", "w", "ł", "ć", "ń", "ski", "cki", "ny", "wa"}};
  build_syllable_vocab(m.pl, polish, {"w", "i", "na", "z", "do", "się", "nie", "że", "to", "jest", "od", "po"}, 12000,
                       9, 2, 40);
}

void build_russian(Vocab& ru) {
  SyllableSet cyrillic{{"", "б", "в", "г", "д", "ж", "з", "к", "л", "м", "н", "п", "р", "с", "т", "ф", "х", "ц",
                        "ч", "ш", "ст", "пр", "кр", "гр", "тр"},
                       {"а", "е", "и", "о", "у", "ы", "я", "ю", "ё", "а", "о", "е"},
                       {"", "", "н", "р", "в", "й", "ст", "к", "л", "ть", "ов", "ий", "ая", "ский"}};
  build_syllable_vocab(ru, cyrillic, {"в", "и", "на", "не", "с", "что", "по", "как", "из", "его", "к", "был", "для"},
                       25000, 10, 2, 40);
}

// Japanese: kanji compounds with kana endings, and katakana loanwords.
void build_japanese(Vocab& ja) {
  const auto kanji = codepoint_sample(0x4e00, 0x9fa5, 2500, 11);
  const auto hira = codepoint_range(0x3041, 0x3093);
  const auto kata = codepoint_range(0x30a1, 0x30f3);
  std::unordered_set<std::string> seen;
  const Zipf kz(static_cast<uint32_t>(kanji.size()), 10, 16, 14);
  Rng rng(12);
  std::string w;
  for (auto h : {"の", "に", "は", "を", "た", "が", "で", "て", "と", "し", "れ", "さ", "ある", "いる", "する"}) {
    seen.emplace(h);
    ja.add(h);
  }
  while (ja.size() < 20000) {
    w.clear();
    if (rng.percent(30)) {
      for (uint32_t i = 0, n = rng.range(3, 6); i < n; ++i) put_utf8(w, kata[rng.below(static_cast<uint32_t>(kata.size()))]);
      if (rng.percent(30)) w.append("ー");
    } else {
      for (uint32_t i = 0, n = rng.range(1, 3); i < n; ++i) put_utf8(w, kanji[kz.pick(rng)]);
      if (rng.percent(40)) put_utf8(w, hira[rng.below(static_cast<uint32_t>(hira.size()))]);
    }
    if (seen.emplace(w).second) ja.add(w);
  }
  ja.finish(3, 40);
}

// Chinese: words of one to four Han characters from a fixed set of 3500.
void build_chinese(Vocab& zh) {
  const auto han = codepoint_sample(0x4e00, 0x9fa5, 3500, 13);
  std::unordered_set<std::string> seen;
  const Zipf hz(static_cast<uint32_t>(han.size()), 12, 16, 14);
  Rng rng(14);
  std::string w;
  for (auto h : {"的", "是", "在", "了", "和", "有", "为", "于", "年", "中"}) {
    seen.emplace(h);
    zh.add(h);
  }
  while (zh.size() < 20000) {
    w.clear();
    const uint32_t r = rng.below(100);
    const uint32_t n = r < 15 ? 1 : r < 80 ? 2 : r < 93 ? 3 : 4;
    for (uint32_t i = 0; i < n; ++i) put_utf8(w, han[hz.pick(rng)]);
    if (seen.emplace(w).second) zh.add(w);
  }
  zh.finish(3, 40);
}

void build_arabic(Vocab& ar) {
  build_codepoint_vocab(ar, codepoint_range(0x0627, 0x064a), 2, 8, 20000, 15, 3, 40);
}

// Korean: a fixed pool of common-looking Hangul syllables, 1..4 per word.
void build_korean(Vocab& ko) {
  std::vector<uint32_t> pool;
  Rng rng(16);
  std::unordered_set<uint32_t> seen;
  while (pool.size() < 600) {
    const uint32_t l = rng.below(19), vv = rng.below(21), t = rng.percent(60) ? 0 : rng.below(28);
    const uint32_t cp = 0xac00 + (l * 21 + vv) * 28 + t;
    if (seen.insert(cp).second) pool.push_back(cp);
  }
  build_codepoint_vocab(ko, pool, 1, 4, 15000, 17, 3, 40);
}

// Given names and family names (Latin script), for people, places, taxa and authors.
void build_names(Vocab& given, Vocab& family) {
  SyllableSet names{{"b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "ch", "sh",
                     "st", "br", "gr", "fr", "tr", "kr", "th"},
                    {"a", "e", "i", "o", "u", "a", "e", "o", "ie", "ia", "ei", "ou", "y"},
                    {"", "", "n", "r", "s", "l", "th", "rd", "nn", "son", "man", "berg", "ton", "ez", "ski", "ov"}};
  build_syllable_vocab(given, names, {}, 4000, 18, 10, 16);
  build_syllable_vocab(family, names, {}, 60000, 19, 20, 64);
}

}  // namespace

Model::Model() {
  // Each vocabulary has its own fixed seed, so the order of these calls does not matter.
  build_english(en);
  build_european(*this);
  build_russian(ru);
  build_japanese(ja);
  build_chinese(zh);
  build_arabic(ar);
  build_korean(ko);
  build_names(given, family);

  // Code, vocabulary, spaced, Latin script, Arabic script, labels per mille. Ukrainian and Persian
  // borrow the Russian and Arabic vocabularies: what matters is the script, not the language.
  langs[kEn] = {"en", &en, true, true, false, 1000};
  langs[kDe] = {"de", &de, true, true, false, 600};
  langs[kFr] = {"fr", &fr, true, true, false, 600};
  langs[kEs] = {"es", &es, true, true, false, 500};
  langs[kIt] = {"it", &it, true, true, false, 450};
  langs[kNl] = {"nl", &nl, true, true, false, 700};
  langs[kPt] = {"pt", &pt, true, true, false, 350};
  langs[kSv] = {"sv", &sv, true, true, false, 300};
  langs[kPl] = {"pl", &pl, true, true, false, 300};
  langs[kRu] = {"ru", &ru, true, false, false, 400};
  langs[kUk] = {"uk", &ru, true, false, false, 250};
  langs[kJa] = {"ja", &ja, false, false, false, 300};
  langs[kZh] = {"zh", &zh, false, false, false, 300};
  langs[kAr] = {"ar", &ar, true, false, true, 350};
  langs[kKo] = {"ko", &ko, true, false, false, 150};
  langs[kFa] = {"fa", &ar, true, false, true, 150};
}

void transliterate(std::string& out, std::string_view latin, LangId lang) {
  static const char* const kCyr[26] = {"а", "б", "к", "д", "е", "ф", "г", "х", "и", "й", "к", "л", "м",
                                       "н", "о", "п", "к", "р", "с", "т", "у", "в", "в", "кс", "ы", "з"};
  static const char* const kAra[26] = {"ا", "ب", "ك", "د", "ي", "ف", "غ", "ه", "ي", "ج", "ك", "ل", "م",
                                       "ن", "و", "ب", "ك", "ر", "س", "ت", "و", "ف", "و", "كس", "ي", "ز"};
  const auto* table = lang == kRu || lang == kUk ? kCyr : kAra;
  for (char c : latin) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    if (c >= 'a' && c <= 'z') {
      if (lang == kRu || lang == kUk) {
        // Capitalise the first Cyrillic letter of each word (two-byte sequences: D0 B0..D1 8F).
        const bool word_start = out.empty() || out.back() == ' ';
        const size_t at = out.size();
        out.append(table[c - 'a']);
        if (word_start) {
          const uint32_t cp = ((static_cast<uint8_t>(out[at]) & 0x1f) << 6) | (static_cast<uint8_t>(out[at + 1]) & 0x3f);
          if (cp >= 0x430 && cp <= 0x44f) {
            out.resize(at);
            put_utf8(out, cp - 0x20);
            out.append(table[c - 'a'] + 2);
          }
        }
      } else {
        out.append(table[c - 'a']);
      }
    } else {
      out.push_back(c);
    }
  }
}

}  // namespace mibz2::corpus
