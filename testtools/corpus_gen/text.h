// Text for the corpus generator: appending numbers and UTF-8 to a string, vocabularies of invented
// words ranked for Zipf choice, and sentences built from them.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "random.h"

namespace mibz2::corpus {

// Appending to the document: std::to_chars and hand-made digits, no locale, no printf.
inline void put_u64(std::string& s, uint64_t v) {
  char tmp[24];
  const auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
  s.append(tmp, r.ptr);
}

inline void put_padded(std::string& s, uint64_t v, int width) {
  char tmp[24];
  const auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
  for (int i = static_cast<int>(r.ptr - tmp); i < width; ++i) s.push_back('0');
  s.append(tmp, r.ptr);
}

inline void put_hex(std::string& s, uint64_t v, int digits, bool upper) {
  static const char kLower[] = "0123456789abcdef";
  static const char kUpper[] = "0123456789ABCDEF";
  const char* d = upper ? kUpper : kLower;
  for (int i = digits - 1; i >= 0; --i) s.push_back(d[(v >> (4 * i)) & 15]);
}

inline void put_utf8(std::string& s, uint32_t cp) {
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

inline size_t digits10(uint64_t v) {
  size_t n = 1;
  while (v >= 10) {
    v /= 10;
    ++n;
  }
  return n;
}

inline void capitalize_at(std::string& s, size_t pos) {
  if (pos < s.size() && s[pos] >= 'a' && s[pos] <= 'z') s[pos] = static_cast<char>(s[pos] - 32);
}

// A vocabulary: words (made of syllables or code points, one vocabulary per script) in one arena,
// ranked for Zipf choice. finish() once all words are in.
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

// The sounds a language's words are made of: a syllable is onset + nucleus (+ coda).
struct SyllableSet {
  std::vector<std::string_view> onsets, nuclei, codas;
};

// Builds n distinct words of 1..4 syllables; `head` words take the top ranks (function words).
void build_syllable_vocab(Vocab& v, const SyllableSet& set, const std::vector<std::string_view>& head, uint32_t n,
                          uint64_t seed, uint32_t zipf_q, uint32_t tail);

// Words of `min..max` code points, each drawn from `alphabet` with a Zipf preference.
void build_codepoint_vocab(Vocab& v, const std::vector<uint32_t>& alphabet, uint32_t min_len, uint32_t max_len,
                           uint32_t n, uint64_t seed, uint32_t zipf_q, uint32_t tail);

std::vector<uint32_t> codepoint_range(uint32_t first, uint32_t last);

// A scattered, fixed selection of `count` code points in [first, last].
std::vector<uint32_t> codepoint_sample(uint32_t first, uint32_t last, uint32_t count, uint64_t seed);

// How one language is written.
struct Lang {
  const char* code;
  const Vocab* vocab;
  bool spaced;        // words separated by spaces
  bool latin;         // Latin script: person names are shared with English
  bool arabic_script; // Arabic comma
  uint32_t weight;    // how often the language has a label (per mille)
};

struct TextStyle {
  uint32_t markov = 45;  // % of words that follow the previous one through a fixed successor table
};

// Appends `n` words of `lang` (Zipf unigram with a fixed successor structure, which is what gives
// real text its repeated phrases).
void put_words(std::string& s, Rng& rng, const Vocab& v, bool spaced, uint32_t n, const TextStyle& style = {});

// A sentence of `n` words: capitalised, with commas now and then (the language's own comma), and a
// full stop ("。" for the languages written without spaces).
void put_sentence(std::string& s, Rng& rng, const Lang& lang, uint32_t n);

// Fills `s` with exactly n bytes of ASCII words separated by spaces (the last one cut to fit).
void put_exact_words(std::string& s, Rng& rng, const Vocab& v, uint64_t n);

}  // namespace mibz2::corpus
