// Where index files live and how they are loaded and saved (index/FORMAT.md, "Where index files
// live"): one file per source content, named by the content identity (size and fingerprint), so
// that every copy of a dump finds it; written atomically under a temporary name unique to the
// writing host and process, so that mounts sharing a directory never see or make a partial file.
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <span>
#include <string>

#include "base/status.h"
#include "index/block_index.h"
#include "io/source.h"
#include "io/source_bytes.h"

namespace mibz2::index {

// The directory the rule of index/index_dir.h gives this process (empty string if none).
std::string default_index_dir();

// Size, mtime, inode and the fingerprint (XXH3-64 of the first and last 64 KiB) of an open file;
// or why they cannot be had (the machine's: the stat or a read failed, or the file shrank).
base::Result<SourceIdentity> identify_source(int fd);
// The same of an opened source of any kind: its stamp now, and the fingerprint read through it.
base::Result<SourceIdentity> identify_source(const io::Source& source);
// The fingerprint of the first `size` bytes of `source`, as identify_source takes it of a file of
// that size (so also the fingerprint a file that grew had at that size); or why it cannot be had
// (a read failed; EIO: the source is shorter).
base::Result<uint64_t> fingerprint_of(const io::SourceBytes& source, uint64_t size);

// The largest index file a source of `source_size` bytes can have (FORMAT.md, "Validity").
uint64_t max_index_file_size(uint64_t source_size);

// A sidecar index is published next to its source under the source's name and this suffix
// ("dump.json.bz2.mibz2idx"); it is only ever read (FORMAT.md, "Sidecar indexes").
inline constexpr const char* kSidecarSuffix = ".mibz2idx";

// The file of the index directory that holds an index, as a store wrote or read it: what lets
// an index it supersedes be removed only while that very file is there (FORMAT.md, "A file that
// grew").
struct StoredFile {
  uint64_t device = 0;
  uint64_t inode = 0;  // 0: none known
  bool known() const { return inode != 0; }
};

// What an index file is for the source it is offered for.
enum class Load {
  kCurrent,      // its identity is the source's, all of it (size, fingerprint, mtime, inode)
  kSameContent,  // size and fingerprint match, mtime or inode do not (a copy, another machine):
                 // usable once a sample of its blocks is checked against the source
  kMissing,      // there is none
  kStale,        // a well-formed index of other content (size or fingerprint differ)
  kInvalid,      // not a usable index file (not regular, too large, damaged, another version)
  kUntrusted,    // written where someone the trust rule does not believe could have written it
                 // (index/index_trust.h): not read at all
};
const char* to_string(Load load);

// What an index file is for a source, with the index when it can be used and why when it cannot.
struct LoadedIndex {
  Load load = Load::kMissing;
  BlockIndex index;  // kCurrent, kSameContent
  // kStale (ESTALE), kInvalid (EBADMSG for its content; the errno when it cannot be opened, read
  // or stated; EINVAL when not a regular file, EFBIG when too large), kUntrusted (EPERM): why it
  // is not used, naming the file. ok() otherwise.
  base::Status why;
  StoredFile file;  // the index file read (kCurrent, kSameContent)
};

// Reads the index file open at `fd` (named `name` in reasons) for a source of identity `id`, where
// `dir` is fstat of the directory descriptor it was opened beneath: regular files only, believed
// only as the trust rule says (index_trust.h, with fstat of `fd` itself), no larger than an index
// of that source can be, every field checked (index_format.h), then the identity compared.
LoadedIndex read_index_file(int fd, const struct stat& dir, const std::string& name, const SourceIdentity& id);
// The part of read_index_file that looks at the bytes alone, for an index whose bytes came from
// elsewhere (a remote object's sidecar, as trusted as the object: FORMAT.md): no larger than an
// index of that source can be, every field checked, then the identity compared. `file` is left
// unknown.
LoadedIndex judge_index_bytes(std::span<const uint8_t> bytes, const std::string& name, const SourceIdentity& id);

// Writes `index` atomically as `name` in the directory open at `dir_fd`: a temporary file beside
// it, named after `name`, this host and this process (".tmp.HOST.PID.XXXXXX", created
// exclusively), fsync'ed and renamed over `name`, then the directory fsync'ed. `shown` names it in
// messages. Returns ok, or the errno that stopped it with its words (*at_rename, if given, says
// whether only the rename failed; *written, if given, which file it is); nothing is left behind.
base::Status write_index_file_at(int dir_fd, const std::string& name, const std::string& shown,
                                 const BlockIndex& index, bool* at_rename = nullptr, StoredFile* written = nullptr);
// The same at `path` (its directory opened first): mibz2 index --output.
base::Status write_index_file(const std::string& path, const BlockIndex& index);

// The directory is opened once (O_DIRECTORY | O_NOFOLLOW) and held: every load, save and cleanup
// works relative to that descriptor, so a path replaced by a symlink (or another directory) while
// the store lives changes nothing. A directory missing at construction is created (mode 0700) and
// opened at the first save.
class IndexStore {
 public:
  // `dir` empty: default_index_dir(); root's /var/cache/mibz2fs is created (0700) or checked here,
  // and left unused (dir() empty) if it is not safe (index/index_dir.h). Any directory is left
  // unused, with problem() saying why, when it is not a directory (a regular file, a symlink),
  // cannot be opened, or fails the directory part of the trust rule (index_trust.h).
  explicit IndexStore(std::string dir = {});
  ~IndexStore();
  using Load = index::Load;

