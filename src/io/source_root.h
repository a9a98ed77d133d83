// The one way anything under SOURCE is reached. SOURCE is a directory that other users and
// programs write into, so every name in it is hostile: a path is resolved relative to a descriptor
// of SOURCE, beneath it, never through a symlink in any component (openat2 with
// RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS; where the kernel lacks openat2, a
// walk of the components with O_NOFOLLOW), opened O_NONBLOCK | O_NOCTTY | O_CLOEXEC (a fifo cannot
// block the daemon, a terminal cannot become its controlling terminal) and then checked with
// fstat for the kind the caller wants. Callers compare the device and inode it returns with what
// they expect (ESTALE when the path holds another file now).
//
// Paths given here are relative to SOURCE ("" is SOURCE itself) and never contain "." or ".."
// components (lexically_beneath() makes one from a symlink's target).
#pragma once

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <optional>
#include <string>

namespace mibz2::io {

class SourceRoot {
 public:
  enum class Kind { kRegular, kDirectory };

  // Opens the directory `root` (an absolute path). Returns 0 or an errno value.
  int open(const std::string& root);
  ~SourceRoot();
  SourceRoot() = default;
  SourceRoot(const SourceRoot&) = delete;
  SourceRoot& operator=(const SourceRoot&) = delete;

  const std::string& path() const { return path_; }
  // SOURCE's absolute path joined with a relative one (for messages and the index store's names).
  std::string absolute(const std::string& rel) const;
  // The inverse: the path relative to SOURCE of an absolute path made by absolute(), or nullopt.
  std::optional<std::string> relative(const std::string& abs) const;

  // Opens `rel` read-only as a `kind`, filling *st from the opened descriptor. Returns the
  // descriptor, or -errno: ELOOP/ENOTDIR for a symlink on the way, EXDEV or EINVAL for a path that
  // would leave SOURCE, ENOENT, and EISDIR/ENOTDIR/EINVAL when it is not the kind asked for.
  int open(const std::string& rel, Kind kind, struct stat* st) const;
  // Opens `rel` as a regular file the same way, reached as a name in its directory (opened first,
  // beneath SOURCE), and fills *dir_st with that directory's attributes (fstat of the descriptor
  // it was opened beneath): for files whose trust depends on who can write where they are
  // (index/index_trust.h). Returns the descriptor or -errno, as open() does.
  int open_in_dir(const std::string& rel, struct stat* st, struct stat* dir_st) const;
  // lstat of `rel`: its last component is not followed; the directories on the way are reached as
  // open() reaches them. Returns 0 or an errno value.
  int lstat(const std::string& rel, struct stat* st) const;
  // The target of the symlink `rel`. Returns 0 or an errno value.
  int readlink(const std::string& rel, std::string* target) const;
  // statvfs of SOURCE's file system.
  int statvfs(struct statvfs* out) const;

  // Tests: resolve by walking components even where openat2 exists (both ways must agree).
  static void use_component_walk_for_testing(bool yes);

 private:
  // The directory holding `rel`'s last component, opened beneath SOURCE, and that component.
  int open_parent(const std::string& rel, std::string* name) const;
  int open_beneath(const std::string& rel, int flags) const;

  std::string path_;
  int fd_ = -1;
};

// "d/x.bz2" for a symlink at `link_rel` ("d/latest.bz2") whose target is "x.bz2": a relative target
// resolved against the link's directory, lexically ("a/../b" is "b"), or nullopt when it is absolute
// or climbs out of SOURCE.
std::optional<std::string> lexically_beneath(const std::string& link_rel, const std::string& target);

// dir + "/" + name, with "" standing for SOURCE itself.
std::string join_rel(const std::string& dir, const std::string& name);

}  // namespace mibz2::io
