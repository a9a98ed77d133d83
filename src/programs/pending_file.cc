#include "programs/pending_file.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

#include "io/source_bytes.h"

namespace mibz2::programs {
namespace {

base::Status os_failure(int e, const std::string& what) { return base::Status::os_error(e, what + ": " + io::errno_words(e)); }

// The temporary file a fatal signal removes before the process dies of it, when armed. Set only
// while no signal handler can run on it halfway (armed_ is cleared first, set last).
char removed_on_signal[4096];
volatile sig_atomic_t armed = 0;

extern "C" void remove_and_die(int sig) {
  if (armed) ::unlink(removed_on_signal);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void remove_on_signals(const std::string& temporary) {
  armed = 0;
  if (temporary.size() >= sizeof removed_on_signal) return;  // left to the destructor alone
  std::memcpy(removed_on_signal, temporary.c_str(), temporary.size() + 1);
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction now {};
    if (::sigaction(sig, nullptr, &now) != 0 || now.sa_handler != SIG_DFL) continue;  // ignored or handled
    struct sigaction act {};
    act.sa_handler = remove_and_die;
    sigemptyset(&act.sa_mask);
    ::sigaction(sig, &act, nullptr);
  }
  armed = 1;
}

std::string directory_of(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

}  // namespace

base::Result<PendingFile> PendingFile::create(const std::string& path) {
  const std::filesystem::path p(path);
  const std::string dir = directory_of(path);
  std::random_device random;
  static constexpr char kLetters[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string suffix;
    for (int i = 0; i < 6; ++i) suffix += kLetters[random() % (sizeof(kLetters) - 1)];
    const std::string temporary = dir + "/." + p.filename().string() + ".part-" + suffix;
    // 0666 less the umask, as a file cp or curl -o makes (mkstemp would make it 0600).
    io::UniqueFd fd(::open(temporary.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666));
    if (fd.valid()) {
      remove_on_signals(temporary);
      return PendingFile(path, temporary, std::move(fd));
    }
    if (errno != EEXIST) return os_failure(errno, "cannot create a file in " + dir);
  }
  return os_failure(EEXIST, "cannot create a file in " + dir);
}

PendingFile::~PendingFile() {
  if (committed_ || temporary_.empty()) return;
  armed = 0;
  ::unlink(temporary_.c_str());
}

base::Status PendingFile::sync() const {
  if (::fsync(fd_.get()) != 0) return os_failure(errno, "cannot write " + path_);
  return {};
}

base::Status PendingFile::commit(bool replace) {
  const unsigned flags = replace ? 0 : RENAME_NOREPLACE;
  int renamed = ::renameat2(AT_FDCWD, temporary_.c_str(), AT_FDCWD, path_.c_str(), flags);
  if (renamed != 0 && errno == EINVAL && !replace) {
    // A file system without RENAME_NOREPLACE (NFS, some FUSE ones): a hard link is made only
    // where there is no file either, and then the temporary name goes.
    renamed = ::link(temporary_.c_str(), path_.c_str());
    if (renamed == 0) ::unlink(temporary_.c_str());
  }
  if (renamed != 0) {
    const int e = errno;
    if (e == EEXIST) return base::Status::os_error(e, path_ + ": exists (--force replaces it)");
    return os_failure(e, "cannot rename the download to " + path_);
  }
  armed = 0;  // FILE now: no signal removes it
  committed_ = true;
  // The rename itself to disk: after a crash the directory holds the whole file or none.
  io::UniqueFd dir(::open(directory_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.valid()) ::fsync(dir.get());
  return {};
}

}  // namespace mibz2::programs
