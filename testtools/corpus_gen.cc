// mibz2-corpus-gen: deterministic test and benchmark inputs that look and compress like real dumps.
//
//   mibz2-corpus-gen --kind wikidata|wikipedia --size SIZE [--seed N] [--out FILE]
//
// wikidata:  a Wikidata-like JSON dump: "[" on the first line, one entity per line ending in ","
//            (except the last), "]" on the last line.
// wikipedia: a MediaWiki XML export (<mediawiki>, <siteinfo>, <page>s with wikitext revisions).
//
// The same kind, seed and size give the same bytes on every machine: the generator uses its own
// PRNG and integer arithmetic only (no std distributions, no libm), and no locale. The output is
// exactly SIZE bytes; the end is filled with small entities and one padded entity so the document
// stays well formed (only sizes below a few hundred bytes, or below the XML header, are cut short).
// Not installed; scripts/make-corpus drives it.
#include <getopt.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace {

// ---------------------------------------------------------------------------------------------
// Randomness: xoshiro256** seeded through splitmix64. Everything derives from these integers.

uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A stateless mix of two integers: stable per-index properties (names of referenced pages...).
uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t x = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL);
  return splitmix64(x);
}

class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& v : s_) v = splitmix64(seed);
  }
  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, n) (multiply-shift; the tiny bias does not matter, the determinism does).
  uint32_t below(uint32_t n) { return static_cast<uint32_t>(((next() >> 32) * n) >> 32); }
  uint32_t range(uint32_t lo, uint32_t hi) { return lo + below(hi - lo + 1); }  // inclusive
  bool percent(uint32_t p) { return below(100) < p; }
  bool permille(uint32_t p) { return below(1000) < p; }
  // Heavy-tailed count: lo + geometric-like tail; each extra step continues with p_continue %.
  uint32_t tail(uint32_t lo, uint32_t p_continue, uint32_t cap) {
    uint32_t n = lo;
    while (n < cap && percent(p_continue)) ++n;
    return n;
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

// ---------------------------------------------------------------------------------------------
// Zipf-like choice among n ranks with integer weights 2^40/(rank+q): a lookup table covers the
// head, and a share of picks goes uniformly over all ranks (the long tail real text has).

class Zipf {
 public:
  Zipf() = default;
  Zipf(uint32_t n, uint32_t q, uint32_t tail_per_256, uint32_t table_bits = 16) : n_(n), tail_(tail_per_256) {
    const uint32_t size = 1u << table_bits;
    mask_ = size - 1;
    table_.resize(size);
    std::vector<uint64_t> w(n);
    unsigned __int128 total = 0;
    for (uint32_t k = 0; k < n; ++k) {
      w[k] = (uint64_t{1} << 40) / (uint64_t{k} + q);
      total += w[k];
    }
    uint32_t k = 0;
    unsigned __int128 cum = w[0];
    for (uint32_t i = 0; i < size; ++i) {
      const unsigned __int128 target = (total * (2 * i + 1)) / (2 * uint64_t{size});
      while (k + 1 < n && cum <= target) cum += w[++k];
      table_[i] = k;
    }
  }
  uint32_t pick(Rng& rng) const {
    const uint64_t r = rng.next();
    if ((r & 0xff) < tail_) return static_cast<uint32_t>(((r >> 32) * n_) >> 32);
    return table_[(r >> 8) & mask_];
  }
  // A deterministic pick driven by a hash instead of the stream (stable choices per index).
  uint32_t pick_hash(uint64_t h) const {
    if ((h & 0xff) < tail_) return static_cast<uint32_t>(((h >> 32) * n_) >> 32);
    return table_[(h >> 8) & mask_];
  }
  uint32_t size() const { return n_; }

 private:
  uint32_t n_ = 0, tail_ = 0, mask_ = 0;
  std::vector<uint32_t> table_;
};

// ---------------------------------------------------------------------------------------------
// Output helpers.

void put_u64(std::string& s, uint64_t v) {
  char tmp[24];
  const auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
  s.append(tmp, r.ptr);
}

void put_padded(std::string& s, uint64_t v, int width) {
  char tmp[24];
  const auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
  for (int i = static_cast<int>(r.ptr - tmp); i < width; ++i) s.push_back('0');
  s.append(tmp, r.ptr);
}

void put_hex(std::string& s, uint64_t v, int digits, bool upper) {
  static const char kLower[] = "0123456789abcdef";
  static const char kUpper[] = "0123456789ABCDEF";
  const char* d = upper ? kUpper : kLower;
  for (int i = digits - 1; i >= 0; --i) s.push_back(d[(v >> (4 * i)) & 15]);
}

void put_utf8(std::string& s, uint32_t cp) {
  if (cp < 0x80) {
    s.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    s.push_back(static_cast<char>(0xc0 | (cp >> 6)));
    s.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    s.push_back(static_cast<char>(0xe0 | (cp >> 12)));
    s.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    s.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    s.push_back(static_cast<char>(0xf0 | (cp >> 18)));
    s.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    s.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    s.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

size_t digits10(uint64_t v) {
  size_t n = 1;
  while (v >= 10) {
    v /= 10;
    ++n;
  }
  return n;
}

void capitalize_at(std::string& s, size_t pos) {
  if (pos < s.size() && s[pos] >= 'a' && s[pos] <= 'z') s[pos] = static_cast<char>(s[pos] - 32);
}

// ---------------------------------------------------------------------------------------------
// Vocabularies: words made of syllables, one table per script, ranked for Zipf choice.

class Vocab {
 public:
  void add(std::string_view w) {
    off_.push_back(static_cast<uint32_t>(arena_.size()));
    len_.push_back(static_cast<uint16_t>(w.size()));
    arena_.append(w);
  }
  void finish(uint32_t q, uint32_t tail_per_256) { zipf_ = Zipf(size(), q, tail_per_256); }
  uint32_t size() const { return static_cast<uint32_t>(off_.size()); }
  std::string_view word(uint32_t i) const { return {arena_.data() + off_[i], len_[i]}; }
  uint32_t pick(Rng& rng) const { return zipf_.pick(rng); }
  uint32_t pick_hash(uint64_t h) const { return zipf_.pick_hash(h); }
  std::string_view random(Rng& rng) const { return word(pick(rng)); }

 private:
  std::string arena_;
  std::vector<uint32_t> off_;
  std::vector<uint16_t> len_;
  Zipf zipf_;
};

struct SyllableSet {
  std::vector<std::string_view> onsets, nuclei, codas;
};

// Builds n distinct words of 1..4 syllables; `head` words take the top ranks (function words).
void build_syllable_vocab(Vocab& v, const SyllableSet& set, const std::vector<std::string_view>& head, uint32_t n,
                          uint64_t seed, uint32_t zipf_q, uint32_t tail) {
  std::unordered_set<std::string> seen;
  for (auto w : head) {
    seen.emplace(w);
    v.add(w);
  }
  Rng rng(seed);
  std::string w;
  while (v.size() < n) {
    w.clear();
    const uint32_t r = rng.below(100);
    const uint32_t syllables = r < 18 ? 1 : r < 58 ? 2 : r < 88 ? 3 : 4;
    for (uint32_t i = 0; i < syllables; ++i) {
      w.append(set.onsets[rng.below(static_cast<uint32_t>(set.onsets.size()))]);
      w.append(set.nuclei[rng.below(static_cast<uint32_t>(set.nuclei.size()))]);
      if (i + 1 == syllables || rng.percent(30)) w.append(set.codas[rng.below(static_cast<uint32_t>(set.codas.size()))]);
    }
    if (w.size() < 2 || !seen.emplace(w).second) continue;
    v.add(w);
  }
  v.finish(zipf_q, tail);
}

// Words of `min..max` code points, each drawn from `alphabet` with a Zipf preference.
void build_codepoint_vocab(Vocab& v, const std::vector<uint32_t>& alphabet, uint32_t min_len, uint32_t max_len,
                           uint32_t n, uint64_t seed, uint32_t zipf_q, uint32_t tail) {
  std::unordered_set<std::string> seen;
  const Zipf letters(static_cast<uint32_t>(alphabet.size()), 8, 16, 14);
  Rng rng(seed);
  std::string w;
  while (v.size() < n) {
    w.clear();
    const uint32_t len = rng.range(min_len, max_len);
    for (uint32_t i = 0; i < len; ++i) put_utf8(w, alphabet[letters.pick(rng)]);
    if (!seen.emplace(w).second) continue;
    v.add(w);
  }
  v.finish(zipf_q, tail);
}

std::vector<uint32_t> codepoint_range(uint32_t first, uint32_t last) {
  std::vector<uint32_t> out;
  for (uint32_t c = first; c <= last; ++c) out.push_back(c);
  return out;
}

// A scattered, fixed selection of `count` code points in [first, last].
std::vector<uint32_t> codepoint_sample(uint32_t first, uint32_t last, uint32_t count, uint64_t seed) {
  std::vector<uint32_t> out;
  std::unordered_set<uint32_t> seen;
  Rng rng(seed);
  while (out.size() < count) {
    const uint32_t c = first + rng.below(last - first + 1);
    if (seen.insert(c).second) out.push_back(c);
  }
  return out;
}

enum LangId : uint32_t { kEn, kDe, kFr, kEs, kIt, kNl, kPt, kSv, kPl, kRu, kUk, kJa, kZh, kAr, kKo, kFa, kLangCount };

struct Lang {
  const char* code;
  const Vocab* vocab;
  bool spaced;        // words separated by spaces
  bool latin;         // Latin script: person names are shared with English
  bool arabic_script; // Arabic comma
  uint32_t weight;    // how often the language has a label (per mille)
};

// ---------------------------------------------------------------------------------------------
// Shared model: vocabularies and pools, built once from fixed seeds (the --seed only changes the
// documents built from them).

struct Model {
  Vocab en, de, fr, es, it, nl, pt, sv, pl, ru, ja, zh, ar, ko, given, family;
  std::array<Lang, kLangCount> langs{};
  Zipf lang_rank;  // how many languages an entity has labels in

  Model() {
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

    SyllableSet german{{"", "b", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "w", "z", "sch", "st",
                        "pf", "kr", "gr", "br", "tr", "fr", "spr"},
                       {"a", "e", "i", "o", "u", "ei", "au", "ie", "ä", "ö", "ü", "eu", "e", "e"},
                       {"", "n", "r", "s", "t", "ch", "ng", "ß", "nd", "rt", "lt", "ck", "tz", "ung", "en", "er"}};
    build_syllable_vocab(de, german,
                         {"der", "die", "und", "in", "den", "von", "zu", "das", "mit", "sich", "des", "auf", "für",
                          "ist", "im", "dem", "nicht", "ein", "eine", "als", "auch", "es", "an", "wurde", "aus", "bei"},
                         20000, 2, 2, 40);
    SyllableSet french{{"", "b", "c", "d", "f", "g", "j", "l", "m", "n", "p", "r", "s", "t", "v", "ch", "gr", "pr",
                        "tr", "br", "qu"},
                       {"a", "e", "i", "o", "u", "é", "è", "ou", "ai", "eau", "oi", "au", "ê", "e"},
                       {"", "", "n", "r", "s", "t", "x", "l", "nt", "ç", "re", "le", "que", "ment"}};
    build_syllable_vocab(fr, french,
                         {"de", "la", "le", "et", "les", "des", "en", "un", "du", "une", "est", "dans", "par", "pour",
                          "au", "sur", "qui", "il", "a", "avec", "son", "se", "plus", "sa", "ses"},
                         20000, 3, 2, 40);
    SyllableSet romance{{"", "b", "c", "d", "f", "g", "l", "m", "n", "p", "r", "s", "t", "v", "ll", "ch", "pr", "tr",
                         "br", "gl", "ñ"},
                        {"a", "e", "i", "o", "u", "á", "é", "í", "ó", "ia", "io", "ue", "ão", "à"},
                        {"", "", "n", "r", "s", "l", "z", "nt", "sc", "do", "ta", "ne", "ción", "mente"}};
    build_syllable_vocab(es, romance, {"de", "la", "que", "el", "en", "y", "a", "los", "del", "se", "las", "por", "un"},
                         15000, 4, 2, 40);
    build_syllable_vocab(it, romance, {"di", "e", "il", "la", "che", "in", "a", "per", "un", "del", "della", "con"},
                         15000, 5, 2, 40);
    build_syllable_vocab(pt, romance, {"de", "a", "o", "que", "e", "do", "da", "em", "um", "para", "com", "uma"},
                         15000, 6, 2, 40);
    SyllableSet dutch{{"", "b", "d", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "sch", "st",
                       "kr", "gr", "sj"},
                      {"a", "e", "i", "o", "u", "aa", "ee", "oo", "ij", "ui", "oe", "å", "ä", "ö"},
                      {"", "n", "r", "s", "t", "k", "l", "nd", "ng", "cht", "rt", "lj", "gen", "heid"}};
    build_syllable_vocab(nl, dutch, {"de", "van", "het", "een", "en", "in", "is", "op", "te", "dat", "die", "voor"},
                         15000, 7, 2, 40);
    build_syllable_vocab(sv, dutch, {"och", "i", "att", "det", "som", "en", "på", "är", "av", "för", "med", "till"},
                         12000, 8, 2, 40);
    SyllableSet polish{{"", "b", "d", "g", "k", "l", "m", "n", "p", "r", "s", "t", "w", "z", "sz", "cz", "rz", "prz",
                        "dz", "ł", "ś", "ż"},
                       {"a", "e", "i", "o", "u", "y", "ą", "ę", "ó", "ie", "ia"},
                       {"", "n", "k", "s", "w", "ł", "ć", "ń", "ski", "cki", "ny", "wa"}};
    build_syllable_vocab(pl, polish, {"w", "i", "na", "z", "do", "się", "nie", "że", "to", "jest", "od", "po"}, 12000,
                         9, 2, 40);
    SyllableSet cyrillic{{"", "б", "в", "г", "д", "ж", "з", "к", "л", "м", "н", "п", "р", "с", "т", "ф", "х", "ц",
                          "ч", "ш", "ст", "пр", "кр", "гр", "тр"},
                         {"а", "е", "и", "о", "у", "ы", "я", "ю", "ё", "а", "о", "е"},
                         {"", "", "н", "р", "в", "й", "ст", "к", "л", "ть", "ов", "ий", "ая", "ский"}};
    build_syllable_vocab(ru, cyrillic, {"в", "и", "на", "не", "с", "что", "по", "как", "из", "его", "к", "был", "для"},
                         25000, 10, 2, 40);
    // Japanese: kanji compounds with kana endings, and katakana loanwords.
    {
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
    {
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
    build_codepoint_vocab(ar, codepoint_range(0x0627, 0x064a), 2, 8, 20000, 15, 3, 40);
    {
      // Hangul: a fixed pool of common-looking syllables, 2..4 per word.
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
    SyllableSet names{{"b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "ch", "sh",
                       "st", "br", "gr", "fr", "tr", "kr", "th"},
                      {"a", "e", "i", "o", "u", "a", "e", "o", "ie", "ia", "ei", "ou", "y"},
                      {"", "", "n", "r", "s", "l", "th", "rd", "nn", "son", "man", "berg", "ton", "ez", "ski", "ov"}};
    build_syllable_vocab(given, names, {}, 4000, 18, 10, 16);
    build_syllable_vocab(family, names, {}, 60000, 19, 20, 64);

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
};

// Latin letters to Cyrillic and Arabic: transliterated person names, as in real label sets.
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

// ---------------------------------------------------------------------------------------------
// Sentences.

struct TextStyle {
  uint32_t markov = 45;  // % of words that follow the previous one through a fixed successor table
};

// Appends `n` words of `lang` (Zipf unigram with a fixed successor structure, which is what gives
// real text its repeated phrases).
void put_words(std::string& s, Rng& rng, const Vocab& v, bool spaced, uint32_t n, const TextStyle& style = {}) {
  uint32_t prev = v.pick(rng);
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t w;
    if (i > 0 && rng.percent(style.markov)) {
      w = v.pick_hash(mix(prev, rng.below(3)));
    } else {
      w = v.pick(rng);
    }
    if (i > 0 && spaced) s.push_back(' ');
    s.append(v.word(w));
    prev = w;
  }
}

void put_sentence(std::string& s, Rng& rng, const Lang& lang, uint32_t n) {
  const size_t start = s.size();
  const Vocab& v = *lang.vocab;
  uint32_t prev = v.pick(rng);
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t w = (i > 0 && rng.percent(45)) ? v.pick_hash(mix(prev, rng.below(3))) : v.pick(rng);
    if (i > 0 && lang.spaced) {
      if (i + 2 < n && rng.percent(7)) s.append(lang.arabic_script ? "،" : ",");
      s.push_back(' ');
    } else if (i > 0 && !lang.spaced && rng.percent(6)) {
      s.append("、");
    }
    s.append(v.word(w));
    prev = w;
  }
  capitalize_at(s, start);
  s.append(lang.spaced ? "." : "。");
}

// ---------------------------------------------------------------------------------------------
// Document writer: collects output, flushes to the file, tracks the byte count.

class Sink {
 public:
  explicit Sink(FILE* f) : f_(f) { buf.reserve(kFlush + (1 << 20)); }
  std::string buf;
  uint64_t flushed = 0;
  uint64_t total() const { return flushed + buf.size(); }
  bool maybe_flush() {
    if (buf.size() < kFlush) return true;
    return flush();
  }
  bool flush() {
    if (!buf.empty() && std::fwrite(buf.data(), 1, buf.size(), f_) != buf.size()) return false;
    flushed += buf.size();
    buf.clear();
    return true;
  }

 private:
  static constexpr size_t kFlush = 8u << 20;
  FILE* f_;
};

// Fills `s` with exactly n bytes of ASCII words separated by spaces (the last one cut to fit).
void put_exact_words(std::string& s, Rng& rng, const Vocab& v, uint64_t n) {
  bool first = true;
  while (n > 0) {
    if (!first) {
      s.push_back(' ');
      if (--n == 0) break;
    }
    first = false;
    std::string_view w = v.word(v.pick(rng) % 300);  // the head of the English list: ASCII
    if (w.size() > n) w = w.substr(0, n);
    s.append(w);
    n -= w.size();
  }
  if (!s.empty() && s.back() == ' ') s.back() = 'a';
}

// ---------------------------------------------------------------------------------------------
// Wikidata.

class WikidataGen {
 public:
  WikidataGen(const Model& m, uint64_t seed) : m_(m), rng_(seed ^ 0x5749'4b49'4441'5441ULL) {
    build_references();
    build_descriptions();
  }

  // Appends one entity (no trailing comma or newline). small: a category-like entity.
  void entity(std::string& s, bool small) {
    qid_ += 1 + rng_.below(small ? 2 : 40);
    const uint32_t r = rng_.below(100);
    Kind kind = small                   ? (r < 70 ? kCategory : kDisambig)
                : r < 36                ? kArticle
                : r < 50                ? kHuman
                : r < 58                ? kTaxon
                : r < 68                ? kPlace
                : r < 80                ? kCategory
                : r < 84                ? kDisambig
                                        : kWork;
    cur_ = &s;
    build_entity(kind);
  }

  // The last entity: exactly n bytes (n >= min_filler()).
  void filler(std::string& s, uint64_t n) {
    qid_ += 1;
    const size_t start = s.size();
    s.append(R"({"type":"item","id":"Q)");
    put_u64(s, qid_);
    s.append(R"(","labels":{"en":{"language":"en","value":")");
    const std::string tail = R"("}},"descriptions":{},"aliases":{},"claims":{},"sitelinks":{}})";
    const uint64_t used = s.size() - start + tail.size();
    put_exact_words(s, rng_, m_.en, n - used);
    s.append(tail);
  }
  static uint64_t min_filler() { return 160; }

 private:
  enum Kind { kArticle, kHuman, kTaxon, kPlace, kCategory, kDisambig, kWork, kKindCount };

  struct Reference {
    std::string json;  // {"hash":"...","snaks":{...},"snaks-order":[...]}
  };

  // --- small JSON pieces ----------------------------------------------------------------------
  std::string& o() { return *cur_; }
  void put_hash40(uint64_t key) {
    uint64_t x = key;
    for (int i = 0; i < 3; ++i) put_hex(o(), splitmix64(x), i == 2 ? 8 : 16, false);
  }
  void put_guid() {
    o().append(",\"id\":\"Q");
    put_u64(o(), qid_);
    o().push_back('$');
    const uint64_t a = rng_.next(), b = rng_.next();
    const bool upper = (a & 3) != 0;
    put_hex(o(), a >> 32, 8, upper);
    o().push_back('-');
    put_hex(o(), (a >> 16) & 0xffff, 4, upper);
    o().push_back('-');
    put_hex(o(), 0x4000 | (a & 0x0fff), 4, upper);
    o().push_back('-');
    put_hex(o(), 0x8000 | (b >> 50), 4, upper);
    o().push_back('-');
    put_hex(o(), b & 0xffffffffffffULL, 12, upper);
    o().push_back('"');
  }

  // "datavalue":{...},"datatype":"..." for the value kinds.
  void dv_item(uint64_t q) {
    o().append(R"("datavalue":{"value":{"entity-type":"item","numeric-id":)");
    put_u64(o(), q);
    o().append(R"(,"id":"Q)");
    put_u64(o(), q);
    o().append(R"("},"type":"wikibase-entityid"},"datatype":"wikibase-item")");
  }
  void dv_string_begin() { o().append(R"("datavalue":{"value":")"); }
  void dv_string_end(const char* datatype) {
    o().append(R"(","type":"string"},"datatype":")");
    o().append(datatype);
    o().push_back('"');
  }
  void dv_time(uint32_t year, uint32_t month, uint32_t day, uint32_t precision) {
    o().append(R"("datavalue":{"value":{"time":"+)");
    put_padded(o(), year, 4);
    o().push_back('-');
    put_padded(o(), precision >= 10 ? month : 0, 2);
    o().push_back('-');
    put_padded(o(), precision >= 11 ? day : 0, 2);
    o().append(R"(T00:00:00Z","timezone":0,"before":0,"after":0,"precision":)");
    put_u64(o(), precision);
    o().append(R"(,"calendarmodel":"http:\/\/www.wikidata.org\/entity\/Q1985727"},"type":"time"},"datatype":"time")");
  }
  void dv_random_time(uint32_t lo_year, uint32_t hi_year) {
    const uint32_t p = rng_.below(100);
    // One draw per statement: argument evaluation order is unspecified, and the output must not
    // depend on the compiler.
    const uint32_t year = rng_.range(lo_year, hi_year);
    const uint32_t month = rng_.range(1, 12);
    const uint32_t day = rng_.range(1, 28);
    dv_time(year, month, day, p < 70 ? 11 : p < 85 ? 10 : 9);
  }
  void dv_quantity(uint64_t amount, const char* unit_qid) {
    o().append(R"("datavalue":{"value":{"amount":"+)");
    put_u64(o(), amount);
    o().append(R"(","unit":")");
    if (unit_qid) {
      o().append(R"(http:\/\/www.wikidata.org\/entity\/)");
      o().append(unit_qid);
    } else {
      o().push_back('1');
    }
    o().append(R"("},"type":"quantity"},"datatype":"quantity")");
  }
  void put_decimal(int64_t micro) {  // micro-units as a decimal with up to 6 places
    if (micro < 0) {
      o().push_back('-');
      micro = -micro;
    }
    put_u64(o(), static_cast<uint64_t>(micro) / 1000000);
    const uint64_t frac = static_cast<uint64_t>(micro) % 1000000;
    if (frac) {
      std::string tmp;
      put_padded(tmp, frac, 6);
      while (tmp.back() == '0') tmp.pop_back();
      o().push_back('.');
      o().append(tmp);
    }
  }
  void dv_coordinate() {
    o().append(R"("datavalue":{"value":{"latitude":)");
    put_decimal(static_cast<int64_t>(rng_.below(140000000)) - 60000000);
    o().append(R"(,"longitude":)");
    put_decimal(static_cast<int64_t>(rng_.below(360000000)) - 180000000);
    static const char* const kPrecision[] = {"0.00027777777777778", "1.0e-5", "0.0001", "0.016666666666667", "1.0e-6"};
    o().append(R"(,"altitude":null,"precision":)");
    o().append(kPrecision[rng_.below(5)]);
    o().append(R"(,"globe":"http:\/\/www.wikidata.org\/entity\/Q2"},"type":"globecoordinate"},"datatype":"globe-coordinate")");
  }
  void dv_monolingual(const std::string& text, const char* lang) {
    o().append(R"("datavalue":{"value":{"text":")");
    o().append(text);
    o().append(R"(","language":")");
    o().append(lang);
    o().append(R"("},"type":"monolingualtext"},"datatype":"monolingualtext")");
  }

  // --- statements -----------------------------------------------------------------------------
  // A claim list: "P31":[ stmt, stmt ]. Each statement body is produced by `value`.
  template <class F>
  void claim(const char* pid, uint32_t count, F&& value, uint32_t ref_percent = 60, bool qual_ordinal = false) {
    if (!first_claim_) o().push_back(',');
    first_claim_ = false;
    o().push_back('"');
    o().append(pid);
    o().append("\":[");
    for (uint32_t i = 0; i < count; ++i) {
      if (i) o().push_back(',');
      o().append(R"({"mainsnak":{"snaktype":"value","property":")");
      o().append(pid);
      o().append("\",");
      value(i);
      o().append(R"(},"type":"statement")");
      if (qual_ordinal) {
        o().append(R"(,"qualifiers":{"P1545":[{"snaktype":"value","property":"P1545","hash":")");
        put_hash40(0x1545'0000'0000ULL + i);
        o().append(R"(","datavalue":{"value":")");
        put_u64(o(), i + 1);
        o().append(R"(","type":"string"},"datatype":"string"}]},"qualifiers-order":["P1545"])");
      }
      put_guid();
      o().append(R"(,"rank":")");
      o().append(rng_.percent(97) ? "normal" : rng_.percent(70) ? "preferred" : "deprecated");
      o().push_back('"');
      if (rng_.percent(ref_percent)) {
        o().append(R"(,"references":[)");
        const uint32_t nref = rng_.tail(1, 15, 4);
        for (uint32_t k = 0; k < nref; ++k) {
          if (k) o().push_back(',');
          if (rng_.percent(fresh_ref_percent_)) {
            reference(rng_, rng_.next());  // one of a kind, with its own hash
          } else {
            o().append(refs_[ref_zipf_.pick(rng_)].json);
          }
        }
        o().push_back(']');
      }
      o().push_back('}');
    }
    o().push_back(']');
  }

  // Items referenced from claims come from fixed pools (countries, occupations, journals...)
  // so the same ids recur with a Zipf law, as they do in the real graph.
  uint64_t pool_qid(uint32_t pool, uint32_t size, uint32_t q = 3) {
    const Zipf& z = pool_zipf(size, q);
    return 1 + mix(pool, z.pick(rng_)) % (pool < 5 ? 2000000 : 120000000);
  }
  const Zipf& pool_zipf(uint32_t size, uint32_t q) {
    for (auto& [n, qq, z] : pools_)
      if (n == size && qq == q) return z;
    pools_.push_back({size, q, Zipf(size, q, 24)});
    return std::get<2>(pools_.back());
  }
  uint64_t any_qid() { return 1 + (rng_.next() >> 40) % 125000000; }

  // --- labels, descriptions, aliases, sitelinks -------------------------------------------
  void put_label_map(const char* key, const std::vector<std::pair<LangId, std::string>>& values) {
    o().append(",\"");
    o().append(key);
    o().append("\":{");
    bool first = true;
    for (const auto& [lang, text] : values) {
      if (!first) o().push_back(',');
      first = false;
      o().push_back('"');
      o().append(m_.langs[lang].code);
      o().append(R"(":{"language":")");
      o().append(m_.langs[lang].code);
      o().append(R"(","value":")");
      o().append(text);
      o().append("\"}");
    }
    o().push_back('}');
  }

  // Which languages this entity has labels in (English nearly always).
  void choose_languages(std::vector<LangId>& out, uint32_t richness) {
    out.clear();
    for (uint32_t l = 0; l < kLangCount; ++l) {
      const uint32_t w = l == kEn ? 1000 : m_.langs[l].weight * richness / 100;
      if (rng_.permille(w > 1000 ? 1000 : w)) out.push_back(static_cast<LangId>(l));
    }
    if (out.empty()) out.push_back(kEn);
  }

  void name_in(std::string& out, LangId lang, const std::string& latin_name, uint64_t name_key) {
    const Lang& L = m_.langs[lang];
    if (L.latin) {
      out = latin_name;
    } else if (lang == kRu || lang == kUk || lang == kAr || lang == kFa) {
      out.clear();
      transliterate(out, latin_name, lang);
    } else {
      out.clear();
      out.append(L.vocab->word(L.vocab->pick_hash(name_key)));
      if (lang == kJa) out.append("・");
      if (lang != kZh) out.append(L.vocab->word(L.vocab->pick_hash(mix(name_key, 7))));
    }
  }

  void build_descriptions() {
    // A pool of short descriptions per (kind, language), reused with a Zipf law: real Wikidata
    // descriptions are mostly a few thousand recurring phrases ("scientific article", ...).
    for (uint32_t k = 0; k < kKindCount; ++k) {
      for (uint32_t l = 0; l < kLangCount; ++l) {
        auto& pool = desc_[k][l];
        Rng rng(mix(1000 + k, l));
        const uint32_t n = k == kArticle ? 8 : 300;
        for (uint32_t i = 0; i < n; ++i) {
          std::string d;
          put_words(d, rng, *m_.langs[l].vocab, m_.langs[l].spaced, rng.range(1, k == kArticle ? 3 : 5));
          pool.push_back(std::move(d));
        }
      }
    }
    desc_zipf_ = Zipf(300, 2, 64, 12);
  }
  const std::string& description(Kind k, LangId l) {
    auto& pool = desc_[k][l];
    return pool[k == kArticle ? rng_.below(static_cast<uint32_t>(pool.size())) : desc_zipf_.pick(rng_)];
  }

  // One reference object, {"hash":...,"snaks":{...},"snaks-order":[...]}, appended to o().
  void reference(Rng& rng, uint64_t hash_key) {
    static const uint64_t kWikis[] = {328, 48183, 8447, 11920, 206855, 199864, 10000, 20433, 48952, 54919};
    std::string& s = o();
    s.append(R"({"hash":")");
    put_hash40(hash_key);
    s.append(R"(","snaks":{)");
    const uint32_t kind = rng.below(100);
    if (kind < 35) {
      s.append(R"("P143":[{"snaktype":"value","property":"P143",)");
      dv_item(kWikis[rng.below(10)]);
      s.append(R"(}]},"snaks-order":["P143"]})");
      return;
    }
    s.append(R"("P248":[{"snaktype":"value","property":"P248",)");
    dv_item(1 + mix(77, rng.below(600)) % 100000000);
    s.append("}]");
    const bool url = kind >= 70;
    if (url) {
      s.append(R"(,"P854":[{"snaktype":"value","property":"P854",)");
      dv_string_begin();
      s.append("https:\\/\\/");
      put_words(s, rng, m_.en, false, rng.range(1, 2));
      s.append(rng.percent(50) ? ".org\\/" : ".com\\/");
      put_words(s, rng, m_.en, false, 1);
      s.append("\\/");
      put_u64(s, rng.below(1000000));
      dv_string_end("url");
      s.append("}]");
    }
    s.append(R"(,"P813":[{"snaktype":"value","property":"P813",)");
    s.append(R"("datavalue":{"value":{"time":"+20)");
    put_padded(s, rng.range(12, 24), 2);
    s.push_back('-');
    put_padded(s, rng.range(1, 12), 2);
    s.push_back('-');
    put_padded(s, rng.range(1, 28), 2);
    s.append(
        R"(T00:00:00Z","timezone":0,"before":0,"after":0,"precision":11,"calendarmodel":"http:\/\/www.wikidata.org\/entity\/Q1985727"},"type":"time"},"datatype":"time"}])");
    s.append(url ? R"(},"snaks-order":["P248","P854","P813"]})" : R"(},"snaks-order":["P248","P813"]})");
  }

  void build_references() {
    // A fixed pool of references; the same reference (and hash) recurs across the dump.
    Rng rng(0x7265'6673ULL);
    std::string* saved = cur_;
    for (uint32_t i = 0; i < kRefPool; ++i) {
      std::string s;
      cur_ = &s;
      reference(rng, 0x7265'6600'0000ULL + i);
      refs_.push_back({std::move(s)});
    }
    cur_ = saved;
    ref_zipf_ = Zipf(kRefPool, 4, 16, 14);
  }
  static constexpr uint32_t kRefPool = 8192;

  void put_sitelinks(const std::vector<LangId>& langs, const std::vector<std::string>& titles, const char* prefix) {
    o().append(R"(,"sitelinks":{)");
    bool first = true;
    for (size_t i = 0; i < langs.size(); ++i) {
      if (!first) o().push_back(',');
      first = false;
      const char* code = m_.langs[langs[i]].code;
      o().push_back('"');
      o().append(code);
      o().append(R"(wiki":{"site":")");
      o().append(code);
      o().append(R"(wiki","title":")");
      if (prefix) o().append(prefix);
      o().append(titles[i]);
      o().append(R"(","badges":[]})");
    }
    if (rng_.percent(25)) {
      if (!first) o().push_back(',');
      o().append(R"("commonswiki":{"site":"commonswiki","title":"Category:)");
      o().append(titles.empty() ? std::string("Item") : titles[0]);
      o().append(R"(","badges":[]})");
    }
    o().push_back('}');
  }

  std::string title_words(Rng& rng, uint32_t n) {
    std::string t;
    put_words(t, rng, m_.en, true, n);
    capitalize_at(t, 0);
    for (size_t i = 1; i < t.size(); ++i)
      if (t[i - 1] == ' ' && t[i] >= 'a' && t[i] <= 'z' && rng.percent(60)) t[i] = static_cast<char>(t[i] - 32);
    return t;
  }

  void build_entity(Kind kind) {
    std::string& s = o();
    s.append(R"({"type":"item","id":"Q)");
    put_u64(s, qid_);
    s.push_back('"');

    // Names and labels.
    std::string en_label;
    std::vector<LangId> langs;
    std::vector<std::pair<LangId, std::string>> labels, descs, aliases;
    std::string tmp;
    uint64_t name_key = rng_.next();
    switch (kind) {
      case kHuman: {
        const uint32_t g = m_.given.pick(rng_), f = m_.family.pick(rng_);
        en_label = std::string(m_.given.word(g)) + " " + std::string(m_.family.word(f));
        capitalize_at(en_label, 0);
        capitalize_at(en_label, m_.given.word(g).size() + 1);
        name_key = mix(g, f);
        choose_languages(langs, rng_.percent(25) ? 300 : 150);
        break;
      }
      case kArticle: {
        put_sentence(en_label, rng_, m_.langs[kEn], rng_.range(5, 18));
        en_label.pop_back();
        langs = {kEn};
        if (rng_.percent(30)) langs.push_back(kNl);
        break;
      }
      case kTaxon: {
        en_label = m_.family.word(m_.family.pick(rng_));
        en_label += ' ';
        en_label += m_.en.random(rng_);
        capitalize_at(en_label, 0);
        choose_languages(langs, 40);
        break;
      }
      case kPlace: {
        en_label = std::string(m_.family.word(m_.family.pick(rng_)));
        if (rng_.percent(30)) en_label += rng_.percent(50) ? "ville" : "burg";
        capitalize_at(en_label, 0);
        choose_languages(langs, rng_.percent(20) ? 300 : 150);
        break;
      }
      case kCategory:
      case kDisambig:
      case kWork:
      case kKindCount: {
        Rng trng(rng_.next());
        en_label = title_words(trng, rng_.range(1, 4));
        choose_languages(langs, kind == kWork ? 150 : 200);
        break;
      }
    }
    for (LangId l : langs) {
      if (kind == kArticle || kind == kTaxon) {
        labels.emplace_back(l, en_label);
      } else if (kind == kCategory) {
        tmp = l == kEn ? "Category:" : l == kDe ? "Kategorie:" : l == kFr ? "Catégorie:" : "Category:";
        tmp += en_label;
        labels.emplace_back(l, tmp);
      } else {
        name_in(tmp, l, en_label, name_key);
        labels.emplace_back(l, tmp);
      }
      if (kind != kCategory && rng_.percent(kind == kArticle ? 95 : 70)) {
        std::string d = description(kind, l);
        if (kind == kArticle && l == kEn) {
          d += " published in ";
          put_u64(d, rng_.range(1950, 2024));
        } else if (kind == kHuman && l == kEn && rng_.percent(30)) {
          d += " (";
          put_u64(d, rng_.range(1850, 2005));
          d += rng_.percent(50) ? "–" : "-";
          put_u64(d, rng_.range(1900, 2024));
          d += ")";
        }
        descs.emplace_back(l, std::move(d));
      }
    }
    put_label_map("labels", labels);
    put_label_map("descriptions", descs);
    // Aliases: lists per language.
    s.append(R"(,"aliases":{)");
    if (kind == kHuman || kind == kPlace || kind == kWork) {
      bool first = true;
      for (LangId l : langs) {
        if (!rng_.percent(30)) continue;
        if (!first) s.push_back(',');
        first = false;
        s.push_back('"');
        s.append(m_.langs[l].code);
        s.append("\":[");
        const uint32_t n = rng_.tail(1, 30, 6);
        for (uint32_t i = 0; i < n; ++i) {
          if (i) s.push_back(',');
          s.append(R"({"language":")");
          s.append(m_.langs[l].code);
          s.append(R"(","value":")");
          if (kind == kHuman && m_.langs[l].latin) {
            s.append(en_label.substr(0, 1));
            s.append(". ");
            s.append(en_label.substr(en_label.find(' ') + 1));
          } else {
            put_words(s, rng_, *m_.langs[l].vocab, m_.langs[l].spaced, rng_.range(1, 3));
          }
          s.append("\"}");
        }
        s.push_back(']');
      }
    }
    s.push_back('}');

    // Claims.
    s.append(R"(,"claims":{)");
    first_claim_ = true;
    const auto item = [&](uint32_t pool, uint32_t size) { return [this, pool, size](uint32_t) { dv_item(pool_qid(pool, size)); }; };
    const auto fixed = [&](uint64_t q) { return [this, q](uint32_t) { dv_item(q); }; };
    const auto digits = [&](const char* type, uint32_t lo, uint32_t hi, const char* prefix = "") {
      return [this, type, lo, hi, prefix](uint32_t) {
        dv_string_begin();
        o().append(prefix);
        put_u64(o(), rng_.range(lo, hi));
        dv_string_end(type);
      };
    };
    switch (kind) {
      case kArticle: {
        claim("P31", 1, fixed(13442814), 20);
        claim("P1476", 1, [&](uint32_t) { dv_monolingual(en_label, "en"); }, 70);
        const uint32_t named_authors = rng_.tail(0, 70, 40);
        if (named_authors) claim("P50", named_authors, item(5, 2000000), 50, true);
        const uint32_t string_authors = rng_.tail(1, 75, 60);
        claim("P2093", string_authors, [&](uint32_t) {
          dv_string_begin();
          std::string_view g = m_.given.random(rng_);
          o().push_back(static_cast<char>(g[0] - 32));
          if (rng_.percent(50)) {
            o().append(g.substr(1));
          } else {
            o().push_back('.');
          }
          o().push_back(' ');
          const size_t at = o().size();
          o().append(m_.family.random(rng_));
          capitalize_at(o(), at);
          dv_string_end("string");
        }, 70, true);
        claim("P577", 1, [&](uint32_t) { dv_random_time(1950, 2024); }, 80);
        claim("P1433", 1, item(6, 30000), 80);
        if (rng_.percent(80)) claim("P478", 1, digits("string", 1, 400), 80);
        if (rng_.percent(60)) claim("P433", 1, digits("string", 1, 24), 80);
        if (rng_.percent(70)) claim("P304", 1, [&](uint32_t) {
          dv_string_begin();
          const uint32_t p = rng_.range(1, 3000);
          put_u64(o(), p);
          o().push_back('-');
          put_u64(o(), p + rng_.range(1, 30));
          dv_string_end("string");
        }, 80);
        claim("P356", 1, [&](uint32_t) {
          dv_string_begin();
          o().append("10.");
          put_u64(o(), 1000 + mix(9, rng_.below(3000)) % 9000);
          o().push_back('/');
          const size_t at = o().size();
          put_words(o(), rng_, m_.en, false, rng_.range(1, 2));
          for (size_t i = at; i < o().size(); ++i)
            if (o()[i] >= 'a' && o()[i] <= 'z') o()[i] = static_cast<char>(o()[i] - 32);
          o().push_back('.');
          put_u64(o(), rng_.below(100000));
          dv_string_end("external-id");
        }, 80);
        if (rng_.percent(70)) claim("P698", 1, digits("external-id", 1000000, 38000000), 80);
        if (rng_.percent(30)) claim("P932", 1, digits("external-id", 100000, 10000000), 80);
        if (rng_.percent(50)) claim("P921", rng_.tail(1, 50, 10), item(7, 200000), 30);
        const uint32_t cites = rng_.percent(20) ? rng_.tail(1, 95, 200) : 0;
        if (cites) claim("P2860", cites, [&](uint32_t) { dv_item(any_qid()); }, 90);
        if (rng_.percent(40)) claim("P407", 1, fixed(1860), 10);
        if (rng_.percent(45)) claim("P6179", 1, digits("external-id", 1000000000, 2100000000, "pub."), 80);
        if (rng_.percent(15)) claim("P818", 1, [&](uint32_t) {
          dv_string_begin();
          put_padded(o(), rng_.range(7, 24), 2);
          put_padded(o(), rng_.range(1, 12), 2);
          o().push_back('.');
          put_padded(o(), rng_.below(100000), 5);
          dv_string_end("external-id");
        }, 80);
        if (rng_.percent(25)) claim("P5875", 1, [&](uint32_t) {  // ResearchGate publication ID
          dv_string_begin();
          put_u64(o(), rng_.range(200000000, 380000000));
          o().push_back('_');
          const size_t at = o().size();
          o().append(en_label.substr(0, 60));
          for (size_t i = at; i < o().size(); ++i)
            if (o()[i] == ' ') o()[i] = '_';
          dv_string_end("external-id");
        }, 40);
        break;
      }
      case kHuman: {
        claim("P31", 1, fixed(5), 40);
        claim("P21", 1, fixed(rng_.percent(75) ? 6581097 : 6581072), 50);
        claim("P27", rng_.tail(1, 10, 3), item(1, 200), 50);
        const uint32_t born = rng_.range(1700, 2005);
        claim("P569", 1, [&, born](uint32_t) {
          const uint32_t month = rng_.range(1, 12);
          const uint32_t day = rng_.range(1, 28);
          dv_time(born, month, day, rng_.percent(80) ? 11 : 9);
        }, 70);
        if (born < 1950 || rng_.percent(10)) claim("P570", 1, [&, born](uint32_t) {
          const uint32_t year = born + rng_.range(20, 95);
          const uint32_t month = rng_.range(1, 12);
          const uint32_t day = rng_.range(1, 28);
          dv_time(year, month, day, 11);
        }, 70);
        if (rng_.percent(60)) claim("P19", 1, item(2, 300000), 50);
        if (rng_.percent(30)) claim("P20", 1, item(2, 300000), 50);
        claim("P106", rng_.tail(1, 40, 8), item(3, 800), 40);
        if (rng_.percent(50)) claim("P735", 1, item(8, 40000), 20);
        if (rng_.percent(50)) claim("P734", 1, item(9, 200000), 20);
        if (rng_.percent(40)) claim("P1412", rng_.tail(1, 20, 4), item(4, 300), 30);
        if (rng_.percent(40)) claim("P69", rng_.tail(1, 30, 4), item(10, 20000), 40);
        if (rng_.percent(50)) claim("P214", 1, digits("external-id", 1000000, 999999999), 60);
        if (rng_.percent(40)) claim("P213", 1, [&](uint32_t) {
          dv_string_begin();
          o().append("0000 000");
          put_u64(o(), rng_.below(10));
          o().push_back(' ');
          put_padded(o(), rng_.below(10000), 4);
          o().push_back(' ');
          put_padded(o(), rng_.below(10000), 4);
          dv_string_end("external-id");
        }, 60);
        if (rng_.percent(35)) claim("P227", 1, digits("external-id", 100000000, 139999999), 60);
        if (rng_.percent(30)) claim("P244", 1, digits("external-id", 79000000, 2020000000, "n"), 60);
        if (rng_.percent(30)) claim("P646", 1, [&](uint32_t) {
          dv_string_begin();
          o().append("\\/m\\/0");
          put_words(o(), rng_, m_.en, false, 1);
          dv_string_end("external-id");
        }, 60);
        if (rng_.percent(30)) claim("P18", 1, [&](uint32_t) {
          dv_string_begin();
          o().append(en_label);
          o().append(rng_.percent(80) ? " (" : " in ");
          put_u64(o(), rng_.range(1900, 2024));
          o().append(rng_.percent(80) ? ").jpg" : ".JPG");
          dv_string_end("commonsMedia");
        }, 10);
        if (rng_.percent(15)) claim("P39", rng_.tail(1, 50, 10), item(11, 5000), 80);
        if (rng_.percent(10)) claim("P166", rng_.tail(1, 50, 10), item(12, 10000), 80);
        if (rng_.percent(30)) claim("P268", 1, [&](uint32_t) {
          dv_string_begin();
          put_u64(o(), rng_.range(10000000, 17999999));
          o().push_back("0123456789bcdfghjkmnpqrstvwxz"[rng_.below(29)]);
          dv_string_end("external-id");
        }, 60);
        if (rng_.percent(25)) claim("P269", 1, digits("external-id", 26000000, 270000000, "0"), 60);
        if (rng_.percent(25)) claim("P1006", 1, digits("external-id", 68000000, 423000000), 60);
        if (rng_.percent(20)) claim("P2163", 1, digits("external-id", 1000000, 2000000), 60);
        if (rng_.percent(15)) claim("P2002", 1, [&](uint32_t) {  // an account name
          dv_string_begin();
          o().append(m_.given.random(rng_));
          if (rng_.percent(60)) put_u64(o(), rng_.below(10000));
          dv_string_end("external-id");
        }, 30);
        break;
      }
      case kTaxon: {
        claim("P31", 1, fixed(16521), 30);
        claim("P225", 1, [&](uint32_t) {
          dv_string_begin();
          o().append(en_label);
          dv_string_end("string");
        }, 90);
        claim("P105", 1, fixed(rng_.percent(80) ? 7432 : 34740), 60);
        claim("P171", 1, item(13, 500000), 80);
        if (rng_.percent(70)) claim("P685", 1, digits("external-id", 1000, 3000000), 80);
        if (rng_.percent(70)) claim("P846", 1, digits("external-id", 1000000, 12000000), 80);
        if (rng_.percent(40)) claim("P830", 1, digits("external-id", 10000, 70000000), 80);
        if (rng_.percent(30)) claim("P1843", rng_.tail(1, 60, 8), [&](uint32_t) {
          const LangId l = langs[rng_.below(static_cast<uint32_t>(langs.size()))];
          std::string t;
          put_words(t, rng_, *m_.langs[l].vocab, m_.langs[l].spaced, rng_.range(1, 3));
          dv_monolingual(t, m_.langs[l].code);
        }, 60);
        break;
      }
      case kPlace: {
        claim("P31", rng_.tail(1, 20, 3), item(14, 300), 30);
        claim("P17", 1, item(1, 200), 40);
        claim("P131", rng_.tail(1, 20, 3), item(2, 300000), 40);
        claim("P625", 1, [&](uint32_t) { dv_coordinate(); }, 60);
        if (rng_.percent(60)) {
          claim("P1082", rng_.tail(1, 50, 12), [&](uint32_t) { dv_quantity(rng_.range(10, 2000000), nullptr); }, 80);
        }
        if (rng_.percent(40)) claim("P2046", 1, [&](uint32_t) { dv_quantity(rng_.range(1, 5000), "Q712226"); }, 50);
        if (rng_.percent(40)) claim("P281", 1, digits("string", 10000, 99999), 40);
        if (rng_.percent(30)) claim("P421", 1, item(15, 40), 20);
        if (rng_.percent(50)) claim("P1566", 1, digits("external-id", 100000, 12000000), 60);
        if (rng_.percent(20)) claim("P856", 1, [&](uint32_t) {
          dv_string_begin();
          o().append("https:\\/\\/www.");
          for (char c : en_label) o().push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c);
          o().append(rng_.percent(50) ? ".de\\/" : ".gov\\/");
          dv_string_end("url");
        }, 20);
        break;
      }
      case kCategory:
        claim("P31", 1, fixed(4167836), 5);
        if (rng_.percent(40)) claim("P301", 1, [&](uint32_t) { dv_item(any_qid()); }, 5);
        break;
      case kDisambig:
        claim("P31", 1, fixed(4167410), 5);
        break;
      case kWork:
      case kKindCount: {
        claim("P31", 1, item(16, 400), 40);
        claim("P577", rng_.tail(1, 30, 5), [&](uint32_t) { dv_random_time(1900, 2024); }, 60);
        if (rng_.percent(70)) claim("P495", 1, item(1, 200), 50);
        if (rng_.percent(60)) claim("P136", rng_.tail(1, 40, 5), item(17, 1500), 40);
        if (rng_.percent(40)) claim("P57", 1, item(5, 2000000), 50);
        if (rng_.percent(40)) claim("P161", rng_.tail(1, 85, 40), item(5, 2000000), 30);
        if (rng_.percent(40)) claim("P2047", 1, [&](uint32_t) { dv_quantity(rng_.range(3, 200), "Q7727"); }, 50);
        if (rng_.percent(40)) claim("P345", 1, digits("external-id", 1000000, 29999999, "tt"), 60);
        if (rng_.percent(30)) claim("P1476", 1, [&](uint32_t) { dv_monolingual(en_label, "en"); }, 40);
        break;
      }
    }
    s.push_back('}');

    // Sitelinks.
    std::vector<LangId> wikis;
    std::vector<std::string> titles;
    const uint32_t sitelink_percent = kind == kArticle ? 0 : kind == kHuman || kind == kPlace ? 70 : 60;
    if (rng_.percent(sitelink_percent)) {
      for (size_t i = 0; i < labels.size(); ++i) {
        if (i == 0 || rng_.percent(70)) {
          wikis.push_back(labels[i].first);
          titles.push_back(labels[i].second);
        }
      }
    }
    if (wikis.empty()) {
      s.append(R"(,"sitelinks":{})");
    } else {
      put_sitelinks(wikis, titles, nullptr);
    }
    s.append(R"(,"lastrevid":)");
    put_u64(s, 1000000000 + rng_.below(1400000000));
    s.push_back('}');
  }

  const Model& m_;
  Rng rng_;
  uint64_t qid_ = 0;
  std::string* cur_ = nullptr;
  bool first_claim_ = true;
  uint32_t fresh_ref_percent_ = 75;
  std::vector<Reference> refs_;
  Zipf ref_zipf_;
  std::array<std::array<std::vector<std::string>, kLangCount>, kKindCount> desc_;
  Zipf desc_zipf_;
  std::vector<std::tuple<uint32_t, uint32_t, Zipf>> pools_;
};

