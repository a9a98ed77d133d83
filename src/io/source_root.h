// The one way anything under SOURCE is reached. A local SOURCE is a directory that other users and
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
#include <vector>

namespace mibz2::io {

// SOURCE, as the mount reaches it: a local directory (LocalSourceRoot, below) or a remote object
// or S3 prefix (remote_source_root.h). The mount asks only these questions of it.
class SourceRoot {
 public:
  enum class Kind { kRegular, kDirectory };

  // An entry of a directory, as listed: its own attributes (a symlink's, not its target's), and
  // what the tree knows of its content without reading it: nothing (nullopt) for a local file,
  // whose head the lister reads; true for a remote object, taken for bzip2 when its name looks
  // compressed and checked when it is opened (reading every head would cost a listing a request
  // per entry).
  struct Entry {
    std::string name;
    struct stat st;
    std::optional<bool> bzip2;
  };

  virtual ~SourceRoot() = default;

  // SOURCE as the user named it (a URL with no secret in it, for a remote one).
  virtual const std::string& path() const = 0;
  // SOURCE's name joined with a relative path: the file's name in messages, in the index store
  // and in the catalog (a remote object's URL, as its source access takes it).
  virtual std::string absolute(const std::string& rel) const = 0;
  // The inverse: the path relative to SOURCE of a name made by absolute(), or nullopt.
  virtual std::optional<std::string> relative(const std::string& abs) const = 0;

  // Opens `rel` read-only as a `kind`, filling *st from the opened descriptor. Returns the
  // descriptor, or -errno: ELOOP/ENOTDIR for a symlink on the way, EXDEV or EINVAL for a path that
  // would leave SOURCE, ENOENT, and EISDIR/ENOTDIR/EINVAL when it is not the kind asked for; a
  // remote tree has no descriptors: -EOPNOTSUPP.
  virtual int open(const std::string& rel, Kind kind, struct stat* st) const = 0;
  // Opens `rel` as a regular file the same way, reached as a name in its directory (opened first,
  // beneath SOURCE), and fills *dir_st with that directory's attributes (fstat of the descriptor
  // it was opened beneath): for files whose trust depends on who can write where they are
  // (index/index_trust.h). Returns the descriptor or -errno, as open() does.
  virtual int open_in_dir(const std::string& rel, struct stat* st, struct stat* dir_st) const = 0;
  // lstat of `rel`: its last component is not followed; the directories on the way are reached as
  // open() reaches them. Returns 0 or an errno value.
  virtual int lstat(const std::string& rel, struct stat* st) const = 0;
  // The entries of the directory `rel`, without . and .. (in no particular order). Returns 0 or
  // an errno value.
  virtual int list(const std::string& rel, std::vector<Entry>* out) const = 0;
  // The target of the symlink `rel`. Returns 0 or an errno value.
  virtual int readlink(const std::string& rel, std::string* target) const = 0;
  // statvfs of SOURCE's file system.
  virtual int statvfs(struct statvfs* out) const = 0;
  // Whether the kernel tells of changes in it (inotify): a local directory. A remote tree is
  // looked at again instead, at most every few seconds (its attributes' timeout).
  virtual bool watchable() const = 0;
};

// A local directory: the one way anything under it is reached (see the top of this file).
class LocalSourceRoot final : public SourceRoot {
 public:
  // Opens the directory `root` (an absolute path). Returns 0 or an errno value.
  int open(const std::string& root);
  ~LocalSourceRoot() override;
  LocalSourceRoot() = default;
  LocalSourceRoot(const LocalSourceRoot&) = delete;
  LocalSourceRoot& operator=(const LocalSourceRoot&) = delete;

  const std::string& path() const override { return path_; }
  std::string absolute(const std::string& rel) const override;
  std::optional<std::string> relative(const std::string& abs) const override;
  int open(const std::string& rel, Kind kind, struct stat* st) const override;
  int open_in_dir(const std::string& rel, struct stat* st, struct stat* dir_st) const override;
  int lstat(const std::string& rel, struct stat* st) const override;
  int list(const std::string& rel, std::vector<Entry>* out) const override;
  int readlink(const std::string& rel, std::string* target) const override;
  int statvfs(struct statvfs* out) const override;
  bool watchable() const override { return true; }

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
