// The document being written: output collected in a buffer, flushed to the file in large writes,
// with the count of bytes so far (documents must end at an exact size).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace mibz2::corpus {

class Sink {
 public:
  explicit Sink(FILE* f) : f_(f) { buf.reserve(kFlush + (1 << 20)); }
  std::string buf;
  uint64_t flushed = 0;
  uint64_t total() const { return flushed + buf.size(); }
  bool maybe_flush() {
    if (buf.size() < kFlush) return true;
    return flush();
  }
  bool flush() {
    if (!buf.empty() && std::fwrite(buf.data(), 1, buf.size(), f_) != buf.size()) return false;
    flushed += buf.size();
    buf.clear();
    return true;
  }

 private:
  static constexpr size_t kFlush = 8u << 20;
  FILE* f_;
};

}  // namespace mibz2::corpus