bool write_wikidata(const Model& m, uint64_t seed, uint64_t size, Sink& out) {
  WikidataGen gen(m, seed);
  const std::string_view head = "[\n", foot = "\n]\n";
  if (size < head.size() + WikidataGen::min_filler() + foot.size()) {
    // Too small for an entity: an empty array padded with whitespace (cut if even that is too big).
    std::string tiny = "[\n";
    while (tiny.size() + 2 < size) tiny.push_back(' ');
    tiny += "]\n";
    out.buf.append(tiny.substr(0, size));
    return out.flush();
  }
  out.buf.append(head);
  // Regular entities while they fit, then small ones, then one padded entity that ends exactly.
  const uint64_t reserve = WikidataGen::min_filler() + foot.size();
  bool small = false;
  uint32_t misses = 0;
  while (misses < 16) {
    const size_t mark = out.buf.size();
    gen.entity(out.buf, small);
    out.buf.append(",\n");
    if (out.total() + reserve > size) {
      out.buf.resize(mark);
      small = true;
      ++misses;
      continue;
    }
    if (!out.maybe_flush()) return false;
  }
  gen.filler(out.buf, size - out.total() - foot.size());
  out.buf.append(foot);
  return out.flush();
}

// ---------------------------------------------------------------------------------------------
// Wikipedia.