  // Empty when there is no place to store indexes (then problem() says why).
  const std::string& dir() const { return dir_; }
  const std::string& problem() const { return problem_; }
  // The index file for a source content: "<fingerprint, 16 hex>-<size>.idx" in dir().
  std::string path_for(const SourceIdentity& id) const;
  static std::string name_for(const SourceIdentity& id);

  // The index of the source `id` if there is one (kCurrent or kSameContent), else kMissing, or why
  // the one there is not used (kStale, kInvalid, kUntrusted).
  LoadedIndex load(const SourceIdentity& id) const;

  // Writes the index under the name of its source's content (index.source). On failure returns
  // why (EROFS once the store is read-only); a directory that cannot be used at all marks the
  // store read-only, so callers warn once and keep indexes in memory. Before writing, removes the temporary files of
  // writers that died (remove_stale_temporaries), at most once an hour. *written, if given, is
  // the file written.
  base::Status save(const BlockIndex& index, StoredFile* written = nullptr);
  // Removes the index of content `was` that a build of the file it described, grown, superseded
  // (FORMAT.md, "A file that grew"): only while `file` (the one this store wrote or read under
  // that name) is still there, and only if it is this user's (never root's or another's when this
  // user is not root). Returns whether it was removed.
  bool remove_superseded(const SourceIdentity& was, const StoredFile& file) const;
  bool read_only() const;

  // Temporary files a writer left behind (it died between creating and renaming them): removed
  // when older than kStaleTemporaryAge, or sooner when they name this host and a process that no
  // longer exists (and are older than kDeadWriterGrace, a write takes milliseconds). Returns how
  // many were removed.
  static constexpr std::chrono::seconds kStaleTemporaryAge{3600};
  static constexpr std::chrono::seconds kDeadWriterGrace{60};
  size_t remove_stale_temporaries() const;

 private:
  // Opens dir_ (creating it first if `create`) and checks it: its descriptor (-1 when it does not
  // exist and !create), or why it cannot be used.
  base::Result<int> open_dir(bool create) const;
  // The held descriptor of dir_, opened (and if `create`, made) now if it was missing until now;
  // -1 when there is none (no directory, or missing and !create), or why it cannot be used.
  base::Result<int> held_dir(bool create) const;

  std::string dir_;
  std::string problem_;  // why dir_ is empty
  mutable std::atomic<int> dir_fd_{-1};  // dir_, once opened (then fixed until the destructor closes it)
  mutable std::mutex mu_;  // a leaf lock
  bool read_only_ = false;  // guarded by mu_
  std::chrono::steady_clock::time_point last_cleaned_{};  // guarded by mu_
  bool cleaned_ = false;  // guarded by mu_
};

}  // namespace mibz2::index
