#include "fs/source_directory.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "index/bzip2_head.h"
#include "io/descriptor_limit.h"
#include "io/source_bytes.h"

namespace mibz2::fs {
namespace {

// Whether the head of an open file says bzip2. A head that cannot be read says nothing, and a read
// error must not change what the mount shows (the file under its own name, with its compressed
// size): the name, which looks compressed, decides, and the listing is not kept (*sure false), so
// the next one looks again. The catalog then answers EIO for the file until it can be read.
bool head_is_bzip2(int fd, bool* sure) {
  const int yes = index::starts_like_bzip2(fd);
  if (yes < 0) *sure = false;
  return yes != 0;
}

// A regular file beneath SOURCE, opened as every file is (never followed, never blocking).
bool file_is_bzip2(const io::SourceRoot& root, const std::string& rel, bool* sure) {
  struct stat st;
  const int fd = root.open(rel, io::SourceRoot::Kind::kRegular, &st);
  if (fd < 0) return false;
  const bool yes = head_is_bzip2(fd, sure);
  close(fd);
  return yes;
}

// A symlink is shown like the file it points to (decompressed) only when its target is relative
// and names a regular bzip2 file beneath SOURCE, reached without any further symlink.
bool link_leads_to_bzip2(const io::SourceRoot& root, const std::string& link, bool* sure) {
  std::string target;
  if (root.readlink(link, &target) != 0) return false;
  const auto beneath = io::lexically_beneath(link, target);
  return beneath && file_is_bzip2(root, *beneath, sure);
}

}  // namespace

int list_source_directory(const io::SourceRoot& root, const std::string& dir, std::vector<catalog::SourceEntry>* out,
                          bool* sure) {
  bool ignored;
  if (!sure) sure = &ignored;
  *sure = true;
  std::vector<io::SourceRoot::Entry> listed;
  if (const int err = root.list(dir, &listed)) return err;
  for (io::SourceRoot::Entry& l : listed) {
    catalog::SourceEntry e{std::move(l.name), catalog::SourceEntry::Type::kOther, false, io::SourceStamp::of(l.st)};
    if (S_ISDIR(l.st.st_mode)) e.type = catalog::SourceEntry::Type::kDirectory;
    else if (S_ISLNK(l.st.st_mode)) e.type = catalog::SourceEntry::Type::kSymlink;
    else if (S_ISREG(l.st.st_mode)) e.type = catalog::SourceEntry::Type::kRegular;
    else continue;  // devices, fifos and sockets are not mirrored
    if (catalog::decompressed_name(e.name) && e.type != catalog::SourceEntry::Type::kDirectory) {
      const std::string rel = io::join_rel(dir, e.name);
      if (l.bzip2) e.is_bzip2 = *l.bzip2 && e.type == catalog::SourceEntry::Type::kRegular;
      else if (e.type == catalog::SourceEntry::Type::kRegular) e.is_bzip2 = file_is_bzip2(root, rel, sure);
      else e.is_bzip2 = link_leads_to_bzip2(root, rel, sure);
    }
    out->push_back(std::move(e));
  }
  return 0;
}

std::string shown_link_target(const io::SourceRoot& root, const std::string& link, const std::string& target) {
  const auto resolved = io::lexically_beneath(link, target);
  const size_t slash = target.rfind('/');
  if (!resolved || slash + 1 == target.size()) return target;
  // How the target's own directory is shown: the same rules as any listing of it.
  const size_t rslash = resolved->rfind('/');
  const std::string dir = rslash == std::string::npos ? std::string() : resolved->substr(0, rslash);
  const std::string name = rslash == std::string::npos ? *resolved : resolved->substr(rslash + 1);
  std::vector<catalog::SourceEntry> entries;
  if (list_source_directory(root, dir, &entries) != 0) return target;
  std::vector<catalog::NamingNote> notes;
  for (const catalog::ShownEntry& e : catalog::map_directory(std::move(entries), &notes)) {
    if (e.source_name != name) continue;
    if (!e.decompressed || e.type != catalog::SourceEntry::Type::kRegular) return target;
    return target.substr(0, slash == std::string::npos ? 0 : slash + 1) + e.name;
  }
  return target;
}

}  // namespace mibz2::fs
