// How source names appear in the mount (src/fs/name_mapping, and shown_link_target in
// src/fs/source_directory), without a mount: the suffix rules, names that are only a suffix,
// collisions (a real name wins; between two compressed files the first by source name), files
// that only look compressed, symlinks, directories, the order of the listing and the notes for
// the log.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "catalog/name_mapping.h"
#include "fs/source_directory.h"
#include "io/source_root.h"
#include "test_support.h"

namespace mibz2::test {
namespace {

using catalog::decompressed_name;
using catalog::map_directory;
using catalog::NamingNote;
using catalog::ShownEntry;
using catalog::SourceEntry;
using Type = catalog::SourceEntry::Type;

catalog::SourceEntry regular(const std::string& name, bool bzip2) { return {name, Type::kRegular, bzip2}; }
catalog::SourceEntry symlink_to(const std::string& name, bool bzip2) { return {name, Type::kSymlink, bzip2}; }
catalog::SourceEntry directory(const std::string& name) { return {name, Type::kDirectory, false}; }

// The listing as shown name -> source name, with the shown entries in a vector for the order.
struct Listing {
  std::vector<catalog::ShownEntry> entries;
  std::vector<catalog::NamingNote> notes;
  std::map<std::string, std::string> source_of;  // shown name -> source name

  const catalog::ShownEntry& at(const std::string& shown) const {
    for (const catalog::ShownEntry& e : entries)
      if (e.name == shown) return e;
    throw std::out_of_range("not shown: " + shown);
  }
};

Listing list(std::vector<catalog::SourceEntry> entries) {
  Listing l;
  l.entries = catalog::map_directory(std::move(entries), &l.notes);
  for (const catalog::ShownEntry& e : l.entries) l.source_of[e.name] = e.source_name;
  return l;
}

// ---- decompressed_name --------------------------------------------------------------------------

TEST(DecompressedName, DropsBz2AndMakesTbz2AndTbzATar) {
  EXPECT_EQ(catalog::decompressed_name("a.bz2"), "a");
  EXPECT_EQ(catalog::decompressed_name("latest-all.json.bz2"), "latest-all.json");
  EXPECT_EQ(catalog::decompressed_name("a.tar.bz2"), "a.tar");
  EXPECT_EQ(catalog::decompressed_name("a.tbz2"), "a.tar");
  EXPECT_EQ(catalog::decompressed_name("a.tbz"), "a.tar");
  EXPECT_EQ(catalog::decompressed_name("name with spaces.txt.bz2"), "name with spaces.txt");
  EXPECT_EQ(catalog::decompressed_name("\xc3\xbcn\xc3\xaf.bz2"), "\xc3\xbcn\xc3\xaf");
}

TEST(DecompressedName, RemovesOneSuffixOnly) {
  EXPECT_EQ(catalog::decompressed_name("a.bz2.bz2"), "a.bz2");
  EXPECT_EQ(catalog::decompressed_name("a.tbz.bz2"), "a.tbz");
  EXPECT_EQ(catalog::decompressed_name("a.bz2.tbz2"), "a.bz2.tar");
}

TEST(DecompressedName, NamesThatAreOnlyASuffixHaveNone) {
  EXPECT_EQ(catalog::decompressed_name(".bz2"), std::nullopt);
  EXPECT_EQ(catalog::decompressed_name(".tbz2"), std::nullopt);
  EXPECT_EQ(catalog::decompressed_name(".tbz"), std::nullopt);
  // One character before the suffix is a name.
  EXPECT_EQ(catalog::decompressed_name("x.bz2"), "x");
  EXPECT_EQ(catalog::decompressed_name("x.tbz"), "x.tar");
}

TEST(DecompressedName, OtherNamesHaveNone) {
  for (const char* name : {"", "a", "a.txt", "x.tar", "bz2", "tbz", "a.bz", "a.bz2x", "a.bz2.txt", "a.BZ2", "a.Bz2",
                           "a.TBZ2", "a_bz2", "a.gz", "a.xz", "a.zst"}) {
    EXPECT_EQ(catalog::decompressed_name(name), std::nullopt) << name;
  }
}

// ---- map_directory -------------------------------------------------------------------------------

TEST(MapDirectory, BzipFilesAreShownDecompressed) {
  const Listing l = list({regular("single.txt.bz2", true), regular("archive.tbz2", true), regular("backup.tbz", true),
                          regular("plain.txt", false)});
  ASSERT_EQ(l.entries.size(), 4u);
  EXPECT_EQ(l.source_of, (std::map<std::string, std::string>{{"single.txt", "single.txt.bz2"},
                                                             {"archive.tar", "archive.tbz2"},
                                                             {"backup.tar", "backup.tbz"},
                                                             {"plain.txt", "plain.txt"}}));
  for (const char* shown : {"single.txt", "archive.tar", "backup.tar"}) {
    EXPECT_TRUE(l.at(shown).decompressed) << shown;
    EXPECT_EQ(l.at(shown).type, Type::kRegular) << shown;
  }
  EXPECT_FALSE(l.at("plain.txt").decompressed);
  EXPECT_TRUE(l.notes.empty());
}

TEST(MapDirectory, FilesThatOnlyLookCompressedAreShownRawWithANote) {
  std::vector<catalog::NamingNote> notes;
  const std::vector<catalog::ShownEntry> shown = catalog::map_directory({regular("fake.bz2", false), regular("zero.tbz", false)}, &notes);
  ASSERT_EQ(shown.size(), 2u);
  EXPECT_EQ(shown[0].name, "fake.bz2");
  EXPECT_EQ(shown[0].source_name, "fake.bz2");
  EXPECT_FALSE(shown[0].decompressed);
  EXPECT_EQ(shown[1].name, "zero.tbz");
  EXPECT_FALSE(shown[1].decompressed);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0].source_name, "fake.bz2");
  EXPECT_EQ(notes[0].reason, "not a bzip2 file; shown as it is");
  EXPECT_EQ(notes[1].source_name, "zero.tbz");
  EXPECT_EQ(notes[1].reason, "not a bzip2 file; shown as it is");
}