class WikipediaGen {
 public:
  WikipediaGen(const Model& m, uint64_t seed) : m_(m), rng_(seed ^ 0x5749'4b49'5045'4449ULL) {}

  static std::string header() {
    std::string h =
        R"(<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.mediawiki.org/xml/export-0.11/ http://www.mediawiki.org/xml/export-0.11.xsd" version="0.11" xml:lang="en">
  <siteinfo>
    <sitename>Wikipedia</sitename>
    <dbname>enwiki</dbname>
    <base>https://en.wikipedia.org/wiki/Main_Page</base>
    <generator>MediaWiki 1.43.0-wmf.1</generator>
    <case>first-letter</case>
    <namespaces>
)";
    static const std::pair<int, const char*> kNs[] = {
        {-2, "Media"},     {-1, "Special"},        {0, ""},           {1, "Talk"},           {2, "User"},
        {3, "User talk"},  {4, "Wikipedia"},       {5, "Wikipedia talk"}, {6, "File"},        {7, "File talk"},
        {8, "MediaWiki"},  {9, "MediaWiki talk"},  {10, "Template"},  {11, "Template talk"}, {12, "Help"},
        {13, "Help talk"}, {14, "Category"},       {15, "Category talk"}, {100, "Portal"},    {101, "Portal talk"},
        {118, "Draft"},    {119, "Draft talk"},    {710, "TimedText"}, {711, "TimedText talk"}, {828, "Module"},
        {829, "Module talk"}};
    for (const auto& [key, name] : kNs) {
      h += "      <namespace key=\"" + std::to_string(key) + "\" case=\"first-letter\"";
      h += *name ? std::string(">") + name + "</namespace>\n" : std::string(" />\n");
    }
    h += "    </namespaces>\n  </siteinfo>\n";
    return h;
  }
  static std::string_view footer() { return "</mediawiki>\n"; }

