#include "index/index_trust.h"

#include <cstdio>

namespace mibz2::index {
namespace {

bool trusted_owner(uid_t owner, uid_t euid) { return owner == euid || owner == 0; }

bool writable_by_others(const struct stat& st) { return (st.st_mode & (S_IWGRP | S_IWOTH)) != 0; }

std::string mode_of(const struct stat& st) {
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  return mode;
}

std::string believed_owners(uid_t euid) {
  return euid == 0 ? "only root's are believed" : "only uid " + std::to_string(euid) + "'s or root's are believed";
}

}  // namespace

Trust judge_index_dir(const struct stat& dir, uid_t euid) {
  if (!S_ISDIR(dir.st_mode)) return Trust::kDirNotDirectory;
  if (!trusted_owner(dir.st_uid, euid)) return Trust::kDirOwner;
  // Sticky: others may add names, but never rename or remove a file they do not own.
  if (writable_by_others(dir) && !(dir.st_mode & S_ISVTX)) return Trust::kDirWritable;
  return Trust::kTrusted;
}

Trust judge_index_file(const struct stat& file, const struct stat& dir, uid_t euid) {
  if (!S_ISREG(file.st_mode)) return Trust::kFileNotRegular;
  if (!trusted_owner(file.st_uid, euid)) return Trust::kFileOwner;
  if (writable_by_others(file)) return Trust::kFileWritable;
  return judge_index_dir(dir, euid);
}

std::string explain(Trust trust, const struct stat& file, const struct stat& dir, uid_t euid) {
  switch (trust) {
    case Trust::kTrusted: return "trusted";
    case Trust::kFileNotRegular: return "not a regular file";
    case Trust::kFileOwner:
      return "owned by uid " + std::to_string(file.st_uid) + " (" + believed_owners(euid) + ")";
    case Trust::kFileWritable: return "writable by group or others (mode " + mode_of(file) + ")";
    case Trust::kDirNotDirectory:
    case Trust::kDirOwner:
    case Trust::kDirWritable: return "its directory is " + explain_dir(trust, dir, euid);
  }
  return "?";
}

std::string explain_dir(Trust trust, const struct stat& dir, uid_t euid) {
  switch (trust) {
    case Trust::kDirNotDirectory: return "not a directory";
    case Trust::kDirOwner: return "owned by uid " + std::to_string(dir.st_uid) + " (" + believed_owners(euid) + ")";
    case Trust::kDirWritable: return "writable by group or others without the sticky bit (mode " + mode_of(dir) + ")";
    default: return "trusted";
  }
}

}  // namespace mibz2::index