// A bzip2 file named only ".bz2" has no shorter name: shown raw, and no note is written.
TEST(MapDirectory, ANameThatIsOnlyASuffixIsShownRaw) {
  const Listing l = list({regular(".bz2", true), regular(".tbz2", true), regular(".tbz", false)});
  EXPECT_EQ(l.source_of, (std::map<std::string, std::string>{{".bz2", ".bz2"}, {".tbz2", ".tbz2"}, {".tbz", ".tbz"}}));
  for (const catalog::ShownEntry& e : l.entries) EXPECT_FALSE(e.decompressed) << e.name;
  EXPECT_TRUE(l.notes.empty());
}

TEST(MapDirectory, ARealNameWinsAndTheCompressedFileStaysRaw) {
  // Whatever the real entry is: a file, a directory, a symlink.
  const Listing l = list({regular("a", false), regular("a.bz2", true), directory("d"), regular("d.tbz2", true),
                          regular("d.tar", false), symlink_to("s", false), regular("s.bz2", true)});
  EXPECT_EQ(l.source_of, (std::map<std::string, std::string>{{"a", "a"},
                                                             {"a.bz2", "a.bz2"},
                                                             {"d", "d"},
                                                             {"d.tar", "d.tar"},
                                                             {"d.tbz2", "d.tbz2"},
                                                             {"s", "s"},
                                                             {"s.bz2", "s.bz2"}}));
  for (const catalog::ShownEntry& e : l.entries) EXPECT_FALSE(e.decompressed) << e.name;
  EXPECT_EQ(l.at("d").type, Type::kDirectory);
  EXPECT_EQ(l.at("s").type, Type::kSymlink);
  ASSERT_EQ(l.notes.size(), 3u);
  EXPECT_EQ(l.notes[0].source_name, "a.bz2");
  EXPECT_EQ(l.notes[0].reason, "its decompressed name 'a' is taken; shown compressed under its own name");
  EXPECT_EQ(l.notes[1].source_name, "d.tbz2");
  EXPECT_EQ(l.notes[1].reason, "its decompressed name 'd.tar' is taken; shown compressed under its own name");
  EXPECT_EQ(l.notes[2].source_name, "s.bz2");
}