  // One <page> element, with its indentation and final newline. small: a redirect.
  void page(std::string& s, bool small) {
    page_id_ += 1 + rng_.below(small ? 2 : 12);
    ++page_index_;
    const bool redirect = small || rng_.percent(28);
    title(title_, page_index_);
    raw_.clear();
    std::string redirect_target;
    if (redirect) {
      title(redirect_target, link_target());
      raw_ += rng_.percent(80) ? "#REDIRECT [[" : "#redirect [[";
      raw_ += redirect_target;
      raw_ += "]]";
      if (rng_.percent(60)) {
        raw_ += "\n\n{{Redirect category shell|\n";
        static const char* const kR[] = {"{{R from move}}", "{{R from alternative name}}", "{{R from other capitalisation}}",
                                         "{{R to section}}", "{{R from short name}}", "{{R from misspelling}}"};
        for (uint32_t i = 0, n = rng_.range(1, 3); i < n; ++i) {
          raw_ += kR[rng_.below(6)];
          raw_ += '\n';
        }
        raw_ += "}}";
      }
    } else {
      article(raw_);
    }
    open_page(s, redirect ? &redirect_target : nullptr);
    put_text(s, raw_);
    close_page(s);
  }

  // The last page: exactly n bytes (n >= min_filler()).
  void filler(std::string& s, uint64_t n) {
    page_id_ += 1;
    ++page_index_;
    title(title_, page_index_);
    const size_t start = s.size();
    open_page(s, nullptr);
    const std::string close = "</text>\n      <sha1>0000000000000000000000000000000</sha1>\n    </revision>\n  </page>\n";
    s.append(R"(      <text bytes=")");
    // fixed + digits(len) + len == remaining
    const uint64_t fixed = s.size() - start + std::string_view(R"(" xml:space="preserve">)").size() + close.size();
    uint64_t len = 0;
    for (uint64_t d = 1; d < 20; ++d) {
      if (n < fixed + d) break;
      const uint64_t l = n - fixed - d;
      if (digits10(l) == d) {
        len = l;
        break;
      }
    }
    put_u64(s, len);
    s.append(R"(" xml:space="preserve">)");
    put_exact_words(s, rng_, m_.en, len);
    s.append(close);
    if (s.size() - start != n) std::fprintf(stderr, "mibz2-corpus-gen: internal error: filler page size\n");
  }
  static uint64_t min_filler() { return 900; }

