// Who may have written an index file for the programs to believe it (index/FORMAT.md, "Trust").
//
// Every check of an index's content (format, identity, the 8 sampled blocks) guards against an
// index that matches a file by accident; none can guard against one crafted to match: a block whose
// record is shifted is caught only when the block before it is decoded, and until then its bytes
// are served at the wrong offset. So an index file is read at all only if its writer could not have
// been anyone but the user the program runs as (its effective uid) or root, as ssh's StrictModes
// decides about authorized_keys:
//
//   the file   is a regular file, owned by the euid or by root, not writable by group or others;
//   its directory (the one it was opened beneath) is owned by the euid or by root, and either is
//              not writable by group or others, or has the sticky bit (then nobody else can
//              rename or remove the trusted owner's file, nor put another in its place).
//
// The rule is a pure function of the two `struct stat` and the euid: callers take them with fstat
// of the descriptor they read and of the directory descriptor they opened it beneath, so nothing
// can be swapped between the check and the read.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <string>

namespace mibz2::index {

enum class Trust : uint8_t {
  kTrusted,
  kFileNotRegular,  // not a regular file
  kFileOwner,       // owned by someone else than the euid and root
  kFileWritable,    // writable by group or others
  kDirNotDirectory, // the directory it was opened beneath is not one (a caller's mistake)
  kDirOwner,        // its directory is owned by someone else than the euid and root
  kDirWritable,     // its directory is writable by group or others, without the sticky bit
};

// The directory part of the rule: whether index files in a directory of these attributes can be
// believed at all (the index directory at mount).
Trust judge_index_dir(const struct stat& dir, uid_t euid);
// The whole rule, for a file of attributes `file` found in a directory of attributes `dir`.
Trust judge_index_file(const struct stat& file, const struct stat& dir, uid_t euid);

// Why `trust` (not kTrusted) was given, naming owners and modes: "owned by uid 65534 (only uid
// 1000's or root's are believed)", "its directory is writable by group or others without the
// sticky bit (mode 0777)".
std::string explain(Trust trust, const struct stat& file, const struct stat& dir, uid_t euid);
// The same for a directory's own part of the rule, said of the directory: "writable by group or
// others without the sticky bit (mode 0777)".
std::string explain_dir(Trust trust, const struct stat& dir, uid_t euid);

}  // namespace mibz2::index
