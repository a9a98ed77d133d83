#include "catalog/name_mapping.h"

#include <algorithm>
#include <set>

namespace mibz2::catalog {

std::optional<std::string> decompressed_name(std::string_view name) {
  struct Rule {
    std::string_view suffix;
    std::string_view replacement;
  };
  static constexpr Rule kRules[] = {{".tbz2", ".tar"}, {".tbz", ".tar"}, {".bz2", ""}};
  for (const Rule& r : kRules) {
    if (name.size() > r.suffix.size() && name.substr(name.size() - r.suffix.size()) == r.suffix) {
      std::string out(name.substr(0, name.size() - r.suffix.size()));
      out += r.replacement;
      // "..bz2" and "...bz2" keep their own names: "." and ".." are the directory's own entries.
      if (out == "." || out == "..") return std::nullopt;
      return out;
    }
  }
  return std::nullopt;
}

namespace {

// The source names that decompressed_name() turns into `shown`.
void add_compressed_forms(std::string_view shown, std::vector<std::string>* out) {
  out->push_back(std::string(shown) + ".bz2");
  constexpr std::string_view kTar = ".tar";
  if (shown.size() > kTar.size() && shown.substr(shown.size() - kTar.size()) == kTar) {
    const std::string stem(shown.substr(0, shown.size() - kTar.size()));
    out->push_back(stem + ".tbz2");
    out->push_back(stem + ".tbz");
  }
}

}  // namespace

std::vector<std::string> names_affected_by(std::string_view name) {
  std::vector<std::string> names{std::string(name)};
  add_compressed_forms(name, &names);  // shown raw while `name` exists, decompressed as `name` without it
  if (const std::optional<std::string> shown = decompressed_name(name)) {
    names.push_back(*shown);              // `name`'s own decompressed name
    add_compressed_forms(*shown, &names);  // its rivals for that name ("X.tbz" for "X.tar.bz2")
  }
  std::vector<std::string> unique;
  for (std::string& n : names)
    if (std::find(unique.begin(), unique.end(), n) == unique.end()) unique.push_back(std::move(n));
  return unique;
}

std::vector<ShownEntry> map_directory(std::vector<SourceEntry> entries, std::vector<NamingNote>* notes) {
  // Sorted by source name, so that when two compressed files want one name (a.tbz and a.tar.bz2
  // both want "a.tar") the choice is the same at every listing.
  std::sort(entries.begin(), entries.end(), [](const SourceEntry& a, const SourceEntry& b) { return a.name < b.name; });
  std::set<std::string> taken;
  for (const SourceEntry& e : entries) taken.insert(e.name);  // real names always win

  std::vector<ShownEntry> shown;
  shown.reserve(entries.size());
  for (const SourceEntry& e : entries) {
    ShownEntry s{e.name, e.name, e.type, false, e.stamp};
    if (e.type == SourceEntry::Type::kRegular || e.type == SourceEntry::Type::kSymlink) {
      if (auto dn = decompressed_name(e.name)) {
        if (!e.is_bzip2) {
          if (e.type == SourceEntry::Type::kRegular) notes->push_back({e.name, "not a bzip2 file; shown as it is"});
        } else if (taken.count(*dn)) {
          notes->push_back({e.name, "its decompressed name '" + *dn + "' is taken; shown compressed under its own name"});
        } else {
          taken.insert(*dn);
          s.name = *dn;
          s.decompressed = true;
        }
      }
    }
    shown.push_back(std::move(s));
  }
  std::sort(shown.begin(), shown.end(), [](const ShownEntry& a, const ShownEntry& b) { return a.name < b.name; });
  return shown;
}

}  // namespace mibz2::catalog