 private:
  // Titles of pages are a pure function of their index, so links can point at real pages.
  void title(std::string& out, uint64_t index) {
    out.clear();
    Rng r(mix(0x7469'746c'65ULL, index));
    const uint32_t kind = r.below(100);
    if (kind < 30) {
      out.append(m_.given.word(m_.given.pick(r)));
      capitalize_at(out, 0);
      out.push_back(' ');
      const size_t at = out.size();
      out.append(m_.family.word(m_.family.pick(r)));
      capitalize_at(out, at);
    } else {
      put_words(out, r, m_.en, true, r.range(1, 4));
      capitalize_at(out, 0);
      if (kind < 45) {
        out.append(" (");
        static const char* const kQual[] = {"film", "album", "band", "song", "river", "village", "novel", "footballer", "politician", "surname"};
        out.append(kQual[r.below(10)]);
        out.push_back(')');
      } else if (kind < 55) {
        for (size_t i = 1; i < out.size(); ++i)
          if (out[i - 1] == ' ') capitalize_at(out, i);
      }
    }
  }
  uint64_t link_target() { return 1 + (link_zipf_.pick(rng_) * 7919ULL) % 4000000; }

  void open_page(std::string& s, const std::string* redirect) {
    s.append("  <page>\n    <title>");
    escape(s, title_);
    s.append("</title>\n    <ns>0</ns>\n    <id>");
    put_u64(s, page_id_);
    s.append("</id>\n");
    if (redirect) {
      s.append("    <redirect title=\"");
      escape(s, *redirect);
      s.append("\" />\n");
    }
    s.append("    <revision>\n      <id>");
    const uint64_t rev = 900000000 + (page_id_ * 37) % 330000000 + rng_.below(1000);
    put_u64(s, rev);
    s.append("</id>\n");
    if (rng_.percent(95)) {
      s.append("      <parentid>");
      put_u64(s, rev - 1 - rng_.below(5000000));
      s.append("</parentid>\n");
    }
    s.append("      <timestamp>");
    put_u64(s, rng_.range(2005, 2024));
    s.push_back('-');
    put_padded(s, rng_.range(1, 12), 2);
    s.push_back('-');
    put_padded(s, rng_.range(1, 28), 2);
    s.push_back('T');
    put_padded(s, rng_.below(24), 2);
    s.push_back(':');
    put_padded(s, rng_.below(60), 2);
    s.push_back(':');
    put_padded(s, rng_.below(60), 2);
    s.append("Z</timestamp>\n      <contributor>\n");
    if (rng_.percent(90)) {
      const uint32_t user = user_zipf_.pick(rng_);
      s.append("        <username>");
      Rng ur(mix(0x75736572ULL, user));
      const size_t at = s.size();
      s.append(m_.given.word(m_.given.pick(ur)));
      capitalize_at(s, at);
      if (ur.percent(50)) s.append(m_.en.word(ur.below(2000)));
      if (ur.percent(40)) put_u64(s, ur.below(1000));
      if (ur.percent(15)) s.append("Bot");
      s.append("</username>\n        <id>");
      put_u64(s, 1 + mix(0x6964ULL, user) % 48000000);
      s.append("</id>\n");
    } else {
      s.append("        <ip>");
      put_u64(s, rng_.range(1, 223));
      for (int i = 0; i < 3; ++i) {
        s.push_back('.');
        put_u64(s, rng_.below(256));
      }
      s.append("</ip>\n");
    }
    s.append("      </contributor>\n");
    if (rng_.percent(85)) {
      s.append("      <comment>");
      static const char* const kComments[] = {
          "/* References */", "/* Early life */ ", "Reverted edits by", "Added citation", "copyedit", "fix typo",
          "[[WP:AWB|AWB]]: general fixes", "Rescuing 1 sources and tagging 0 as dead.) #IABot (v2.0.9.5",
          "Alter: title. Add: doi. | [[WP:UCB|Use this bot]]", "Importing Wikidata [[Wikipedia:Short description|short description]]",
          "/* Career */", "/* History */ expanded", "Removing link(s) to deleted page", "Added {{[[Template:Authority control|Authority control]]}}"};
      s.append(kComments[comment_zipf_.pick(rng_)]);
      if (rng_.percent(30)) {
        s.push_back(' ');
        put_words(s, rng_, m_.en, true, rng_.range(1, 6));
      }
      s.append("</comment>\n");
    }
    s.append("      <origin>");
    put_u64(s, rev);
    s.append("</origin>\n      <model>wikitext</model>\n      <format>text/x-wiki</format>\n");
  }

