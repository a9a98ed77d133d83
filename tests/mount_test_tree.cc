#include "mount_test_tree.h"

#include <sys/stat.h>
#include <unistd.h>

#include <stdexcept>

namespace mibz2::test {
namespace {

namespace stdfs = std::filesystem;

Bytes libbz2_multistream(const std::vector<Bytes>& parts, int level) {
  Bytes out;
  for (const Bytes& p : parts) {
    const Bytes s = libbz2_compress(as_span(p), level);
    out.insert(out.end(), s.begin(), s.end());
  }
  return out;
}

Bytes tar_of(const std::map<std::string, Bytes>& files) {
  TempDir t;
  for (const auto& [name, data] : files) {
    stdfs::create_directories((t.path() / "in" / name).parent_path());
    write_file(t.path() / "in" / name, as_span(data));
  }
  CommandResult r = run_command("tar --owner=0 --group=0 --mtime=@1700000000 -cf - -C " +
                                shell_quote((t.path() / "in").string()) + " .");
  if (r.status != 0) throw std::runtime_error("tar failed");
  return r.out;
}

// ~3 MB of mixed content: ~35 blocks at level 1.
Bytes multi_block_content() {
  std::vector<Bytes> parts;
  for (uint64_t i = 0; i < 12; ++i) {
    parts.push_back(text_bytes(150000, 100 + i));
    parts.push_back(runs_bytes(60000, 200 + i));
    parts.push_back(random_bytes(40000, 300 + i));
  }
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

}  // namespace

Tree::Tree() : src_(dir_.file("src")), originals_(dir_.file("originals")) {
  stdfs::create_directories(src_);
  stdfs::create_directories(originals_);
}

void Tree::dir(const std::string& rel, mode_t mode) {
  stdfs::create_directories(src_ / rel);
  Shown s;
  s.kind = Shown::kDir;
  s.mode = mode;
  s.source = src_ / rel;
  shown_[rel] = s;
  modes_.emplace_back(src_ / rel, mode);  // set last: a 0500 directory must still be filled
}

void Tree::plain(const std::string& rel, const Bytes& content, mode_t mode) {
  const stdfs::path p = src_ / rel;
  write_file(p, as_span(content));
  chmod(p.c_str(), mode);
  add_file(rel, content, mode, p);
}

void Tree::bz2(const std::string& source_rel, const std::string& shown_rel, const Bytes& original,
               const Bytes& compressed, mode_t mode) {
  const stdfs::path p = src_ / source_rel;
  write_file(p, as_span(compressed));
  chmod(p.c_str(), mode);
  Shown& s = add_file(shown_rel, original, mode, p);
  s.decompressed = true;
  s.blocks = block_count(compressed);
}

void Tree::symlink(const std::string& rel, const std::string& target) {
  const stdfs::path p = src_ / rel;
  if (::symlink(target.c_str(), p.c_str()) != 0) throw std::runtime_error("symlink " + p.string());
  Shown s;
  s.kind = Shown::kSymlink;
  s.mode = 0777;
  s.target = target;
  s.source = p;
  shown_[rel] = s;
}

void Tree::finish() {
  for (auto it = modes_.rbegin(); it != modes_.rend(); ++it) chmod(it->first.c_str(), it->second);
}

Shown& Tree::add_file(const std::string& rel, const Bytes& content, mode_t mode, const stdfs::path& source) {
  Shown s;
  s.kind = Shown::kFile;
  s.mode = mode;
  s.content = content;
  s.source = source;
  s.original = originals_ / std::to_string(shown_.size());
  write_file(s.original, as_span(content));
  return shown_[rel] = std::move(s);
}

size_t block_count(const Bytes& compressed) {
  FileLayout layout;
  if (!walk_file(as_span(compressed), &layout)) return SIZE_MAX;
  return layout.blocks.size();
}

const std::string kUtf8Name = "\xc3\xbcn\xc3\xaf\x63\xc3\xb6\x64\xc3\xa9 \xe2\x98\x83 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e.txt";

std::unique_ptr<Tree> make_main_tree() {
  auto t = std::make_unique<Tree>();
  t->plain("plain.txt", text_bytes(20000, 1));
  t->plain("empty", {});
  t->plain("script.sh", to_bytes("#!/bin/sh\necho hello\n"), 0755);
  t->plain("private.dat", random_bytes(5000, 2), 0600);

  const Bytes single = text_bytes(200000, 3);
  t->bz2("single.txt.bz2", "single.txt", single, libbz2_compress(as_span(single), 9));
  const Bytes multi = multi_block_content();
  t->bz2("multi.bin.bz2", "multi.bin", multi, libbz2_compress(as_span(multi), 1), 0640);
  // pbzip2-like: one stream per part, and one of them with two blocks.
  std::vector<Bytes> parts;
  for (uint64_t i = 0; i < 5; ++i) parts.push_back(text_bytes(90000 + 1000 * i, 10 + i));
  parts.push_back(text_bytes(150000, 20));
  Bytes whole;
  for (const Bytes& p : parts) whole.insert(whole.end(), p.begin(), p.end());
  Bytes ms = libbz2_multistream({parts.begin(), parts.end() - 1}, 9);
  const Bytes last = libbz2_compress(as_span(parts.back()), 1);
  ms.insert(ms.end(), last.begin(), last.end());
  t->bz2("multistream.txt.bz2", "multistream.txt", whole, ms);

  const Bytes tar1 = tar_of({{"doc/readme.txt", text_bytes(30000, 30)}, {"data.bin", random_bytes(20000, 31)}});
  t->bz2("archive.tbz2", "archive.tar", tar1, libbz2_compress(as_span(tar1), 9));
  const Bytes tar2 = tar_of({{"notes.txt", text_bytes(12000, 32)}});
  t->bz2("backup.tbz", "backup.tar", tar2, libbz2_compress(as_span(tar2), 5));
  // Two compressed files that both want "dup.tar": the first by source name wins, the other
  // stays raw under its own name.
  const Bytes dup = text_bytes(5000, 33);
  t->bz2("dup.tar.bz2", "dup.tar", dup, libbz2_compress(as_span(dup), 9));
  const Bytes dup2 = libbz2_compress(as_span(text_bytes(6000, 34)), 9);
  t->plain("dup.tbz", dup2);

  // A collision: the real "a" keeps its name, "a.bz2" stays raw.
  t->plain("a", to_bytes("I am the real a\n"));
  t->plain("a.bz2", libbz2_compress(as_span(text_bytes(3000, 35)), 9));
  // Only looks compressed.
  t->plain("fake.bz2", to_bytes("this is not bzip2 at all\njust text\n"));
  t->plain("zero.bz2", {});
  t->plain(".bz2", libbz2_compress(as_span(text_bytes(100, 36)), 9));  // no name left without the suffix
  const Bytes nothing;
  t->bz2("empty-stream.bz2", "empty-stream", nothing, libbz2_compress(as_span(nothing), 9));

  const Bytes spaces = text_bytes(40000, 40);
  t->bz2("name with spaces.txt.bz2", "name with spaces.txt", spaces, libbz2_compress(as_span(spaces), 9));
  const Bytes utf8 = text_bytes(30000, 41);
  t->bz2(kUtf8Name + ".bz2", kUtf8Name, utf8, libbz2_compress(as_span(utf8), 9));

  t->dir("dir");
  const Bytes nested = text_bytes(250000, 50);
  t->bz2("dir/nested.log.bz2", "dir/nested.log", nested, libbz2_compress(as_span(nested), 2), 0600);
  t->dir("dir/sub", 0750);
  t->plain("dir/sub/deep.bin", random_bytes(70000, 51));
  t->dir("dir/sub/deeper", 0700);
  const Bytes csv = text_bytes(10000, 52);
  t->bz2("dir/sub/deeper/x.csv.bz2", "dir/sub/deeper/x.csv", csv, libbz2_compress(as_span(csv), 9), 0444);
  t->plain("dir/sub/deeper/readme", to_bytes("deep down\n"));
  t->dir("empty-dir", 0555);
  t->dir("dir with space");
  t->plain("dir with space/f", to_bytes("f\n"));

  t->symlink("link-plain", "plain.txt");
  t->symlink("dir/link-up", "../single.txt.bz2");
  t->symlink("dangling", "does/not/exist");
  t->symlink("abs-link", "/etc/hostname");
  t->symlink("link-dir", "dir");
  t->finish();
  return t;
}

}  // namespace mibz2::test
