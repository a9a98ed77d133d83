// The mount table of this process (/proc/self/mountinfo): which directories are mount points, and
// of what. mibz2fs refuses to mount on a directory that is already a mount point; the mount tests
// wait for their mount to appear and check that none is left behind.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mibz2::io {

// One line of a mountinfo file (proc(5)): the fields we use, unescaped.
struct MountEntry {
  std::string root;         // field 4: the directory of the filesystem that is mounted
  std::string mount_point;  // field 5: where, as an absolute path
  std::string fs_type;      // the first field after "-", e.g. "ext4" or "fuse.mibz2fs"
  std::string source;       // the next one: the device, or for FUSE the fsname
  std::string device;       // field 3: "MAJOR:MINOR", the st_dev of its files (and its bdi's name)
};

// Undoes mountinfo's escapes: the kernel writes space, tab, newline and backslash in paths as a
// backslash and three octal digits ("\040"). Anything else is kept as it is.
std::string unescape_mount_field(std::string_view field);

// The entries of a mountinfo text, in its order (the order of mounting); lines that do not have
// the fields are left out.
std::vector<MountEntry> parse_mountinfo(std::string_view text);

// This process's mount table, or an empty one when /proc/self/mountinfo cannot be read.
std::vector<MountEntry> read_mount_table();

// The entry mounted at `mount_point` (the last one, the one that is seen, when mounts are stacked
// there), or nullopt.
std::optional<MountEntry> find_mount(const std::vector<MountEntry>& table, std::string_view mount_point);

// Whether `mount_point` (absolute, without a trailing slash) is a mount point now.
bool is_mount_point(std::string_view mount_point);

}  // namespace mibz2::io
