// A memory cgroup of a test's own, for running a process under a memory limit as systemd units and
// containers do: cgroup v1 (the memory controller's hierarchy, /sys/fs/cgroup/memory) or v2 (the
// unified hierarchy, with the memory controller enabled for its children). It is made at the top
// of the hierarchy, or else under the test's own cgroup, limited with no swap, and removed at the
// end (any process still in it moved back to its parent first).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace mibz2::test {

namespace stdfs = std::filesystem;

class MemoryCgroup {
 public:
  // A new cgroup named `name` limited to `limit_bytes`, or null with *why_not saying why none can
  // be made here (no memory controller, or none this process may write to).
  static std::unique_ptr<MemoryCgroup> create(const std::string& name, uint64_t limit_bytes, std::string* why_not);
  ~MemoryCgroup();
  MemoryCgroup(const MemoryCgroup&) = delete;
  MemoryCgroup& operator=(const MemoryCgroup&) = delete;

  // Its cgroup.procs: a process joins by writing its pid ("0": the writer) there.
  stdfs::path procs() const { return dir_ / "cgroup.procs"; }
  const stdfs::path& dir() const { return dir_; }
  int version() const { return version_; }
  // Processes the kernel's OOM killer ended in it (nullopt where the kernel does not say).
  std::optional<uint64_t> oom_kills() const;
  // The most memory ever charged to it, page cache and kernel memory included (nullopt where the
  // kernel does not say: cgroup v2 before Linux 5.19).
  std::optional<uint64_t> peak_bytes() const;

 private:
  MemoryCgroup(stdfs::path dir, stdfs::path parent, int version)
      : dir_(std::move(dir)), parent_(std::move(parent)), version_(version) {}

  stdfs::path dir_;
  stdfs::path parent_;
  int version_;
};

// VmHWM of a running process (its peak resident memory) in bytes, or nullopt when it is gone.
std::optional<uint64_t> peak_resident_bytes(pid_t pid);

}  // namespace mibz2::test
