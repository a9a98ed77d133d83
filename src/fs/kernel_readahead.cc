#include "fs/kernel_readahead.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "io/fd_io.h"
#include "io/mount_table.h"

namespace mibz2::fs {

base::Status set_kernel_readahead(const std::string& mountpoint, uint32_t bytes) {
  const std::optional<io::MountEntry> mount = io::find_mount(io::read_mount_table(), mountpoint);
  if (!mount || mount->fs_type.rfind("fuse", 0) != 0)
    return base::Status::error(ENOENT, "no FUSE mount at " + mountpoint + " in /proc/self/mountinfo");
  // A FUSE mount's bdi is named after its device number (fuseblk's has a suffix: not ours).
  const std::string setting = "/sys/class/bdi/" + mount->device + "/read_ahead_kb";
  const int fd = open(setting.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return base::Status::os_error(errno, setting + ": " + std::strerror(errno));
  const std::string kib = std::to_string(bytes >> 10);
  const int err = io::write_all(fd, kib.data(), kib.size());
  close(fd);
  if (err) return base::Status::os_error(err, setting + ": " + std::strerror(err));
  return base::Status();
}

}  // namespace mibz2::fs
