#include "wikidata.h"

#include <array>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace mibz2::corpus {
namespace {

// Entities of the kinds the real dump is made of, in its proportions: scholarly articles (a third),
// people, taxa, places, categories, disambiguation pages, creative works. Identifiers, references
// and descriptions recur with Zipf laws, as in the real graph, so the JSON compresses like it.
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

  // The names an entity is known by: its English label, the languages it has labels in, and the
  // key its names in non-Latin scripts derive from (so a person's name reads alike in every script).
  struct Names {
    std::string en_label;
    std::vector<LangId> langs;
    uint64_t name_key = 0;
  };
  using LabelList = std::vector<std::pair<LangId, std::string>>;

  void build_entity(Kind kind) {
    std::string& s = o();
    s.append(R"({"type":"item","id":"Q)");
    put_u64(s, qid_);
    s.push_back('"');
    const Names names = choose_names(kind);
    const LabelList labels = put_labels_and_descriptions(kind, names);
    put_aliases(kind, names);
    s.append(R"(,"claims":{)");
    first_claim_ = true;
    switch (kind) {
      case kArticle:
        article_claims(names.en_label);
        article_identifiers(names.en_label);
        break;
      case kHuman:
        human_claims();
        human_identifiers(names.en_label);
        break;
      case kTaxon: taxon_claims(names); break;
      case kPlace: place_claims(names.en_label); break;
      case kCategory: category_claims(); break;
      case kDisambig: disambiguation_claims(); break;
      case kWork:
      case kKindCount: work_claims(names.en_label); break;
    }
    s.push_back('}');
    put_entity_sitelinks(kind, labels);
    s.append(R"(,"lastrevid":)");
    put_u64(s, 1000000000 + rng_.below(1400000000));
    s.push_back('}');
  }

  // The English label comes first; the labels in other languages derive from it.
  Names choose_names(Kind kind) {
    Names n;
    n.name_key = rng_.next();
    switch (kind) {
      case kHuman: {
        const uint32_t g = m_.given.pick(rng_), f = m_.family.pick(rng_);
        n.en_label = std::string(m_.given.word(g)) + " " + std::string(m_.family.word(f));
        capitalize_at(n.en_label, 0);
        capitalize_at(n.en_label, m_.given.word(g).size() + 1);
        n.name_key = mix(g, f);
        choose_languages(n.langs, rng_.percent(25) ? 300 : 150);
        break;
      }
      case kArticle: {
        put_sentence(n.en_label, rng_, m_.langs[kEn], rng_.range(5, 18));
        n.en_label.pop_back();
        n.langs = {kEn};
        if (rng_.percent(30)) n.langs.push_back(kNl);
        break;
      }
      case kTaxon: {
        n.en_label = m_.family.word(m_.family.pick(rng_));
        n.en_label += ' ';
        n.en_label += m_.en.random(rng_);
        capitalize_at(n.en_label, 0);
        choose_languages(n.langs, 40);
        break;
      }
      case kPlace: {
        n.en_label = std::string(m_.family.word(m_.family.pick(rng_)));
        if (rng_.percent(30)) n.en_label += rng_.percent(50) ? "ville" : "burg";
        capitalize_at(n.en_label, 0);
        choose_languages(n.langs, rng_.percent(20) ? 300 : 150);
        break;
      }
      case kCategory:
      case kDisambig:
      case kWork:
      case kKindCount: {
        Rng trng(rng_.next());
        n.en_label = title_words(trng, rng_.range(1, 4));
        choose_languages(n.langs, kind == kWork ? 150 : 200);
        break;
      }
    }
    return n;
  }

