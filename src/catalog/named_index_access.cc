#include "catalog/named_index_access.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <span>
#include <vector>

#include "index/index_store.h"
#include "io/fd_io.h"
#include "io/source_url.h"
#include "io/unique_fd.h"

namespace mibz2::catalog {

base::Result<index::LoadedIndex> NamedIndexAccess::load_sidecar(const CatalogFile& file,
                                                                const index::SourceIdentity& id) const {
  base::Result<index::LoadedIndex> got = load(id);
  // A sidecar that is not there is no news; an index the user named and that is not there is.
  if (!got.ok() && got.status().code() == ENOENT)
    return base::Status::error(EINVAL, "the index named for it, " + sidecar_name(file) + ", is not there: " +
                                           got.status().message());
  return got;
}

base::Result<index::LoadedIndex> NamedIndexAccess::load(const index::SourceIdentity& id) const {
  if (io::is_url(index_)) return remote_.load_index_at(index_, id);
  struct stat st;
  const io::UniqueFd fd(io::open_regular(index_.c_str(), &st));
  if (!fd.valid()) {
    const int err = -fd.get();
    return base::Status::os_error(err, "cannot open the index " + index_ + ": " + std::strerror(err));
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  MIBZ2_RETURN_ERROR_IF(size > index::max_index_file_size(id.size), EFBIG,
                        index_ + ": larger than an index of this file can be");
  std::vector<uint8_t> bytes(size);
  const ssize_t n = io::pread_full(fd.get(), bytes.data(), bytes.size(), 0);
  if (n < 0 || static_cast<uint64_t>(n) != size) {
    const int err = n < 0 ? errno : EIO;
    return base::Status::os_error(err, "cannot read the index " + index_ + ": " + std::strerror(err));
  }
  return index::judge_index_bytes(std::span<const uint8_t>(bytes), index_, id);
}

}  // namespace mibz2::catalog
