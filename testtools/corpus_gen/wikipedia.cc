#include "wikipedia.h"

#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mibz2::corpus {
namespace {

// Pages of an English Wikipedia export: about a quarter redirects, the rest articles from stubs to
// long ones, whose wikitext has templates, infoboxes, links to other pages of the same export,
// citations in <ref>s (archived URLs repeating the original, as bots write them), tables, lists
// and categories.
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
    put_contributor(s);
    s.append("      </contributor>\n");
    put_comment(s);
    s.append("      <origin>");
    put_u64(s, rev);
    s.append("</origin>\n      <model>wikitext</model>\n      <format>text/x-wiki</format>\n");
  }

  // A registered user (a few hundred thousand, some far more active than others) or an IP address.
  void put_contributor(std::string& s) {
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
  }

  // Most revisions carry an edit summary, and the same few summaries recur (bots, tools).
  void put_comment(std::string& s) {
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

  // An article's wikitext: templates and the lead, sections (stubs have none), then the end
  // matter: references, links, categories.
  void article(std::string& t) {
    choose_topic();
    lead(t);
    // Stubs are common; a few articles are very long.
    const uint32_t r = rng_.below(100);
    const uint32_t sections = r < 35 ? 0 : r < 80 ? rng_.range(1, 5) : rng_.tail(4, 85, 40);
    for (uint32_t i = 0; i < sections; ++i) section(t);
    end_matter(t);
  }

  // Topic words: the title and a few words this article keeps coming back to; and the pages it
  // keeps linking to.
  void choose_topic() {
    topic_.clear();
    ref_names_.clear();
    topic_.push_back(title_);
    related_.clear();
    for (uint32_t i = 0, n = rng_.range(8, 40); i < n; ++i) related_.push_back(link_target());
    for (uint32_t i = 0, n = rng_.range(6, 20); i < n; ++i) topic_.emplace_back(m_.en.word(m_.en.pick(rng_) % 20000));
  }

  // The templates at the top, perhaps an infobox, and the first paragraph with the title in bold.
  void lead(std::string& t) {
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
  }

  void section(std::string& t) {
    static const char* const kHeadings[] = {"History", "Early life", "Career", "Geography", "Personal life", "Reception",
                                            "Background", "Description", "Legacy", "Discography", "Filmography",
                                            "Demographics", "Plot", "Production", "Education", "Economy", "Awards", "Works"};
    t += "== ";
    if (rng_.percent(70)) {
      t += kHeadings[heading_zipf_.pick(rng_)];
    } else {
      t += title_words(rng_.range(1, 3));
    }
    t += " ==\n";
    for (uint32_t p = 0, np = rng_.range(1, 5); p < np; ++p) section_part(t);
  }

  // One part of a section: perhaps a subheading, then a table, a list, an image or a paragraph.
  void section_part(std::string& t) {
    if (rng_.percent(15)) {
      t += "=== ";
      t += title_words(rng_.range(1, 3));
      t += " ===\n";
    }
    const uint32_t k = rng_.below(100);
    if (k < 10) {
      table(t);
    } else if (k < 22) {
      bullet_list(t);
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

  void bullet_list(std::string& t) {
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
  }

  void end_matter(std::string& t) {
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

}  // namespace

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
  // Pages while they fit, then redirects, then one padded page that ends exactly.
  const uint64_t reserve = WikipediaGen::min_filler() + foot.size();
  const bool ok = append_while_room(out, size, reserve, [&](std::string& buf, bool small) { gen.page(buf, small); });
  if (!ok) return false;
  gen.filler(out.buf, size - out.total() - foot.size());
  out.buf.append(foot);
  return out.flush();
}

}  // namespace mibz2::corpus
