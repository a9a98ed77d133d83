#include "text.h"

#include <unordered_set>

namespace mibz2::corpus {

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

void put_words(std::string& s, Rng& rng, const Vocab& v, bool spaced, uint32_t n, const TextStyle& style) {
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

}  // namespace mibz2::corpus