// A name a compressed file would take is taken even by another compressed file's source name.
TEST(MapDirectory, ACompressedFilesOwnNameIsARealName) {
  const Listing l = list({regular("a.bz2.bz2", true), regular("a.bz2", true)});
  EXPECT_EQ(l.source_of, (std::map<std::string, std::string>{{"a", "a.bz2"}, {"a.bz2.bz2", "a.bz2.bz2"}}));
  EXPECT_TRUE(l.at("a").decompressed);
  EXPECT_FALSE(l.at("a.bz2.bz2").decompressed);
  ASSERT_EQ(l.notes.size(), 1u);
  EXPECT_EQ(l.notes[0].source_name, "a.bz2.bz2");
}

// a.tar.bz2, a.tbz2 and a.tbz all want "a.tar": the first by source name gets it, whatever order
// the directory lists them in, and the others stay raw.
TEST(MapDirectory, BetweenCompressedFilesTheFirstBySourceNameWins) {
  std::vector<catalog::SourceEntry> entries = {regular("a.tbz", true), regular("a.tbz2", true), regular("a.tar.bz2", true),
                                      regular("b.txt", false)};
  std::sort(entries.begin(), entries.end(), [](const catalog::SourceEntry& x, const catalog::SourceEntry& y) { return x.name < y.name; });
  const std::map<std::string, std::string> expected = {
      {"a.tar", "a.tar.bz2"}, {"a.tbz", "a.tbz"}, {"a.tbz2", "a.tbz2"}, {"b.txt", "b.txt"}};
  do {
    std::string order;
    for (const catalog::SourceEntry& e : entries) order += e.name + " ";
    SCOPED_TRACE("listed as: " + order);
    const Listing l = list(entries);
    EXPECT_EQ(l.source_of, expected);
    EXPECT_TRUE(l.at("a.tar").decompressed);
    ASSERT_EQ(l.notes.size(), 2u);
    EXPECT_EQ(l.notes[0].source_name, "a.tbz");
    EXPECT_EQ(l.notes[0].reason, "its decompressed name 'a.tar' is taken; shown compressed under its own name");
    EXPECT_EQ(l.notes[1].source_name, "a.tbz2");
  } while (std::next_permutation(entries.begin(), entries.end(),
                                 [](const catalog::SourceEntry& x, const catalog::SourceEntry& y) { return x.name < y.name; }));
}

// A symlink that leads to a bzip2 file (list_source_directory decides: a relative target) is shown
// under the decompressed name, still a symlink; one that does not stays as it is, with no note.
TEST(MapDirectory, SymlinksFollowTheirTargetsKind) {
  const Listing l = list({symlink_to("latest-all.json.bz2", true), symlink_to("absolute.json.bz2", false),
                          symlink_to("latest.tbz", true), symlink_to("link-plain", false)});
  EXPECT_EQ(l.source_of, (std::map<std::string, std::string>{{"latest-all.json", "latest-all.json.bz2"},
                                                             {"absolute.json.bz2", "absolute.json.bz2"},
                                                             {"latest.tar", "latest.tbz"},
                                                             {"link-plain", "link-plain"}}));
  EXPECT_EQ(l.at("latest-all.json").type, Type::kSymlink);
  EXPECT_TRUE(l.at("latest-all.json").decompressed);
  EXPECT_TRUE(l.at("latest.tar").decompressed);
  EXPECT_EQ(l.at("absolute.json.bz2").type, Type::kSymlink);
  EXPECT_FALSE(l.at("absolute.json.bz2").decompressed);
  EXPECT_TRUE(l.notes.empty()) << "a symlink to something else is no mistake to report";
}