  void put_text(std::string& s, const std::string& raw) {
    s.append("      <text bytes=\"");
    put_u64(s, raw.size());
    s.append("\" sha1=\"");
    const size_t sha_at = s.size();
    static const char kB36[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    for (int i = 0; i < 31; ++i) s.push_back(kB36[rng_.below(36)]);
    const std::string sha = s.substr(sha_at, 31);
    s.append("\" xml:space=\"preserve\">");
    escape(s, raw);
    s.append("</text>\n      <sha1>");
    s.append(sha);
    s.append("</sha1>\n");
  }
  static void close_page(std::string& s) { s.append("    </revision>\n  </page>\n"); }

  static void escape(std::string& s, std::string_view raw) {
    // '"', '&', '<' and '>' are the only characters below 0x3f that need a look.
    size_t from = 0;
    const auto* p = reinterpret_cast<const unsigned char*>(raw.data());
    for (size_t i = 0; i < raw.size(); ++i) {
      const unsigned char c = p[i];
      if (c > '>' || ((0x5000004400000000ULL >> c) & 1) == 0) continue;
      s.append(raw.data() + from, i - from);
      s.append(c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : "&quot;");
      from = i + 1;
    }
    s.append(raw.data() + from, raw.size() - from);
  }

  // --- wikitext ---------------------------------------------------------------------------
  void link(std::string& t) {
    std::string target;
    // Articles keep linking the same related pages.
    title(target, rng_.percent(60) ? related_[rng_.below(static_cast<uint32_t>(related_.size()))] : link_target());
    t += "[[";
    t += target;
    if (rng_.percent(30)) {
      t += '|';
      put_words(t, rng_, m_.en, true, rng_.range(1, 3));
    }
    t += "]]";
  }

  void cite(std::string& t) {
    if (!ref_names_.empty() && rng_.percent(20)) {
      t += "<ref name=\"";
      t += ref_names_[rng_.below(static_cast<uint32_t>(ref_names_.size()))];
      t += "\" />";
      return;
    }
    t += "<ref";
    if (rng_.percent(30)) {
      std::string name;
      put_words(name, rng_, m_.en, false, 1);
      put_u64(name, rng_.below(100));
      t += " name=\"" + name + "\"";
      ref_names_.push_back(std::move(name));
    }
    t += ">";
    static const char* const kCite[] = {"cite web", "cite news", "cite book", "cite journal", "Cite web"};
    const uint32_t kind = rng_.below(5);
    t += "{{";
    t += kCite[kind];
    t += " |url=";
    const size_t url_at = t.size();
    t += "https://www.";
    put_words(t, rng_, m_.en, false, 1);
    t += rng_.percent(60) ? ".com/" : ".org/";
    put_words(t, rng_, m_.en, false, 1);
    t += '/';
    put_u64(t, rng_.below(100000));
    const std::string url = t.substr(url_at);
    t += " |title=";
    put_sentence(t, rng_, m_.langs[kEn], rng_.range(3, 10));
    t.pop_back();
    if (kind == 2 || kind == 3) {
      t += " |last=";
      t += m_.family.random(rng_);
      capitalize_at(t, t.rfind('=') + 1);
      t += " |first=";
      t += m_.given.random(rng_);
    }
    if (rng_.percent(60)) {
      t += " |publisher=";
      t += title_words(rng_.range(1, 3));
    }
    t += " |date=";
    put_date(t);
    t += " |access-date=";
    put_date(t);
    if (rng_.percent(40)) {
      // Archived copies repeat the URL, as IABot's edits do all over the real dumps.
      t += " |archive-url=https://web.archive.org/web/";
      put_u64(t, rng_.range(2005, 2024));
      for (int i = 0; i < 5; ++i) put_padded(t, rng_.below(i == 0 ? 13 : 29), 2);
      t += '/';
      t += url;
      t += " |archive-date=";
      put_date(t);
      t += rng_.percent(80) ? " |url-status=live" : " |url-status=dead";
    }
    t += "}}</ref>";
  }
  void put_date(std::string& t) {
    static const char* const kMonths[] = {"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"};
    if (rng_.percent(50)) {
      put_u64(t, rng_.range(1, 28));
      t += ' ';
      t += kMonths[rng_.below(12)];
      t += ' ';
      put_u64(t, rng_.range(1990, 2024));
    } else {
      put_u64(t, rng_.range(1990, 2024));
      t += '-';
      put_padded(t, rng_.range(1, 12), 2);
      t += '-';
      put_padded(t, rng_.range(1, 28), 2);
    }
  }
  std::string title_words(uint32_t n) {
    std::string t;
    put_words(t, rng_, m_.en, true, n);
    for (size_t i = 0; i < t.size(); ++i)
      if (i == 0 || t[i - 1] == ' ') capitalize_at(t, i);
    return t;
  }

  // A paragraph: sentences of words with links, bold/italic, references and topic words.
  void paragraph(std::string& t, uint32_t sentences) {
    const Lang& en = m_.langs[kEn];
    for (uint32_t i = 0; i < sentences; ++i) {
      if (i) t += ' ';
      const uint32_t n = rng_.range(6, 30);
      const size_t start = t.size();
      uint32_t prev = m_.en.pick(rng_);
      for (uint32_t w = 0; w < n; ++w) {
        if (w) t += rng_.percent(5) && w + 2 < n ? ", " : " ";
        const uint32_t r = rng_.below(100);
        if (r < 7) {
          link(t);
        } else if (r < 17) {
          t += topic_[rng_.below(static_cast<uint32_t>(topic_.size()))];
        } else if (r < 18) {
          t += "''";
          put_words(t, rng_, m_.en, true, rng_.range(1, 3));
          t += "''";
        } else if (r < 20) {
          put_u64(t, rng_.percent(50) ? rng_.range(1800, 2024) : rng_.below(1000));
        } else {
          const uint32_t word = rng_.percent(78) ? m_.en.pick_hash(mix(prev, rng_.below(2))) : m_.en.pick(rng_);
          t += m_.en.word(word);
          prev = word;
        }
      }
      capitalize_at(t, start);
      t += '.';
      if (rng_.percent(30)) cite(t);
    }
    (void)en;
  }

  void infobox(std::string& t) {
    static const char* const kBoxes[] = {"person", "settlement", "film", "album", "football biography", "company", "officeholder", "book", "river", "school"};
    static const char* const kFields[] = {"name", "image", "caption", "birth_date", "birth_place", "occupation", "years_active",
                                          "website", "country", "population_total", "area_total_km2", "genre", "label",
                                          "producer", "founded", "location", "leader_name", "spouse", "nationality", "known_for"};
    t += "{{Infobox ";
    t += kBoxes[box_zipf_.pick(rng_)];
    t += '\n';
    for (uint32_t i = 0, n = rng_.range(5, 18); i < n; ++i) {
      t += "| ";
      t += kFields[rng_.below(20)];
      t += " = ";
      const uint32_t k = rng_.below(10);
      if (k < 3) {
        link(t);
      } else if (k < 5) {
        t += "{{birth date and age|";
        put_u64(t, rng_.range(1900, 2005));
        t += '|';
        put_u64(t, rng_.range(1, 12));
        t += '|';
        put_u64(t, rng_.range(1, 28));
        t += "}}";
      } else if (k < 6) {
        put_u64(t, rng_.below(10000000));
      } else {
        put_words(t, rng_, m_.en, true, rng_.range(1, 4));
      }
      t += '\n';
    }
    t += "}}\n";
  }

  void table(std::string& t) {
    t += "{| class=\"wikitable";
    if (rng_.percent(50)) t += " sortable";
    t += "\"\n|-\n";
    const uint32_t cols = rng_.range(2, 6);
    for (uint32_t c = 0; c < cols; ++c) {
      t += c ? " !! " : "! ";
      t += title_words(rng_.range(1, 2));
    }
    t += '\n';
    for (uint32_t r = 0, rows = rng_.tail(2, 85, 60); r < rows; ++r) {
      t += "|-\n";
      for (uint32_t c = 0; c < cols; ++c) {
        t += c ? " || " : "| ";
        const uint32_t k = rng_.below(10);
        if (k < 2) {
          put_u64(t, rng_.range(1950, 2024));
        } else if (k < 5) {
          link(t);
        } else if (k < 6) {
          t += "{{yes}}";
        } else {
          put_words(t, rng_, m_.en, true, rng_.range(1, 3));
        }
      }
      t += '\n';
    }
    t += "|}\n";
  }

  void article(std::string& t) {
    topic_.clear();
    ref_names_.clear();
    // Topic words: the title and a few words this article keeps coming back to.
    topic_.push_back(title_);
    related_.clear();
    for (uint32_t i = 0, n = rng_.range(8, 40); i < n; ++i) related_.push_back(link_target());
    for (uint32_t i = 0, n = rng_.range(6, 20); i < n; ++i) topic_.emplace_back(m_.en.word(m_.en.pick(rng_) % 20000));
    if (rng_.percent(80)) {
      t += "{{Short description|";
      put_words(t, rng_, m_.en, true, rng_.range(2, 6));
      capitalize_at(t, t.rfind('|') + 1);
      t += "}}\n";
    }
    if (rng_.percent(40)) {
      t += rng_.percent(50) ? "{{Use dmy dates|date=" : "{{Use mdy dates|date=";
      static const char* const kMonths[] = {"January", "March", "May", "July", "September", "November"};
      t += kMonths[rng_.below(6)];
      t += ' ';
      put_u64(t, rng_.range(2015, 2024));
      t += "}}\n";
    }
    if (rng_.percent(55)) infobox(t);
    t += "'''";
    t += title_;
    t += "''' ";
    paragraph(t, rng_.range(2, 5));
    t += "\n\n";
    // Stubs are common; a few articles are very long.
    const uint32_t r = rng_.below(100);
    const uint32_t sections = r < 35 ? 0 : r < 80 ? rng_.range(1, 5) : rng_.tail(4, 85, 40);
    static const char* const kHeadings[] = {"History", "Early life", "Career", "Geography", "Personal life", "Reception",
                                            "Background", "Description", "Legacy", "Discography", "Filmography",
                                            "Demographics", "Plot", "Production", "Education", "Economy", "Awards", "Works"};
    for (uint32_t i = 0; i < sections; ++i) {
      t += "== ";
      if (rng_.percent(70)) {
        t += kHeadings[heading_zipf_.pick(rng_)];
      } else {
        t += title_words(rng_.range(1, 3));
      }
      t += " ==\n";
      for (uint32_t p = 0, np = rng_.range(1, 5); p < np; ++p) {
        if (rng_.percent(15)) {
          t += "=== ";
          t += title_words(rng_.range(1, 3));
          t += " ===\n";
        }
        const uint32_t k = rng_.below(100);
        if (k < 10) {
          table(t);
        } else if (k < 22) {
          for (uint32_t j = 0, n = rng_.range(2, 12); j < n; ++j) {
            t += "* ";
            if (rng_.percent(50)) {
              put_u64(t, rng_.range(1950, 2024));
              t += " – ";
            }
            link(t);
            if (rng_.percent(60)) {
              t += ' ';
              put_words(t, rng_, m_.en, true, rng_.range(1, 8));
            }
            t += '\n';
          }
        } else if (k < 26) {
          t += "[[File:";
          t += title_words(rng_.range(1, 3));
          t += rng_.percent(70) ? ".jpg" : ".png";
          t += "|thumb|";
          put_sentence(t, rng_, m_.langs[kEn], rng_.range(3, 12));
          t += "]]\n";
        } else {
          paragraph(t, rng_.range(2, 8));
          t += '\n';
        }
        t += '\n';
      }
    }
    t += "== References ==\n{{Reflist}}\n\n";
    if (rng_.percent(50)) {
      t += "== External links ==\n* [https://www.";
      put_words(t, rng_, m_.en, false, 1);
      t += ".com Official website]\n";
      if (rng_.percent(40)) t += "* {{IMDb name|" + std::to_string(rng_.below(9000000)) + "}}\n";
      t += '\n';
    }
    if (rng_.percent(40)) t += "{{Authority control}}\n\n";
    if (rng_.percent(30)) {
      t += "{{DEFAULTSORT:";
      t += title_;
      t += "}}\n";
    }
    for (uint32_t i = 0, n = rng_.range(1, 8); i < n; ++i) {
      t += "[[Category:";
      Rng cr(mix(0x636174ULL, cat_zipf_.pick(rng_)));
      put_words(t, cr, m_.en, true, cr.range(1, 5));
      capitalize_at(t, t.rfind(':') + 1);
      t += "]]\n";
    }
    if (rng_.percent(30)) {
      t += "\n{{";
      t += title_words(1);
      t += "-stub}}";
    }
  }

  const Model& m_;
  Rng rng_;
  uint64_t page_id_ = 0, page_index_ = 0;
  std::string title_, raw_;
  std::vector<std::string> topic_, ref_names_;
  std::vector<uint64_t> related_{1};
  Zipf link_zipf_{1u << 20, 5, 32, 18}, user_zipf_{200000, 10, 48, 16}, comment_zipf_{14, 2, 0, 10},
      box_zipf_{10, 1, 0, 10}, heading_zipf_{18, 2, 0, 10}, cat_zipf_{300000, 20, 48, 16};
};

bool write_wikipedia(const Model& m, uint64_t seed, uint64_t size, Sink& out) {
  WikipediaGen gen(m, seed);
  const std::string head = WikipediaGen::header();
  const std::string_view foot = WikipediaGen::footer();
  if (size < head.size() + WikipediaGen::min_filler() + foot.size()) {
    // Too small for the header and a page: an empty <mediawiki> element padded with newlines
    // (cut if even that is too big).
    std::string doc = "<mediawiki>\n";
    while (doc.size() + foot.size() < size) doc.push_back('\n');
    doc += foot;
    out.buf.append(doc.substr(0, size));
    return out.flush();
  }
  out.buf.append(head);
  const uint64_t reserve = WikipediaGen::min_filler() + foot.size();
  bool small = false;
  uint32_t misses = 0;
  while (misses < 16) {
    const size_t mark = out.buf.size();
    gen.page(out.buf, small);
    if (out.total() + reserve > size) {
      out.buf.resize(mark);
      small = true;
      ++misses;
      continue;
    }
    if (!out.maybe_flush()) return false;
  }
  gen.filler(out.buf, size - out.total() - foot.size());
  out.buf.append(foot);
  return out.flush();
}

// ---------------------------------------------------------------------------------------------

bool parse_size(const char* text, uint64_t* out) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || errno || *text == '-') return false;
  uint64_t mult = 1;
  std::string_view rest(end);
  if (rest == "" || rest == "B") {
    mult = 1;
  } else if (rest == "K" || rest == "k" || rest == "KiB") {
    mult = uint64_t{1} << 10;
  } else if (rest == "M" || rest == "MiB") {
    mult = uint64_t{1} << 20;
  } else if (rest == "G" || rest == "GiB") {
    mult = uint64_t{1} << 30;
  } else {
    return false;
  }
  if (v > (uint64_t{1} << 50) / mult) return false;
  *out = v * mult;
  return true;
}

