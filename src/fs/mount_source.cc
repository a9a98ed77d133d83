#include "fs/mount_source.h"

#include <cerrno>
#include <cstring>

#include "catalog/name_mapping.h"
#include "catalog/remote_source_access.h"
#include "fs/beneath_access.h"
#include "io/remote_source_root.h"
#include "io/source_url.h"

namespace mibz2::fs {

base::Result<MountSource> open_mount_source(const std::string& source) {
  MountSource m;
  if (io::is_url(source)) {
    // One object is shown decompressed or not at all: the mount cannot read its bytes as they are.
    base::Result<io::SourceUrl> url = io::parse_source_url(source);
    MIBZ2_FORWARD_IF_ERROR(url);
    if (!url->is_prefix() && !catalog::decompressed_name(io::object_name(*url)))
      return base::Status::error(EINVAL, io::redacted_url(source) + ": not named as a bzip2 file is (NAME.bz2, "
                                         "NAME.tbz2 or NAME.tbz), so there is nothing to show");
    base::Result<std::unique_ptr<io::RemoteSourceRoot>> remote = io::RemoteSourceRoot::open(source);
    MIBZ2_FORWARD_IF_ERROR(remote);
    m.root = std::move(*remote);
    m.access = std::make_unique<catalog::RemoteSourceAccess>();
    return m;
  }
  auto local = std::make_unique<io::LocalSourceRoot>();
  if (const int err = local->open(source))
    return base::Status::error(err, source + ": cannot open SOURCE: " + std::strerror(err));
  m.access = std::make_unique<BeneathAccess>(*local);
  m.root = std::move(local);
  return m;
}

}  // namespace mibz2::fs
