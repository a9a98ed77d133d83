#include "programs/pending_file.h"

#include <fcntl.h>
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
    if (fd.valid()) return PendingFile(path, temporary, std::move(fd));
    if (errno != EEXIST) return os_failure(errno, "cannot create a file in " + dir);
  }
  return os_failure(EEXIST, "cannot create a file in " + dir);
}

PendingFile::~PendingFile() {
  if (!committed_ && !temporary_.empty()) ::unlink(temporary_.c_str());
}

base::Status PendingFile::sync() const {
  if (::fsync(fd_.get()) != 0) return os_failure(errno, "cannot write " + path_);
  return {};
}

base::Status PendingFile::commit(bool replace) {
  const unsigned flags = replace ? 0 : RENAME_NOREPLACE;
  if (::renameat2(AT_FDCWD, temporary_.c_str(), AT_FDCWD, path_.c_str(), flags) != 0) {
    const int e = errno;
    if (e == EEXIST) return base::Status::os_error(e, path_ + ": exists (--force replaces it)");
    return os_failure(e, "cannot rename the download to " + path_);
  }
  committed_ = true;
  // The rename itself to disk: after a crash the directory holds the whole file or none.
  io::UniqueFd dir(::open(directory_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.valid()) ::fsync(dir.get());
  return {};
}

}  // namespace mibz2::programs