// Only files and symlinks are renamed: a directory (or anything else) keeps its name.
TEST(MapDirectory, DirectoriesAndOtherEntriesKeepTheirNames) {
  const Listing l = list({{"dumps.bz2", Type::kDirectory, true}, {"fifo.bz2", Type::kOther, true}});
  EXPECT_EQ(l.source_of, (std::map<std::string, std::string>{{"dumps.bz2", "dumps.bz2"}, {"fifo.bz2", "fifo.bz2"}}));
  EXPECT_FALSE(l.at("dumps.bz2").decompressed);
  EXPECT_EQ(l.at("dumps.bz2").type, Type::kDirectory);
  EXPECT_EQ(l.at("fifo.bz2").type, Type::kOther);
  EXPECT_TRUE(l.notes.empty());
}

// Sorted by shown name (bytewise), every source entry exactly once, no shown name twice.
TEST(MapDirectory, ListsEverySourceEntryOnceSortedByShownName) {
  const Listing l = list({regular("z.bz2", true), regular("b", false), directory("c"), regular("a.tbz", true),
                          regular("a.tar.bz2", true), regular("B.bz2", true), regular("y", false),
                          symlink_to("m.bz2", true), regular("\xc3\xa9.bz2", true), regular("fake.bz2", false),
                          regular(".bz2", true), regular("y.bz2", true), regular("x.bz2", true),
                          regular("x-1", false)});  // "x-1" < "x.bz2", but "x" < "x-1"
  std::vector<std::string> names, sources;
  for (const catalog::ShownEntry& e : l.entries) {
    names.push_back(e.name);
    sources.push_back(e.source_name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{".bz2", "B", "a.tar", "a.tbz", "b", "c", "fake.bz2", "m", "x", "x-1", "y",
                                             "y.bz2", "z", "\xc3\xa9"}));
  std::sort(sources.begin(), sources.end());
  EXPECT_EQ(sources, (std::vector<std::string>{".bz2", "B.bz2", "a.tar.bz2", "a.tbz", "b", "c", "fake.bz2", "m.bz2",
                                               "x-1", "x.bz2", "y", "y.bz2", "z.bz2", "\xc3\xa9.bz2"}));
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
}

TEST(MapDirectory, NotesAreAddedToTheOnesGiven) {
  std::vector<catalog::NamingNote> notes = {{"earlier", "kept"}};
  catalog::map_directory({regular("fake.bz2", false)}, &notes);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0].source_name, "earlier");
  EXPECT_EQ(notes[1].source_name, "fake.bz2");
  EXPECT_TRUE(catalog::map_directory({}, &notes).empty());
  EXPECT_EQ(notes.size(), 2u);
}

// A bzip2 file named "..bz2" or "...bz2" keeps its own name: "." and ".." are the directory's own.
TEST(MapDirectory, NoEntryIsShownAsDotOrDotDot) {
  const Listing l = list({regular("..bz2", true), regular("...bz2", true), regular("..tbz", true)});
  ASSERT_EQ(l.entries.size(), 3u);
  for (const catalog::ShownEntry& e : l.entries) {
    EXPECT_NE(e.name, ".") << "from " << e.source_name;
    EXPECT_NE(e.name, "..") << "from " << e.source_name;
  }
  EXPECT_EQ(l.source_of.count("..tar"), 1u) << "'..tar' is an ordinary name";
}

// ---- names_affected_by ------------------------------------------------------------------------------

TEST(NamesAffectedBy, TheNameItsShownNameAndTheirRivals) {
  using V = std::vector<std::string>;
  EXPECT_EQ(catalog::names_affected_by("notes.txt"), (V{"notes.txt", "notes.txt.bz2"}));
  EXPECT_EQ(catalog::names_affected_by("x.bz2"), (V{"x.bz2", "x.bz2.bz2", "x"}));
  EXPECT_EQ(catalog::names_affected_by("a.tar"), (V{"a.tar", "a.tar.bz2", "a.tbz2", "a.tbz"}));
  EXPECT_EQ(catalog::names_affected_by("a.tbz"), (V{"a.tbz", "a.tbz.bz2", "a.tar", "a.tar.bz2", "a.tbz2"}));
  EXPECT_EQ(catalog::names_affected_by("..bz2"), (V{"..bz2", "..bz2.bz2"}));
}