void usage(FILE* f) {
  std::fprintf(f,
               "usage: mibz2-corpus-gen --kind wikidata|wikipedia --size SIZE [--seed N] [--out FILE]\n"
               "Writes a deterministic Wikidata-like JSON dump or Wikipedia-like XML export of exactly SIZE\n"
               "bytes (suffixes K, M, G are powers of 1024) to FILE or standard output.\n"
               "  -k, --kind KIND  wikidata (default) or wikipedia\n"
               "  -s, --size SIZE  output size in bytes, e.g. 200M\n"
               "  -S, --seed N     seed (default 1); same kind, seed and size give the same bytes\n"
               "  -o, --out FILE   output file (default: standard output)\n"
               "  -h, --help       this help\n");
}

}  // namespace

int main(int argc, char** argv) {
  static const option kOptions[] = {
      {"kind", required_argument, nullptr, 'k'}, {"size", required_argument, nullptr, 's'},
      {"seed", required_argument, nullptr, 'S'}, {"out", required_argument, nullptr, 'o'},
      {"help", no_argument, nullptr, 'h'},       {nullptr, 0, nullptr, 0},
  };
  std::string kind = "wikidata", out_path;
  uint64_t size = 0, seed = 1;
  bool have_size = false;
  int c;
  while ((c = getopt_long(argc, argv, "k:s:S:o:h", kOptions, nullptr)) != -1) {
    switch (c) {
      case 'k': kind = optarg; break;
      case 's':
        if (!parse_size(optarg, &size)) {
          std::fprintf(stderr, "mibz2-corpus-gen: bad size '%s' (bytes, or a number with K, M or G)\n", optarg);
          return 1;
        }
        have_size = true;
        break;
      case 'S': {
        char* end = nullptr;
        errno = 0;
        seed = std::strtoull(optarg, &end, 10);
        if (!*optarg || *end || errno || *optarg == '-') {
          std::fprintf(stderr, "mibz2-corpus-gen: bad seed '%s'\n", optarg);
          return 1;
        }
        break;
      }
      case 'o': out_path = optarg; break;
      case 'h': usage(stdout); return 0;
      default: usage(stderr); return 1;
    }
  }
  if (optind != argc || !have_size || (kind != "wikidata" && kind != "wikipedia")) {
    usage(stderr);
    return 1;
  }
  FILE* f = stdout;
  if (!out_path.empty()) {
    f = std::fopen(out_path.c_str(), "wb");
    if (!f) {
      std::fprintf(stderr, "mibz2-corpus-gen: %s: %s\n", out_path.c_str(), std::strerror(errno));
      return 1;
    }
  }
  const Model model;
  Sink sink(f);
  const bool ok = kind == "wikidata" ? write_wikidata(model, seed, size, sink) : write_wikipedia(model, seed, size, sink);
  if (!ok || std::fflush(f) != 0 || (f != stdout && std::fclose(f) != 0)) {
    std::fprintf(stderr, "mibz2-corpus-gen: writing %s: %s\n", out_path.empty() ? "standard output" : out_path.c_str(),
                 std::strerror(errno));
    return 1;
  }
  if (sink.total() != size) {
    std::fprintf(stderr, "mibz2-corpus-gen: internal error: wrote %llu bytes, not %llu\n",
                 static_cast<unsigned long long>(sink.total()), static_cast<unsigned long long>(size));
    return 1;
  }
  return 0;
}
