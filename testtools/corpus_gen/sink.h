// The document being written: output collected in a buffer, flushed to the file in large writes,
// with the count of bytes so far (documents must end at an exact size).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace mibz2::corpus {

// The generators append to `buf` and cut it back to a mark when an entity does not fit before the
// end, so it is flushed only between entities (maybe_flush), in writes of about kFlush bytes.
class Sink {
 public:
  explicit Sink(FILE* f) : f_(f) { buf.reserve(kFlush + (1 << 20)); }
  std::string buf;       // not yet written
  uint64_t flushed = 0;  // bytes written to the file so far
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

// Appends items while the document stays `reserve` bytes short of `size` (the room for the padded
// last item and the footer): add(buf, small) appends one item. An item that does not fit is cut
// back and small ones are asked for instead, 16 times before giving up, so that what is left for
// the padded last item stays short. False when writing failed.
template <class Add>
bool append_while_room(Sink& out, uint64_t size, uint64_t reserve, Add&& add) {
  bool small = false;
  uint32_t misses = 0;
  while (misses < 16) {
    const size_t mark = out.buf.size();
    add(out.buf, small);
    if (out.total() + reserve > size) {
      out.buf.resize(mark);
      small = true;
      ++misses;
      continue;
    }
    if (!out.maybe_flush()) return false;
  }
  return true;
}

}  // namespace mibz2::corpus