// Every directory made of a small universe of names that compete with one another (each absent,
// present and bzip2, or present and not bzip2), and every change of one entry: each name whose
// showing changes (shown differently, or shown from another source entry) and each source entry
// shown under another name is one names_affected_by() gives for the entry that changed. What the
// source watcher tells the kernel to drop is exactly that, so a name left out would stay stale.
TEST(NamesAffectedBy, CoversEveryNameAChangeOfOneEntryCanReshow) {
  const std::vector<std::string> universe = {"a",     "a.bz2", "a.bz2.bz2", "a.tar", "a.tar.bz2",
                                             "a.tbz", "a.tbz2", "a.tar.tbz", "a.tar.tar"};
  const size_t n = universe.size();
  // state of a name: 0 absent, 1 present and bzip2, 2 present and not bzip2
  auto listing = [&](const std::vector<int>& state) {
    std::vector<catalog::SourceEntry> entries;
    for (size_t i = 0; i < n; ++i)
      if (state[i]) entries.push_back(regular(universe[i], state[i] == 1));
    std::vector<catalog::NamingNote> notes;
    std::map<std::string, std::pair<std::string, bool>> shown;  // shown name -> source name, decompressed
    for (const catalog::ShownEntry& e : catalog::map_directory(std::move(entries), &notes)) shown[e.name] = {e.source_name, e.decompressed};
    return shown;
  };
  auto changed_names = [](const auto& before, const auto& after) {
    std::set<std::string> names;
    for (const auto* side : {&before, &after})
      for (const auto& [name, source] : *side) {
        const auto* other = side == &before ? &after : &before;
        const auto it = other->find(name);
        if (it == other->end() || it->second != source) {
          names.insert(name);           // the kernel's entry for the shown name
          names.insert(source.first);   // the node of the source entry behind it
        }
      }
    return names;
  };
  size_t states = 1, checked = 0;
  for (size_t i = 0; i < n; ++i) states *= 3;
  std::vector<int> state(n);
  for (size_t code = 0; code < states; ++code) {
    for (size_t i = 0, c = code; i < n; ++i, c /= 3) state[i] = static_cast<int>(c % 3);
    const auto before = listing(state);
    for (size_t i = 0; i < n; ++i) {
      const std::vector<std::string> affected = catalog::names_affected_by(universe[i]);
      const std::set<std::string> allowed(affected.begin(), affected.end());
      for (int next = 0; next < 3; ++next) {
        if (next == state[i]) continue;
        std::vector<int> changed = state;
        changed[i] = next;
        for (const std::string& name : changed_names(before, listing(changed))) {
          ++checked;
          ASSERT_TRUE(allowed.count(name)) << "'" << name << "' is shown otherwise after '" << universe[i]
                                           << "' went from state " << state[i] << " to " << next;
        }
      }
    }
  }
  EXPECT_GT(checked, 10000u);
}

// ---- shown_link_target ------------------------------------------------------------------------------

// A directory laid out like a dump mirror: dumps/20261101/{all.json.bz2, notes.txt.bz2, x.tbz2},
// with "latest" links in dumps/. SOURCE is the temporary directory; links are named relative to it.
class ShownLinkTarget : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dumps() / "20261101");
    for (const char* f : {"all.json.bz2", "x.tbz2", "a.tar.bz2", "a.tbz", "taken.bz2", "taken"})
      write_file(dumps() / "20261101" / f, as_span(to_bytes("BZh9")));
    write_file(dumps() / "20261101" / "fake.bz2", as_span(to_bytes("not bzip2")));
    ASSERT_EQ(root_.open(dir_.path().string()), 0);
  }
  std::filesystem::path dumps() const { return dir_.path() / "dumps"; }
  // The link's path relative to SOURCE (the link itself need not exist: only its directory counts).
  static std::string link(const std::string& name) { return "dumps/" + name; }
  std::string shown(const std::string& link_rel, const std::string& target) const {
    return fs::shown_link_target(root_, link_rel, target);
  }

  TempDir dir_;
  io::LocalSourceRoot root_;
};

