#include "fs/access_check.h"

#include <algorithm>
#include <cerrno>

namespace mibz2::fs {

Caller caller_of(fuse_req_t req) {
  const fuse_ctx* ctx = fuse_req_ctx(req);
  Caller c;
  c.uid = ctx->uid;
  c.gid = ctx->gid;
  c.in_group = [req](gid_t gid) {
    gid_t groups[256];
    const int n = fuse_req_getgroups(req, 256, groups);
    for (int i = 0; i < std::min(n, 256); ++i)
      if (groups[i] == gid) return true;
    return false;
  };
  return c;
}

int permitted(const Caller& caller, const struct stat& st, int mask) {
  if (caller.uid == 0) return 0;
  const mode_t m = st.st_mode;
  auto allows = [mask](mode_t bits) { return (bits & mask) == static_cast<mode_t>(mask); };
  if (caller.uid == st.st_uid) return allows((m >> 6) & 7) ? 0 : EACCES;
  const bool group_decides = ((m >> 3) & 7) != (m & 7);
  bool in_group = caller.gid == st.st_gid;
  if (!in_group && group_decides && caller.in_group) in_group = caller.in_group(st.st_gid);
  return allows(in_group ? (m >> 3) & 7 : m & 7) ? 0 : EACCES;
}

}  // namespace mibz2::fs
