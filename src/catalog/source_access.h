// How the Catalog reaches a compressed file's source: the only three things it ever does to one
// (open it for reading, look at its stamp, read its sidecar index). For a local file they are made
// of four plain steps (open, stat, open the sidecar, the bytes of a descriptor), which the mount
// overrides with an access that opens beneath SOURCE and checks the file is the one its node stands
// for (src/fs), and tests with one that puts faults in between; the programs, which open the paths
// their user named, take the plain one here. A source that is not a local file overrides the three
// themselves.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "index/block_index.h"
#include "index/index_store.h"
#include "io/source.h"
#include "io/source_bytes.h"
#include "io/source_stamp.h"
#include "io/unique_fd.h"

namespace mibz2::catalog {

class CatalogFile;

class SourceAccess {
 public:
  virtual ~SourceAccess() = default;

  // --- what the catalog does ---
  // The file's source opened for reading, with the stamp of the content it was opened on; or why
  // not (the machine's: its words say what failed).
  virtual base::Result<std::unique_ptr<io::Source>> open_source(const CatalogFile& file) const;
  // The source's stamp now, without opening it; or why not.
  virtual base::Result<io::SourceStamp> stamp(const CatalogFile& file) const;
  // The file's sidecar index (its path + index::kSidecarSuffix), read for a source of identity `id`
  // under the trust rule of where it lies (index_trust.h for a local file); ENOENT when there is
  // none, or why it cannot be read.
  virtual base::Result<index::LoadedIndex> load_sidecar(const CatalogFile& file, const index::SourceIdentity& id) const;
  // What load_sidecar reads, as messages and reports name it.
  virtual std::string sidecar_name(const CatalogFile& file) const;

  // --- a local file: the steps the three above are made of (a source of another kind has none:
  //     these then fail with ENOTSUP) ---
  // Opens the file's source read-only: a regular file, never blocking, never a controlling
  // terminal. Returns the descriptor and fills *st, or why not (source_opened's words).
  virtual base::Result<io::UniqueFd> open(const CatalogFile& file, struct stat* st) const;
  // The source's attributes, without opening it or following a final symlink; or why not.
  virtual base::Status stat(const CatalogFile& file, struct stat* st) const;
  // Opens the file's sidecar index (its path + index::kSidecarSuffix) read-only, the same way as
  // the source but never through a symlink as its last component, as a name in its directory:
  // returns the descriptor, or why not (ENOENT when there is none, also when its name would be too
  // long to exist: sidecar_opened), and fills *dir_st with fstat of the directory descriptor it
  // was opened beneath (for the trust rule, index/index_trust.h).
  virtual base::Result<io::UniqueFd> open_sidecar(const CatalogFile& file, struct stat* dir_st) const;
  // The bytes of a source open() opened (`fd`, not owned, of `size` bytes), as the catalog reads
  // them to build or validate its index: io::FdBytes (pread, read errors carried as errors).
  // A test may put faults in between.
  virtual std::unique_ptr<io::SourceBytes> bytes(int fd, uint64_t size) const;
};

// A source opened by the catalog, and its identity as read from it.
struct OpenedSource {
  std::unique_ptr<io::Source> source;
  index::SourceIdentity id;  // size, mtime, inode, fingerprint
};
// The one way the catalog opens a source (through `access`), or why it cannot (the machine's: it
// cannot be opened, stated or read; the words say which, with the errno).
base::Result<OpenedSource> open_source(const SourceAccess& access, const CatalogFile& file);

// The words of every access, from what an open of the io layer returned (a descriptor, or -errno):
// the source's descriptor, or "cannot open: No such file or directory (ENOENT)".
base::Result<io::UniqueFd> source_opened(int fd_or_errno);
// The same for `file`'s sidecar ("cannot open PATH.mibz2idx: ..."). A sidecar's name is its
// source's with ".mibz2idx" added: for a source whose name is within 9 bytes of the longest the file
// system allows (NAME_MAX, 255 bytes on most), the sidecar's cannot exist (ENAMETOOLONG), and there
// is simply no sidecar (ENOENT), nothing to warn about.
base::Result<io::UniqueFd> sidecar_opened(int fd_or_errno, const CatalogFile& file);
// stat(2)'s 0 or errno value, in words.
base::Status source_stated(int errno_value);

// For paths a user named on a command line: symlinks followed, as any program follows them.
class PlainSourceAccess final : public SourceAccess {
 public:
  base::Result<io::UniqueFd> open(const CatalogFile& file, struct stat* st) const override;
  base::Status stat(const CatalogFile& file, struct stat* st) const override;
  base::Result<io::UniqueFd> open_sidecar(const CatalogFile& file, struct stat* dir_st) const override;
};

}  // namespace mibz2::catalog
