#include "fs/open_handles.h"

namespace mibz2::fs {

void OpenHandles::close_all() {
  std::lock_guard lk(mu_);
  for (FileHandle* h : files_) delete h;
  for (DirHandle* h : dirs_) delete h;
  files_.clear();
  dirs_.clear();
}

void OpenHandles::track(FileHandle* h, bool open) {
  std::lock_guard lk(mu_);
  if (open) files_.insert(h);
  else files_.erase(h);
}

void OpenHandles::track(DirHandle* h, bool open) {
  std::lock_guard lk(mu_);
  if (open) dirs_.insert(h);
  else dirs_.erase(h);
}

}  // namespace mibz2::fs
