#include "io/download_bytes.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <string>

namespace mibz2::io {

DownloadBytes::DownloadBytes(const SourceBytes& from, int fd, size_t piece)
    : SourceBytes(from.size()), from_(from), fd_(fd), piece_(piece ? piece : 1) {}

base::Status DownloadBytes::run() {
  const uint64_t size = from_.size();
  std::unique_ptr<uint8_t[]> buf(new uint8_t[std::min<uint64_t>(piece_, size ? size : 1)]);
  for (uint64_t at = 0; at < size;) {
    {
      std::lock_guard lk(mu_);
      if (cancelled_) return base::Status::error(ECANCELED, "cancelled");
    }
    const size_t want = static_cast<size_t>(std::min<uint64_t>(piece_, size - at));
    SourceRead got = from_.read(at, want, buf.get());
    if (!got.failed() && got.count < want) got = SourceRead::failure(EIO, at + got.count, want - got.count);
    if (got.failed()) {
      stop(got);
      return base::Status::os_error(got.error, got.describe());
    }
    for (size_t written = 0; written < want;) {
      const ssize_t n = ::pwrite(fd_, buf.get() + written, want - written, static_cast<off_t>(at + written));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int e = n < 0 ? errno : EIO;
        stop(SourceRead::failure(e, at + written, want - written));
        return base::Status::os_error(e, "cannot write the file: " + errno_words(e));
      }
      written += static_cast<size_t>(n);
    }
    at += want;
    {
      std::lock_guard lk(mu_);
      front_ = at;
    }
    moved_.notify_all();
  }
  return base::Status();
}

void DownloadBytes::stop(SourceRead read) {
  {
    std::lock_guard lk(mu_);
    if (!failed_.failed()) failed_ = read;
  }
  moved_.notify_all();
}

void DownloadBytes::cancel() {
  {
    std::lock_guard lk(mu_);
    cancelled_ = true;
  }
  stop(SourceRead::failure(ECANCELED, 0, 0));
}

uint64_t DownloadBytes::done() const {
  std::lock_guard lk(mu_);
  return front_;
}

SourceRead DownloadBytes::failure() const {
  std::lock_guard lk(mu_);
  return failed_;
}

SourceRead DownloadBytes::read_at(uint64_t offset, size_t len, uint8_t* out) const {
  {
    std::unique_lock lk(mu_);
    moved_.wait(lk, [&] { return front_ >= offset + len || failed_.failed(); });
    if (front_ < offset + len) {
      // The copy stopped before these bytes: this read fails as the copy did (a changed source
      // stays a changed one).
      SourceRead why = failed_;
      why.at = offset;
      why.length = len;
      return why;
    }
  }
  // Bytes behind the front are in the file and never change again.
  return FdBytes(fd_, size()).read(offset, len, out);
}

}  // namespace mibz2::io