  // "labels" and "descriptions"; returns the labels (the sitelinks' titles come from them).
  LabelList put_labels_and_descriptions(Kind kind, const Names& names) {
    const std::string& en_label = names.en_label;
    LabelList labels, descs;
    std::string tmp;
    for (LangId l : names.langs) {
      if (kind == kArticle || kind == kTaxon) {
        labels.emplace_back(l, en_label);
      } else if (kind == kCategory) {
        tmp = l == kEn ? "Category:" : l == kDe ? "Kategorie:" : l == kFr ? "Catégorie:" : "Category:";
        tmp += en_label;
        labels.emplace_back(l, tmp);
      } else {
        name_in(tmp, l, en_label, names.name_key);
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
    return labels;
  }

  // "aliases": lists per language, for the kinds of items that have other names.
  void put_aliases(Kind kind, const Names& names) {
    const std::string& en_label = names.en_label;
    std::string& s = o();
    s.append(R"(,"aliases":{)");
    if (kind == kHuman || kind == kPlace || kind == kWork) {
      bool first = true;
      for (LangId l : names.langs) {
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
  }

  // Sitelinks: titles in some of the label languages (none for scholarly articles).
  void put_entity_sitelinks(Kind kind, const LabelList& labels) {
    std::string& s = o();
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
  }

  // --- claims of each kind of item ------------------------------------------------------------
  // Value makers for claim(): an item from a fixed pool, one fixed item, a number as a string.
  auto item(uint32_t pool, uint32_t size) {
    return [this, pool, size](uint32_t) { dv_item(pool_qid(pool, size)); };
  }
  auto fixed(uint64_t q) {
    return [this, q](uint32_t) { dv_item(q); };
  }
  auto digits(const char* type, uint32_t lo, uint32_t hi, const char* prefix = "") {
    return [this, type, lo, hi, prefix](uint32_t) {
      dv_string_begin();
      o().append(prefix);
      put_u64(o(), rng_.range(lo, hi));
      dv_string_end(type);
    };
  }

  // A scholarly article (a third of the real dump): its title, authors, date and journal.
  void article_claims(const std::string& en_label) {
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
  }

  // A scholarly article's identifiers (DOI, PubMed...), topics and citations.
  void article_identifiers(const std::string& en_label) {
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
  }

  // A person: born and died when and where, nationality, occupations.
  void human_claims() {
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
  }

  // A person's identifiers in authority files and elsewhere.
  void human_identifiers(const std::string& en_label) {
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
  }

  void taxon_claims(const Names& names) {
    const std::string& en_label = names.en_label;
    const std::vector<LangId>& langs = names.langs;
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
  }

  void place_claims(const std::string& en_label) {
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
  }

  void category_claims() {
    claim("P31", 1, fixed(4167836), 5);
    if (rng_.percent(40)) claim("P301", 1, [&](uint32_t) { dv_item(any_qid()); }, 5);
  }

  void disambiguation_claims() {
    claim("P31", 1, fixed(4167410), 5);
  }

  // A creative work (film, book, album...).
  void work_claims(const std::string& en_label) {
    claim("P31", 1, item(16, 400), 40);
    claim("P577", rng_.tail(1, 30, 5), [&](uint32_t) { dv_random_time(1900, 2024); }, 60);
    if (rng_.percent(70)) claim("P495", 1, item(1, 200), 50);
    if (rng_.percent(60)) claim("P136", rng_.tail(1, 40, 5), item(17, 1500), 40);
    if (rng_.percent(40)) claim("P57", 1, item(5, 2000000), 50);
    if (rng_.percent(40)) claim("P161", rng_.tail(1, 85, 40), item(5, 2000000), 30);
    if (rng_.percent(40)) claim("P2047", 1, [&](uint32_t) { dv_quantity(rng_.range(3, 200), "Q7727"); }, 50);
    if (rng_.percent(40)) claim("P345", 1, digits("external-id", 1000000, 29999999, "tt"), 60);
    if (rng_.percent(30)) claim("P1476", 1, [&](uint32_t) { dv_monolingual(en_label, "en"); }, 40);
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

}  // namespace

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
  const bool ok = append_while_room(out, size, reserve, [&](std::string& buf, bool small) {
    gen.entity(buf, small);
    buf.append(",\n");
  });
  if (!ok) return false;
  gen.filler(out.buf, size - out.total() - foot.size());
  out.buf.append(foot);
  return out.flush();
}

}  // namespace mibz2::corpus
