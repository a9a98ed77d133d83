// A file written under a temporary name in the directory of the path it is for, and put there
// under that path only when it is whole (rename, then the directory fsync'ed): whoever looks at the
// path sees no file or the whole one, never a part, also after a crash. Abandoned (the destructor,
// unless committed), the temporary file is removed; so it is when SIGINT, SIGTERM or SIGHUP ends
// the process meanwhile (a download stopped with ^C leaves nothing; a signal the process ignores,
// as under nohup, stays ignored). One pending file at a time has that care.
#pragma once

#include <string>
#include <utility>

#include "base/status.h"
#include "io/unique_fd.h"

namespace mibz2::programs {

class PendingFile {
 public:
  // Creates the temporary file (".NAME.part-XXXXXX" beside `path`, read-write, made exclusively
  // with mode 0666 less the umask, as a file the user's programs make), or says why not.
  static base::Result<PendingFile> create(const std::string& path);
  PendingFile(PendingFile&& other) noexcept
      : path_(std::move(other.path_)),
        temporary_(std::move(other.temporary_)),
        fd_(std::move(other.fd_)),
        committed_(std::exchange(other.committed_, true)) {}
  PendingFile& operator=(PendingFile&&) = delete;
  ~PendingFile();

  int fd() const { return fd_.get(); }
  const std::string& temporary() const { return temporary_; }
  // Its bytes to disk (fsync), so that a commit after it never shows a file a crash cut short.
  base::Status sync() const;
  // Renames it to the path (over a file there only if `replace`: otherwise EEXIST, even for one
  // that appeared since the check at the start) and fsyncs the directory. Once it succeeds the
  // file is no longer removed.
  base::Status commit(bool replace);

 private:
  PendingFile(std::string path, std::string temporary, io::UniqueFd fd)
      : path_(std::move(path)), temporary_(std::move(temporary)), fd_(std::move(fd)) {}

  std::string path_;
  std::string temporary_;
  io::UniqueFd fd_;
  bool committed_ = false;
};

}  // namespace mibz2::programs