TEST_F(ShownLinkTarget, ACompressedTargetIsRenamedAsTheMountShowsIt) {
  EXPECT_EQ(shown(link("latest-all.json.bz2"), "20261101/all.json.bz2"), "20261101/all.json");
  EXPECT_EQ(shown(link("latest-x.tbz2"), "20261101/x.tbz2"), "20261101/x.tar");
  EXPECT_EQ(shown(link("20261101/same-dir.bz2"), "all.json.bz2"), "all.json");
  EXPECT_EQ(shown(link("20261101/up.bz2"), "../20261101/all.json.bz2"), "../20261101/all.json");
  EXPECT_EQ(shown(link("20261101/up.bz2"), "./../20261101/./all.json.bz2"), "./../20261101/./all.json");
}

TEST_F(ShownLinkTarget, ATargetWhoseShorterNameIsTakenKeepsItsName) {
  EXPECT_EQ(shown(link("l.bz2"), "20261101/taken.bz2"), "20261101/taken.bz2");
}

TEST_F(ShownLinkTarget, TargetsTheMountDoesNotShowDecompressedAreLeftAlone) {
  for (const std::string target : {"20261101/notes.txt", "20261101", "20261101/", "plain", ".bz2", "20261101/.bz2",
                                   "20261101/all.json.bz2/", "x.bz2.txt", "20261101/missing.json.bz2",
                                   "20261101/fake.bz2"}) {
    EXPECT_EQ(shown(link("l.bz2"), target), target) << target;
  }
}

TEST_F(ShownLinkTarget, TargetsOutsideSourceAreLeftAlone) {
  for (const std::string target : {"../../etc/x.bz2", "/etc/x.bz2", "../dumps/../../x.bz2", "../../../20261101/all.json.bz2"})
    EXPECT_EQ(shown(link("l.bz2"), target), target) << target;
}

// With a.tar.bz2 and a.tbz side by side, "a.tar" is a.tar.bz2's and a.tbz is shown raw: a link to
// a.tbz must point to a.tbz, never to the other file's content.
TEST_F(ShownLinkTarget, ALinkToTheLoserOfACollisionPointsToIt) {
  std::vector<catalog::NamingNote> notes;
  const std::vector<catalog::ShownEntry> shown_entries =
      catalog::map_directory({regular("a.tar.bz2", true), regular("a.tbz", true)}, &notes);
  ASSERT_EQ(shown_entries.size(), 2u);
  ASSERT_EQ(shown_entries[1].name, "a.tbz") << "the link's target is shown raw, under its own name";
  EXPECT_EQ(shown(link("latest.tbz"), "20261101/a.tbz"), "20261101/a.tbz");
  EXPECT_EQ(shown(link("latest.tar.bz2"), "20261101/a.tar.bz2"), "20261101/a.tar");
}

TEST(LexicallyBeneath, ResolvesRelativeTargetsInsideSourceOnly) {
  EXPECT_EQ(io::lexically_beneath("d/l", "x"), std::optional<std::string>("d/x"));
  EXPECT_EQ(io::lexically_beneath("l", "d/./x"), std::optional<std::string>("d/x"));
  EXPECT_EQ(io::lexically_beneath("a/b/l", "../../x"), std::optional<std::string>("x"));
  EXPECT_EQ(io::lexically_beneath("a/b/l", "../../../x"), std::nullopt);
  EXPECT_EQ(io::lexically_beneath("l", "/etc/passwd"), std::nullopt);
  EXPECT_EQ(io::lexically_beneath("l", ".."), std::nullopt);
  EXPECT_EQ(io::lexically_beneath("d/l", ".."), std::nullopt);
  EXPECT_EQ(io::lexically_beneath("l", ""), std::nullopt);
}

}  // namespace
}  // namespace mibz2::test
