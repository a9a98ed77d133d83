// Whether the user a request comes from may read (or search) a file as it is now. The kernel
// checked the attributes it cached (default_permissions); this checks the file as it is now, so
// that a chmod or chown takes effect for the next open, not an hour later.
#pragma once

#include <fuse_lowlevel.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <functional>

namespace mibz2::fs {

// Who asks: the request's user and group, and whether they are in a group besides (asked only
// when the group decides: fuse_req_getgroups reads /proc).
struct Caller {
  uid_t uid = 0;
  gid_t gid = 0;
  std::function<bool(gid_t)> in_group;  // null: no supplementary groups
};

// The caller of a FUSE request.
Caller caller_of(fuse_req_t req);

// Whether `caller` may `mask` (R_OK, X_OK, or both) the file `st` describes: 0 or EACCES. Root may
// always (the mount shows nothing it could not read itself).
int permitted(const Caller& caller, const struct stat& st, int mask);

}  // namespace mibz2::fs
