#include "memory_cgroup.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace mibz2::test {
namespace {

const stdfs::path kV1Root = "/sys/fs/cgroup/memory";
const stdfs::path kV2Root = "/sys/fs/cgroup";

// Writes `value` to a control file; "" or why not.
std::string write_control(const stdfs::path& file, const std::string& value) {
  const int fd = open(file.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return file.string() + ": " + std::strerror(errno);
  const ssize_t n = write(fd, value.data(), value.size());
  const int err = errno;
  close(fd);
  if (n != static_cast<ssize_t>(value.size())) return "writing " + value + " to " + file.string() + ": " + std::strerror(err);
  return {};
}

std::string read_text(const stdfs::path& file) {
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The number after `key` on the line it starts, in a file of such lines (memory.events,
// memory.oom_control, /proc/PID/status).
std::optional<uint64_t> keyed_value(const stdfs::path& file, const std::string& key) {
  std::istringstream in(read_text(file));
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string k;
    uint64_t v;
    if (words >> k && k == key && words >> v) return v;
  }
  return std::nullopt;
}

// This process's cgroup path in a hierarchy: v1's line "N:memory:/path", or v2's "0::/path".
std::optional<std::string> own_cgroup(int version) {
  std::istringstream in(read_text("/proc/self/cgroup"));
  for (std::string line; std::getline(in, line);) {
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    if (version == 2 ? line.substr(0, a) == "0" && controllers.empty() : controllers == "memory")
      return line.substr(b + 1);
  }
  return std::nullopt;
}

bool has_word(const std::string& text, const std::string& word) {
  std::istringstream in(text);
  for (std::string w; in >> w;)
    if (w == word) return true;
  return false;
}

}  // namespace

std::unique_ptr<MemoryCgroup> MemoryCgroup::create(const std::string& name, uint64_t limit, std::string* why_not) {
  int version = 0;
  stdfs::path root;
  if (stdfs::exists(kV1Root / "memory.limit_in_bytes")) {
    version = 1;
    root = kV1Root;
  } else if (has_word(read_text(kV2Root / "cgroup.controllers"), "memory")) {
    version = 2;
    root = kV2Root;
  } else {
    *why_not = "no memory cgroup controller here (neither v1's " + kV1Root.string() + " nor memory in v2's " +
               (kV2Root / "cgroup.controllers").string() + ")";
    return nullptr;
  }
  // At the top of the hierarchy, or else under this process's own cgroup (a container may let
  // only its own subtree be written).
  std::vector<stdfs::path> parents{root};
  if (const auto own = own_cgroup(version); own && *own != "/") parents.push_back(root / own->substr(1));
  const std::string limit_file = version == 1 ? "memory.limit_in_bytes" : "memory.max";
  std::string tried;
  for (const stdfs::path& parent : parents) {
    if (version == 2 && !has_word(read_text(parent / "cgroup.subtree_control"), "memory")) {
      tried += "; " + parent.string() + ": the memory controller is not enabled for its children";
      continue;
    }
    const stdfs::path dir = parent / name;
    rmdir(dir.c_str());  // left by an earlier run that was killed
    if (mkdir(dir.c_str(), 0755) != 0) {
      tried += "; " + dir.string() + ": " + std::strerror(errno);
      continue;
    }
    std::unique_ptr<MemoryCgroup> cg(new MemoryCgroup(dir, parent, version));
    if (std::string err = write_control(dir / limit_file, std::to_string(limit)); !err.empty()) {
      tried += "; " + err;
      continue;  // cg removes the directory
    }
    // No swap: the limit is on memory, as the documented bound is (best effort: a kernel without
    // swap accounting has no such file, and a machine without swap needs none).
    if (version == 1) {
      write_control(dir / "memory.memsw.limit_in_bytes", std::to_string(limit));
      write_control(dir / "memory.swappiness", "0");
    } else {
      write_control(dir / "memory.swap.max", "0");
    }
    return cg;
  }
  *why_not = "cannot make a memory cgroup with a limit" + tried;
  return nullptr;
}

MemoryCgroup::~MemoryCgroup() {
  // A process still in it (a test that ended early) goes back to the parent, or rmdir fails.
  for (int attempt = 0; attempt < 50; ++attempt) {
    std::istringstream in(read_text(procs()));
    for (std::string pid; in >> pid;) write_control(parent_ / "cgroup.procs", pid);
    if (rmdir(dir_.c_str()) == 0 || errno == ENOENT) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::optional<uint64_t> MemoryCgroup::oom_kills() const {
  return version_ == 1 ? keyed_value(dir_ / "memory.oom_control", "oom_kill")
                       : keyed_value(dir_ / "memory.events", "oom_kill");
}

std::optional<uint64_t> MemoryCgroup::peak_bytes() const {
  const std::string text = read_text(dir_ / (version_ == 1 ? "memory.max_usage_in_bytes" : "memory.peak"));
  if (text.empty()) return std::nullopt;
  return std::stoull(text);
}

std::optional<uint64_t> peak_resident_bytes(pid_t pid) {
  const auto kib = keyed_value("/proc/" + std::to_string(pid) + "/status", "VmHWM:");
  if (!kib) return std::nullopt;
  return *kib << 10;
}

}  // namespace mibz2::test
