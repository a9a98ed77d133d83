// SOURCE as a mount reaches it, chosen once from how the user named it: a local directory (its
// tree reached beneath its descriptor, the catalog's files opened the same way: BeneathAccess),
// or a URL (io::is_url): a remote object or S3 prefix (io/remote_source_root.h), the catalog's
// files opened by request (catalog/remote_source_access.h).
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "catalog/source_access.h"
#include "io/source_root.h"

namespace mibz2::fs {

struct MountSource {
  std::unique_ptr<io::SourceRoot> root;
  std::unique_ptr<catalog::SourceAccess> access;  // the catalog's way to root's files
};

// SOURCE named `source` (an absolute path, or a URL), opened: or why not, in words naming it.
base::Result<MountSource> open_mount_source(const std::string& source);

}  // namespace mibz2::fs
